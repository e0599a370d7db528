package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
)

func TestParseSpecArchiveID(t *testing.T) {
	ok := []struct {
		id   string
		want specArchiveRef
	}{
		{ArchiveID("demo-2026-01-02-001", 7, "node:task-1-2"), specArchiveRef{SpecID: "demo-2026-01-02-001", Version: 7, Kind: "node", Ref: "task-1-2"}},
		{ArchiveID("demo-2026-01-02-001", 12, "subtree:phase-3"), specArchiveRef{SpecID: "demo-2026-01-02-001", Version: 12, Kind: "subtree", Ref: "phase-3"}},
		{ArchiveID("demo-2026-01-02-001", 3, "journal:1-40"), specArchiveRef{SpecID: "demo-2026-01-02-001", Version: 3, Kind: "journal", Ref: "1-40", From: 1, To: 40}},
		{"spec:odd@id@9/node:spec-root", specArchiveRef{SpecID: "odd@id", Version: 9, Kind: "node", Ref: "spec-root"}},
		{"spec:s@1/journal:5-5", specArchiveRef{SpecID: "s", Version: 1, Kind: "journal", Ref: "5-5", From: 5, To: 5}},
		{"spec:s@1/journal:7", specArchiveRef{SpecID: "s", Version: 1, Kind: "journal", Ref: "7", From: 7, To: 7, Single: true}},
	}
	for _, tc := range ok {
		got, err := parseSpecArchiveID(tc.id)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.id, got, err, tc.want)
		}
	}
	for _, bad := range []string{
		"", "spec:", "node:x", "spec:s/node:x", "spec:@1/node:x", "spec:s@0/node:x", "spec:s@x/node:x",
		"spec:s@1", "spec:s@1/node", "spec:s@1/node:", "spec:s@1/leaf:x", "spec:s@1/journal:9-2",
		"spec:s@1/journal:x", "spec:s@1/journal:a-b", "spec:s@1/journal:-3", "spec:s@-1/node:x",
	} {
		if _, err := parseSpecArchiveID(bad); err == nil || core.AsError(err).Code != errcode.InvalidFormat {
			t.Errorf("%q: want INVALID_FORMAT, got %v", bad, err)
		}
	}
}

func TestDigestIDsOf(t *testing.T) {
	got := digestIDsOf(map[string]any{"digest_ids": []any{"a#00000000", 3, "", "a#00000000", "b#11111111"}})
	if strings.Join(got, ",") != "a#00000000,b#11111111" {
		t.Errorf("digestIDsOf: %v", got)
	}
	if digestIDsOf(map[string]any{"digest_ids": "a#00000000"}) != nil {
		t.Error("a non-list digest_ids reads as none")
	}
}

func TestCheckResearchID(t *testing.T) {
	for id, want := range map[string]bool{"https://x.org/doc": true, "paper.pdf": true, "  ": false, "a\x00b": false, "a\nb": false} {
		if got := checkResearchID("source_id", id) == nil; got != want {
			t.Errorf("%q: ok=%v, want %v", id, got, want)
		}
	}
}

func TestArchiveWindow(t *testing.T) {
	text := strings.Repeat("é", 3000) + strings.Repeat("a", 3000) // 6000 chars, 9000 bytes
	win := func(args map[string]any, budget int) (ArchiveWindow, []core.MetaOption, error) {
		a := Args{}
		for k, v := range args {
			a[k] = v
		}
		return archiveWindow(&Request{Args: a}, text, budget)
	}
	// Fits: whole text, not truncated, no meta.
	d, meta, err := win(nil, 10_000)
	if err != nil || d.Truncated || d.ReturnedChars != 6000 || len(meta) != 0 || d.Content != text || d.NextOffset != nil {
		t.Fatalf("whole: %v %v %v", d.ReturnedChars, meta, err)
	}
	// The budget cuts by bytes (1024 bytes minimum window): 512 two-byte chars.
	d, meta, _ = win(nil, 1)
	if d.ReturnedChars != 512 || d.NextOffset == nil || *d.NextOffset != 512 || !d.Truncated || len(meta) != 2 {
		t.Fatalf("budget cut: %v %v", d.ReturnedChars, d.NextOffset)
	}
	// max_chars cuts without a fidelity warning.
	d, meta, _ = win(map[string]any{"offset": float64(2990), "max_chars": float64(20)}, 10_000)
	if d.Content != strings.Repeat("é", 10)+strings.Repeat("a", 10) || d.NextOffset == nil || *d.NextOffset != 3010 || len(meta) != 0 {
		t.Fatalf("max_chars: %q %v %v", d.Content, d.NextOffset, meta)
	}
	// The last window.
	d, _, _ = win(map[string]any{"offset": float64(6000)}, 10_000)
	if d.Content != "" || d.NextOffset != nil || d.Truncated {
		t.Fatalf("end: %+v", d)
	}
	if _, _, err := win(map[string]any{"offset": float64(6001)}, 10_000); err == nil || core.AsError(err).Code != errcode.InvalidFormat {
		t.Fatalf("offset past the end: %v", err)
	}
}

// storeResearch is a real store (storetest.Open: a bbolt file in
// t.TempDir()) that also records the cutoffs of ArchiveSweep; every call
// goes through to the store.
type storeResearch struct {
	*store.Store
	mu     sync.Mutex
	sweeps []time.Time
}

func (a *storeResearch) ArchiveSweep(ctx context.Context, cutoff time.Time) (int, error) {
	a.mu.Lock()
	a.sweeps = append(a.sweeps, cutoff)
	a.mu.Unlock()
	return a.Store.ArchiveSweep(ctx, cutoff)
}

// researchDeps is testDeps with a real research store and a clock the test
// moves.
func researchDeps(t *testing.T, now *time.Time) (*Deps, *storeResearch) {
	st := &storeResearch{Store: storetest.Open(t)}
	d := testDeps()
	d.Research = st
	d.Runtime.Now = func() time.Time { return *now }
	return d, st
}

func TestArchiveRetentionSweepsAtMostHourly(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d, st := researchDeps(t, &now)
	d.ArchiveRetention = 24 * time.Hour
	tool := researchTool(d)
	put := func(content string) map[string]any {
		t.Helper()
		env := dispatch(t, tool, map[string]any{"action": "archive-put", "content": content})
		if env["success"] != true {
			t.Fatalf("archive-put: %v", env)
		}
		return env["data"].(map[string]any)
	}
	first := put("old note")
	if first["expires_at"] != "2026-03-02T12:00:00Z" || len(st.sweeps) != 1 {
		t.Fatalf("first put: %v, sweeps %v", first, st.sweeps)
	}
	now = now.Add(30 * time.Minute)
	put("second note")
	if len(st.sweeps) != 1 {
		t.Fatalf("swept again within the hour: %v", st.sweeps)
	}
	now = now.Add(25 * time.Hour)
	third := put("third note")
	if len(st.sweeps) != 2 || third["expired_removed"] != float64(2) {
		t.Fatalf("the day-old notes should be swept: %v, sweeps %v", third, st.sweeps)
	}
	// Retention 0 keeps everything.
	d.ArchiveRetention = 0
	now = now.Add(48 * time.Hour)
	if got := put("fourth"); got["expires_at"] != nil || len(st.sweeps) != 2 {
		t.Fatalf("retention 0: %v, sweeps %v", got, st.sweeps)
	}
}

func TestDigestSummariesForResearchNodes(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d, _ := researchDeps(t, &now)
	tool := researchTool(d)
	text := "Locks serialise writers. Readers see snapshots. Compaction needs the write lock. Cursors seek fast."
	p, _, err := research.CreateDigest(research.CreateInput{Text: text, Query: "write lock", MaxSnippets: 5})
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	env := dispatch(t, tool, map[string]any{"action": "digest-put", "source_id": "doc", "payload": payload, "text": text})
	if env["success"] != true {
		t.Fatalf("digest-put: %v", env)
	}
	id := env["data"].(map[string]any)["digest_id"].(string)
	got := d.digestSummaries(context.Background(), []string{id, "doc#00000000", "garbage"})
	if len(got) != 3 || !got[0].Found || got[0].Summary != p.Summary || got[1].Found || got[1].LinkedDigestContent != nil || got[2].Error == "" {
		t.Fatalf("digestSummaries: %+v", got)
	}
	if n := len(got[0].EvidenceSnippets); n == 0 || n > maxLinkedSnippets {
		t.Fatalf("snippets: %d", n)
	}
	// A found digest shows every content field, a missing one none.
	var shown []map[string]any
	if b, err := json.Marshal(got); err != nil || json.Unmarshal(b, &shown) != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"summary", "key_points", "evidence_snippets", "digest_chars", "source_text_hash", "stored_at"} {
		if _, ok := shown[0][k]; !ok {
			t.Errorf("found digest lacks %s: %v", k, shown[0])
		}
		if _, ok := shown[1][k]; ok {
			t.Errorf("missing digest shows %s: %v", k, shown[1])
		}
	}
	if d.Research = nil; d.digestSummaries(context.Background(), []string{id})[0].Found {
		t.Fatal("without a store nothing is found")
	}
}

func TestResearchWithoutStoreIsUnavailable(t *testing.T) {
	d := testDeps()
	tool := researchTool(d)
	env := dispatch(t, tool, map[string]any{"action": "digest-list"})
	if code(env) != errcode.Unavailable {
		t.Fatalf("digest-list without a store: %v", env)
	}
	// Validation and creation need no store.
	env = dispatch(t, tool, map[string]any{"action": "digest-create", "text": "One sentence here. Another one there.", "query": "sentence"})
	if env["success"] != true {
		t.Fatalf("digest-create: %v", env)
	}
	payload := env["data"].(map[string]any)["payload"].(map[string]any)
	env = dispatch(t, tool, map[string]any{"action": "digest-validate", "payload": payload})
	if d := env["data"].(map[string]any); env["success"] != true || d["valid"] != true || d["text_checked"] != false || d["source"] != "none" {
		t.Fatalf("digest-validate without source: %v", env)
	}
}

func TestResearchDescriptionLint(t *testing.T) {
	d := researchTool(testDeps()).Description
	if !strings.HasPrefix(d, "Use this when") || !strings.Contains(d, "Use spec instead") || !strings.Contains(d, "→") || len(d) > 1200 {
		t.Errorf("research description breaks contract §8: %q", d)
	}
}

// TestResearchAnswersHaveSchemas: every research action declares its typed
// answer, and server schema can publish it (a type jsonschema-go cannot
// describe would silently drop answer_schema).
func TestResearchAnswersHaveSchemas(t *testing.T) {
	for _, a := range researchTool(testDeps()).Actions {
		if a.Answer == nil {
			t.Errorf("%s: no Answer", a.Name)
			continue
		}
		s := answerSchema(a.Answer)
		if s == nil || len(s.Properties) == 0 {
			t.Errorf("%s: no answer schema for %T", a.Name, a.Answer)
			continue
		}
		// A payload is a JSON object however it is held (json.RawMessage
		// must not read as an array of bytes).
		if p := s.Properties["payload"]; p != nil && (p.Type == "array" || slices.Contains(p.Types, "array")) {
			t.Errorf("%s: payload schema says array: %+v", a.Name, p)
		}
	}
}
