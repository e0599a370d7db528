package research_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// TestSpecItemsGet serves spec archive ids from a real store: a spec of two
// phases of three tasks and a journal of three entries.
func TestSpecItemsGet(t *testing.T) {
	st := specstore.New(storetest.Open(t), nil)
	ctx := context.Background()
	clock := core.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	sp, err := specs.NewSpec(specs.NewSpecInput{Name: "archive items", Mission: "m"}, clock, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	var phase specs.PhaseResult
	for p := range 2 {
		in := make([]specs.TaskInput, 3)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("Task %d.%d", p, i), TaskCategory: "implementation"}
		}
		if phase, err = specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("Phase %d", p), VerifyScaffold: true}, in); err != nil {
			t.Fatal(err)
		}
	}
	journal := []specs.JournalEntry{
		{Seq: 1, Timestamp: "2026-01-01T00:00:00Z", EntryType: "note", Title: "one"},
		{Seq: 2, Timestamp: "2026-01-01T00:00:00Z", EntryType: "note", Title: "two"},
		{Seq: 3, Timestamp: "2026-01-01T00:00:00Z", EntryType: "note", Title: "three"},
	}
	if err := st.ImportSpec(ctx, sp, journal, false); err != nil {
		t.Fatal(err)
	}
	id, v := sp.Header.SpecID, sp.Header.Version
	if v < 1 {
		v = 1
	}
	hash := func(x any) (string, error) {
		b, err := json.Marshal(x)
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:]), err
	}
	items := research.SpecItems{Specs: st, Journal: st, Hash: hash, Tokens: func(x any) int { b, _ := json.Marshal(x); return len(b) / 4 },
		ArchiveID: func(specID string, version int64, item string) string {
			return fmt.Sprintf("spec:%s@%d/%s", specID, version, item)
		}}
	at := func(item string) string { return fmt.Sprintf("spec:%s@%d/%s", id, v, item) }
	for _, tc := range []struct {
		name    string
		items   research.SpecItems
		id      string
		budget  int
		code    string
		nodes   int // subtree: nodes in the content
		entries int // journal range: entries in the content
		parts   int
	}{
		{"a node", items, at("node:" + phase.PhaseID), 10_000, "", 0, 0, 0},
		{"a subtree: the phase, its tasks and verify nodes", items, at("subtree:" + phase.PhaseID), 10_000, "", 6, 0, 0},
		{"a subtree over the budget is its parts: the node, each child's subtree", items, at("subtree:" + phase.PhaseID), 20, "", 0, 0, 6},
		{"a journal range", items, at("journal:1-3"), 10_000, "", 0, 3, 0},
		{"one journal entry", items, at("journal:2"), 10_000, "", 0, 0, 0},
		{"an absent node", items, at("node:task-9-9"), 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"an unknown spec", items, "spec:nope@1/node:x", 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"a version never written", items, fmt.Sprintf("spec:%s@%d/node:%s", id, v+5, phase.PhaseID), 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"an empty journal range", items, at("journal:7-9"), 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"a journal range of an unknown spec", items, "spec:nope@1/journal:1-3", 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"one journal entry of an unknown spec", items, "spec:nope@1/journal:2", 10_000, errcode.ArchiveNotFound, 0, 0, 0},
		{"not an archive id", items, "spec:x", 10_000, errcode.InvalidFormat, 0, 0, 0},
		{"no spec store", research.SpecItems{Journal: st, Hash: hash}, at("node:x"), 10_000, errcode.Unavailable, 0, 0, 0},
		{"no journal", research.SpecItems{Specs: st, Hash: hash}, at("journal:1-3"), 10_000, errcode.Unavailable, 0, 0, 0},
	} {
		read, err := tc.items.Get(ctx, tc.id, "", tc.budget, 0)
		if core.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.code)
			continue
		}
		var re *core.Error
		if tc.code == errcode.ArchiveNotFound && (!errors.As(err, &re) || re.Recovery != nil || re.Details["field"] != "archive_id") {
			t.Errorf("%s: want details.field archive_id and no next call (the domain names no tools): %+v", tc.name, err)
		}
		if err != nil {
			continue
		}
		r := read.Result
		want, _ := hash(r.Content)
		if tc.parts == 0 && (r.Hash != want || r.Source != "spec_store" || r.HashChecked) {
			t.Errorf("%s: %+v", tc.name, r)
		}
		if n, ok := r.Content.(map[string]*specs.Node); tc.nodes > 0 && (!ok || len(n) != tc.nodes) {
			t.Errorf("%s: subtree content %T %d, want %d nodes", tc.name, r.Content, len(n), tc.nodes)
		}
		if e, ok := r.Content.([]specs.JournalEntry); tc.entries > 0 && (!ok || len(e) != tc.entries) {
			t.Errorf("%s: journal content %T, want %d entries", tc.name, r.Content, tc.entries)
		}
		if len(read.Parts) != tc.parts || len(r.Parts) != tc.parts || (tc.parts > 0 && r.Content != nil) {
			t.Errorf("%s: parts %v, content %v; want %d parts", tc.name, r.Parts, r.Content != nil, tc.parts)
		}
	}
	// expected_hash: verified only when it matches.
	node := at("node:" + phase.PhaseID)
	read, _ := items.Get(ctx, node, "", 10_000, 0)
	for _, expected := range []string{read.Result.Hash, "sha256:0"} {
		r, err := items.Get(ctx, node, expected, 10_000, 0)
		if err != nil || !r.Result.HashChecked || r.Result.Verified != (expected == read.Result.Hash) {
			t.Errorf("expected %s: %+v, %v", expected, r.Result, err)
		}
	}
}
