package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs"
)

// The service over a real store (a bbolt file in t.TempDir()).

const (
	svcText  = "Locks serialise writers. Readers see snapshots. Compaction needs the write lock. Cursors seek fast."
	svcQuery = "write lock"
)

func newService(t *testing.T, now *time.Time) research.Service {
	return research.Service{Store: researchstore.New(storetest.Open(t), nil), Clock: func() time.Time { return *now }, MaxChars: 1 << 20,
		Retention: 24 * time.Hour, Sweeper: &research.Sweeper{}}
}

// payloadOf is the digest of text as a client sends it (a decoded object).
func payloadOf(t *testing.T, text string) map[string]any {
	t.Helper()
	p, _, err := research.CreateDigest(research.CreateInput{Text: text, Query: svcQuery})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(s string) research.SourceArgs { return research.SourceArgs{Given: []string{"text"}, Text: s} }

func TestServiceValidationSource(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc := newService(t, &now)
	ctx := context.Background()
	payload := payloadOf(t, svcText)
	if _, err := svc.Put(ctx, research.PutArgs{SourceID: "doc", Payload: payload, Source: text(svcText)}); err != nil {
		t.Fatal(err)
	}
	other := payloadOf(t, "Another text entirely. With its own sentences about the write lock.")
	for _, tc := range []struct {
		name     string
		args     research.ValidateArgs
		source   string
		valid    bool
		code     string
		noStore  bool
		checked  bool
		verified int
	}{
		{"the call's text", research.ValidateArgs{Payload: payload, Source: text(svcText)}, "text", true, "", false, true, 0},
		{"archived under source_id", research.ValidateArgs{Payload: payload, SourceID: "doc"}, "archive", true, "", false, true, 0},
		{"source_id unknown, payload hash archived", research.ValidateArgs{Payload: payload, SourceID: "elsewhere"}, "archive", true, "", false, true, 0},
		{"source_id unknown, nothing archived", research.ValidateArgs{Payload: other, SourceID: "elsewhere"}, "", false, errcode.ArchiveNotFound, false, false, 0},
		{"the payload's hash archived", research.ValidateArgs{Payload: payload}, "archive", true, "", false, true, 0},
		{"no source at all", research.ValidateArgs{Payload: other}, "none", true, "", false, false, 0},
		{"no store, no source", research.ValidateArgs{Payload: payload}, "none", true, "", true, false, 0},
		{"source_id without a store", research.ValidateArgs{Payload: payload, SourceID: "doc"}, "", false, errcode.Unavailable, true, false, 0},
		{"text and source_id", research.ValidateArgs{Payload: payload, Source: text(svcText), SourceID: "doc"}, "", false, errcode.InvalidFormat, false, false, 0},
		{"the wrong text", research.ValidateArgs{Payload: payload, Source: text("Not the source.")}, "text", false, "", false, true, 0},
	} {
		s := svc
		if tc.noStore {
			s.Store = nil
		}
		res, err := s.Validate(ctx, tc.args)
		if core.CodeOf(err) != tc.code {
			t.Errorf("%s: error %v, want code %q", tc.name, err, tc.code)
			continue
		}
		if err != nil {
			continue
		}
		if res.Source != tc.source || res.Valid != tc.valid || res.TextChecked != tc.checked || (res.CanonicalChars != nil) != (tc.source != "none") {
			t.Errorf("%s: source %q valid %v checked %v; want %q %v %v", tc.name, res.Source, res.Valid, res.TextChecked, tc.source, tc.valid, tc.checked)
		}
	}
}

func TestServiceDigestLifecycle(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc := newService(t, &now)
	ctx := context.Background()
	payload := payloadOf(t, svcText)
	bad := payloadOf(t, svcText)
	bad["summary"] = "not the digest it counts"
	for _, tc := range []struct {
		name     string
		args     research.PutArgs
		code     string
		replaced bool
		archived bool
	}{
		{"blank source_id", research.PutArgs{SourceID: " ", Payload: payload}, errcode.InvalidFormat, false, false},
		{"invalid payload", research.PutArgs{SourceID: "doc", Payload: bad, Source: text(svcText)}, errcode.Validation, false, false},
		{"locators against the wrong text", research.PutArgs{SourceID: "doc", Payload: payload, Source: text("Not it.")}, errcode.Validation, false, false},
		{"first put archives the source", research.PutArgs{SourceID: "doc", Payload: payload, Source: text(svcText)}, "", false, true},
		{"a put without source finds it archived", research.PutArgs{SourceID: "doc", Payload: payload}, "", true, true},
	} {
		res, err := svc.Put(ctx, tc.args)
		if core.CodeOf(err) != tc.code || (err == nil && (res.Replaced != tc.replaced || res.SourceArchived != tc.archived || !res.TextChecked)) {
			t.Errorf("%s: %+v, %v; want code %q replaced %v archived %v", tc.name, res, err, tc.code, tc.replaced, tc.archived)
		}
	}
	qh := research.QueryHash(svcQuery)
	got, err := svc.Get(ctx, "doc", qh)
	if err != nil || !got.SourceArchived || got.DigestID != "doc#"+qh || !strings.Contains(string(got.Payload), `"query_hash":"`+qh+`"`) {
		t.Fatalf("get: %+v, %v", got, err)
	}
	list, next, err := svc.List(ctx, "", "", 10)
	if err != nil || list.Count != 1 || next != "" || list.Digests[0].Summary != payload["summary"] {
		t.Fatalf("list: %+v %q %v", list, next, err)
	}
	linked := svc.LinkedDigests(ctx, []string{"doc#" + qh, "doc#00000000", "garbage"})
	if len(linked) != 3 || !linked[0].Found || linked[1].Found || !strings.HasPrefix(linked[1].Error, errcode.DigestNotFound) || linked[2].Error == "" {
		t.Fatalf("linked: %+v", linked)
	}
	if _, err := svc.Delete(ctx, "doc", qh); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, "doc", qh); core.CodeOf(err) != errcode.DigestNotFound {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestServiceArchive(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc := newService(t, &now)
	ctx := context.Background()
	put, err := svc.ArchivePut(ctx, research.ArchivePutArgs{Content: "a note", ContentID: "n1", HasContentID: true, ItemType: "note"})
	if err != nil || !put.Created || put.ExpiresAt == nil || *put.ExpiresAt != "2026-03-02T12:00:00Z" {
		t.Fatalf("put: %+v, %v", put, err)
	}
	for _, tc := range []struct {
		name     string
		args     research.ArchiveGetArgs
		code     string
		verified bool
	}{
		{"by content id", research.ArchiveGetArgs{Given: []string{"content_id"}, ContentID: "n1"}, "", true},
		{"by hash", research.ArchiveGetArgs{Given: []string{"hash"}, Hash: put.Hash, ExpectedHash: put.Hash}, "", true},
		{"archive_id reads as a content id", research.ArchiveGetArgs{Given: []string{"archive_id"}, ArchiveID: "n1"}, "", true},
		{"another expected hash", research.ArchiveGetArgs{Given: []string{"content_id"}, ContentID: "n1", ExpectedHash: "sha256:" + strings.Repeat("0", 64)}, "", false},
		{"unknown", research.ArchiveGetArgs{Given: []string{"content_id"}, ContentID: "n2"}, errcode.ArchiveNotFound, false},
		{"none given", research.ArchiveGetArgs{}, errcode.MissingRequired, false},
		{"two given", research.ArchiveGetArgs{Given: []string{"hash", "content_id"}}, errcode.InvalidFormat, false},
	} {
		c, err := svc.ArchiveGet(ctx, tc.args)
		if core.CodeOf(err) != tc.code || (err == nil && (c.Text != "a note" || c.Verified != tc.verified || c.Hash != put.Hash)) {
			t.Errorf("%s: %+v, %v; want code %q verified %v", tc.name, c, err, tc.code, tc.verified)
		}
		var re *core.Error
		if tc.code == errcode.ArchiveNotFound && (!errors.As(err, &re) || re.Recovery != nil || re.Remediation == "" ||
			re.Details["field"] != "content_id" || re.Details["received"] != "n2") {
			t.Errorf("%s: want the store's details, a remediation and no next call (the domain names no tools), got %+v", tc.name, err)
		}
	}
}

func TestSpecItemsSplit(t *testing.T) {
	hash := func(v any) (string, error) { b, err := json.Marshal(v); return string(b[:min(len(b), 12)]), err }
	items := research.SpecItems{Hash: hash, Tokens: func(v any) int { b, _ := json.Marshal(v); return len(b) / 4 },
		ArchiveID: func(specID string, version int64, item string) string { return specID + "/" + item }}
	tree := map[string]*specs.Node{
		"p": {ID: "p", Children: specs.ChildListOf([]string{"a", "b", "gone"})},
		"a": {ID: "a", Children: specs.ChildListOf([]string{"a1"})}, "a1": {ID: "a1"}, "b": {ID: "b"},
	}
	var journal []specs.JournalEntry
	for i := range 6 {
		journal = append(journal, specs.JournalEntry{Seq: uint64(i + 1), Title: strings.Repeat("x", 40)})
	}
	entry := items.Tokens(journal[0]) // a budget of 5 entries takes 2 per part (half the budget)
	for _, tc := range []struct {
		name    string
		ref     research.SpecRef
		content any
		budget  int
		want    string
	}{
		{"subtree: root node and each present child's subtree", research.SpecRef{SpecID: "s", Kind: "subtree", Ref: "p"}, tree, 10, "s/node:p s/subtree:a s/subtree:b"},
		{"journal: ranges of at most half the budget", research.SpecRef{SpecID: "s", Kind: "journal"}, journal, 5 * entry, "s/journal:1-2 s/journal:3-4 s/journal:5-6"},
		{"one entry does not split", research.SpecRef{SpecID: "s", Kind: "journal"}, journal[:1], 5 * entry, ""},
		{"a node does not split", research.SpecRef{SpecID: "s", Kind: "node", Ref: "p"}, tree["p"], 10, ""},
	} {
		parts, err := items.SplitItem(tc.ref, tc.content, tc.budget)
		var ids []string
		for id := range parts {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if err != nil || strings.Join(ids, " ") != tc.want {
			t.Errorf("%s: %v, %v; want %q", tc.name, ids, err, tc.want)
		}
	}
}

func TestServiceCreate(t *testing.T) {
	svc := research.Service{MaxChars: 1 << 20}
	for _, tc := range []struct {
		name   string
		args   research.CreateArgs
		code   string
		paged  bool
		source string
	}{
		{"text", research.CreateArgs{Source: text(svcText), Query: svcQuery}, "", false, ""},
		{"pages, named", research.CreateArgs{Source: research.SourceArgs{Given: []string{"pages"}, Pages: []string{"One page here.", "Two pages there."}},
			Query: "page", SourceID: "book", HasSourceID: true}, "", true, "book"},
		{"no source", research.CreateArgs{Query: svcQuery}, errcode.MissingRequired, false, ""},
		{"blank source_id", research.CreateArgs{Source: text(svcText), SourceID: "", HasSourceID: true}, errcode.InvalidFormat, false, ""},
		{"too many snippets", research.CreateArgs{Source: text(svcText), Query: svcQuery, MaxSnippets: 11}, errcode.InvalidFormat, false, ""},
	} {
		res, err := svc.Create(context.Background(), tc.args)
		if core.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.code)
			continue
		}
		if err != nil {
			continue
		}
		rep := research.Validate(res.Payload, research.ValidateOptions{})
		if !rep.Valid || res.Paged != tc.paged || res.QueryTerms == nil || res.QueryHash != research.QueryHash(tc.args.Query) ||
			(tc.source != "" && res.SourceID != tc.source) || (tc.paged && res.PageCount != 2) {
			t.Errorf("%s: %+v (valid %v)", tc.name, res, rep.Valid)
		}
	}
}

// TestServiceSweepsAtMostHourly: a write to the archive sweeps it at most
// once per research.SweepEvery, removing what is older than the retention.
func TestServiceSweepsAtMostHourly(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc := newService(t, &now)
	svc.Retention = 10 * time.Minute
	for _, tc := range []struct {
		name    string
		advance time.Duration
		removed int
	}{
		{"first put sweeps (nothing old)", 0, 0},
		{"within the hour: no sweep, though the first note is old", 30 * time.Minute, 0},
		{"past the hour: both old notes go", 31 * time.Minute, 2},
		{"right after: no sweep", 20 * time.Minute, 0},
	} {
		now = now.Add(tc.advance)
		res, err := svc.ArchivePut(context.Background(), research.ArchivePutArgs{Content: tc.name})
		if err != nil || res.ExpiredRemoved != tc.removed {
			t.Errorf("%s: removed %d, %v; want %d", tc.name, res.ExpiredRemoved, err, tc.removed)
		}
	}
}
