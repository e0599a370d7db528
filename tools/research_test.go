package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
)

// storeResearch is a real store (storetest.Open: a bbolt file in
// t.TempDir()) that also records the cutoffs of ArchiveSweep; every call
// goes through to the store.
type storeResearch struct {
	ResearchStore
	mu     sync.Mutex
	sweeps []time.Time
}

func (a *storeResearch) ArchiveSweep(ctx context.Context, cutoff time.Time) (int, error) {
	a.mu.Lock()
	a.sweeps = append(a.sweeps, cutoff)
	a.mu.Unlock()
	return a.ResearchStore.ArchiveSweep(ctx, cutoff)
}

// researchDeps is testDeps with a real research store and a clock the test
// moves.
func researchDeps(t *testing.T, now *time.Time) (*Deps, *storeResearch) {
	d := testDeps()
	d.OverStore(storetest.Open(t))
	st := &storeResearch{ResearchStore: d.Research}
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
	// Long enough to compress (a shorter source keeps its text as the
	// summary, with no snippets).
	text := "Locks serialise writers. Readers see snapshots. Compaction needs the write lock. Cursors seek fast." + strings.Repeat(" Pages stay on disk until freed.", 80)
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
	if n := len(got[0].EvidenceSnippets); n == 0 || n > research.MaxLinkedSnippets {
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
		t.Errorf("research description breaks the description rules (Use this when, Use spec instead, a composition, at most 1200 bytes): %q", d)
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
		s := mcptool.AnswerSchema(a.Answer)
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
