package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs/specstore"
)

// The token budget applies to every answer, tool or resource, on the whole
// envelope (README "Big specs and big answers"). Expected archive hashes are
// computed here with this file's own canonical JSON, not the server's.

// callSized is call that also returns the size of the answer as sent
// (content[0].text, the compact envelope).
func callSized(t testing.TB, c *client.Client, tool string, args map[string]any) (map[string]any, int) {
	t.Helper()
	res := callRaw(t, c, tool, args)
	return envelopeOf(t, res), len(res.Content[0].(mcp.TextContent).Text)
}

// pageThrough hands each page of a listing to each: first, then every page
// its cursor leads to (tool called with args plus the cursor). Every page
// must succeed and fit budget tokens; a listing whose cursor has not ended
// after maxPages further pages fails the test.
func pageThrough(t testing.TB, c *client.Client, first map[string]any, tool string, args map[string]any, budget, maxPages int, each func(page map[string]any)) {
	t.Helper()
	page := first
	for pages := 0; ; pages++ {
		each(page)
		cur := page["meta"].(map[string]any)["pagination"].(map[string]any)["cursor"]
		if cur == nil {
			return
		}
		if pages >= maxPages {
			t.Fatalf("%s %v: paging does not end", tool, args["action"])
		}
		next := maps.Clone(args)
		next["cursor"] = cur
		var n int
		page, n = callSized(t, c, tool, next)
		if page["success"] != true || n > budget*4 {
			t.Fatalf("%s %v page %d (%d bytes, budget %d tokens): %v", tool, args["action"], pages+1, n, budget, page["data"])
		}
	}
}

// canonicalJSON is RFC 8785 for the values these tests hash (ASCII strings,
// integers, objects, arrays): keys sorted, no whitespace, no HTML escaping.
func canonicalJSON(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			buf.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					buf.WriteByte(',')
				}
				walk(k)
				buf.WriteByte(':')
				walk(x[k])
			}
			buf.WriteByte('}')
		case []any:
			buf.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					buf.WriteByte(',')
				}
				walk(e)
			}
			buf.WriteByte(']')
		case float64:
			if x != float64(int64(x)) {
				t.Fatalf("canonicalJSON: non-integer %v", x)
			}
			fmt.Fprintf(&buf, "%d", int64(x))
		default:
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(x); err != nil {
				t.Fatal(err)
			}
			buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
		}
	}
	walk(v)
	return buf.Bytes()
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// truncation checks a degraded answer's report and returns its meta.
func truncation(t testing.TB, env map[string]any, fidelity string) (meta map[string]any, detail map[string]any) {
	t.Helper()
	meta = env["meta"].(map[string]any)
	if meta["content_fidelity"] != fidelity || meta["content_fidelity_schema_version"] != "1.0" {
		t.Fatalf("content_fidelity %v, want %s: %v", meta["content_fidelity"], fidelity, meta)
	}
	if ids, _ := meta["dropped_content_ids"].([]any); len(ids) == 0 {
		t.Fatalf("no dropped_content_ids: %v", meta)
	}
	for _, w := range meta["warning_details"].([]any) {
		w := w.(map[string]any)
		if w["code"] != "CONTENT_TRUNCATED" {
			continue
		}
		ctx := w["context"].(map[string]any)
		for _, k := range []string{"dropped_count", "total_count", "reason"} {
			if ctx[k] == nil {
				t.Fatalf("CONTENT_TRUNCATED without %s: %v", k, w)
			}
		}
		return meta, ctx
	}
	t.Fatalf("no CONTENT_TRUNCATED warning: %v", meta)
	return nil, nil
}

// TestBudgetJournalList: 30 entries of 10,000 characters (about 300 KB)
// under the default budget: one page that fits, partial, with a cursor that
// reaches every entry and archive hashes that research archive-get
// verifies.
func TestBudgetJournalList(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	specID := data(call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "journal budget"}))["spec_id"].(string)
	for i := 0; i < 30; i++ {
		content := strings.Repeat(fmt.Sprintf("entry %02d says why. ", i), 600)[:10_000]
		if env := call(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Entry %d", i), "content": content}); env["success"] != true {
			t.Fatalf("journal add: %v", env)
		}
	}
	env, size := callSized(t, c, "journal", map[string]any{"action": "list", "spec_id": specID})
	t.Logf("journal list: %d bytes, %d entries kept", size, len(data(env)["entries"].([]any)))
	if size > core.DefaultTokenBudget*4 {
		t.Fatalf("journal list answered %d bytes, over the %d-token budget", size, core.DefaultTokenBudget)
	}
	meta, ctx := truncation(t, env, "partial")
	kept := data(env)["entries"].([]any)
	if int(ctx["dropped_count"].(float64))+len(kept) != int(ctx["total_count"].(float64)) || len(kept) == 0 {
		t.Fatalf("counts: kept %d, context %v", len(kept), ctx)
	}
	if int(data(env)["count"].(float64)) != len(kept) {
		t.Fatalf("count %v, entries %d", data(env)["count"], len(kept))
	}
	pg := meta["pagination"].(map[string]any)
	if pg["has_more"] != true || pg["cursor"] == nil {
		t.Fatalf("no cursor to the rest: %v", pg)
	}
	// The cursor reaches every entry, each once.
	all := map[float64]map[string]any{}
	pageThrough(t, c, env, "journal", map[string]any{"action": "list", "spec_id": specID}, core.DefaultTokenBudget, 40, func(page map[string]any) {
		for _, e := range data(page)["entries"].([]any) {
			e := e.(map[string]any)
			seq := e["seq"].(float64)
			if all[seq] != nil {
				t.Fatalf("entry %v twice", seq)
			}
			all[seq] = e
		}
	})
	if len(all) != 31 { // 30 entries and the spec's creation
		t.Fatalf("paging reached %d entries, want 31", len(all))
	}
	hashes := meta["content_archive_hashes"].(map[string]any)
	ids := meta["dropped_content_ids"].([]any)
	if len(hashes) != len(ids) {
		t.Fatalf("%d archive hashes for %d dropped ids", len(hashes), len(ids))
	}
	prefix := "spec:" + specID + "@"
	for _, id := range ids {
		var seq float64
		if _, err := fmt.Sscanf(id.(string), "journal:%g", &seq); err != nil || all[seq] == nil {
			t.Fatalf("dropped id %v", id)
		}
		archiveID := ""
		for aid := range hashes {
			if strings.HasPrefix(aid, prefix) && strings.HasSuffix(aid, "/"+id.(string)) {
				archiveID = aid
			}
		}
		want := sha256Of(canonicalJSON(t, all[seq]))
		if hashes[archiveID] != want {
			t.Fatalf("%s: hash %v, want %s", archiveID, hashes[archiveID], want)
		}
		got := data(call(t, c, "research", map[string]any{"action": "archive-get", "archive_id": archiveID, "expected_hash": want}))
		if got["verified"] != true || !jsonEqual(got["content"], all[seq]) {
			t.Fatalf("archive-get %s: %v", archiveID, got)
		}
	}
}

// TestBudgetSpecDiff: a diff over 1,000 modified nodes fits the budget,
// partial, and its cursor walks every modified node.
func TestBudgetSpecDiff(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[1])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 1000)
	fr := call(t, c, "authoring", map[string]any{"action": "spec-find-replace", "spec_id": specID, "find": "implement the thing", "replace": "build the thing properly", "scope": "titles"})
	if fr["success"] != true {
		t.Fatalf("find-replace: %v", fr)
	}
	env, size := callSized(t, c, "spec", map[string]any{"action": "diff", "spec_id": specID})
	t.Logf("spec diff: %d bytes, %d modified kept", size, len(data(env)["modified"].([]any)))
	if size > core.DefaultTokenBudget*4 {
		t.Fatalf("spec diff answered %d bytes, over the %d-token budget", size, core.DefaultTokenBudget)
	}
	meta, _ := truncation(t, env, "partial")
	seen := map[string]bool{}
	pageThrough(t, c, env, "spec", map[string]any{"action": "diff", "spec_id": specID}, core.DefaultTokenBudget, 50, func(page map[string]any) {
		for _, m := range data(page)["modified"].([]any) {
			id := m.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("%s twice", id)
			}
			seen[id] = true
		}
	})
	if len(seen) < 1000 {
		t.Fatalf("the cursor reached %d modified nodes, want ≥ 1000", len(seen))
	}
	verifyArchive(t, c, meta["content_archive_hashes"].(map[string]any), 6)
}

// verifyArchive fetches up to n archive ids and checks each hash against
// this file's own hash of the content served.
func verifyArchive(t testing.TB, c *client.Client, hashes map[string]any, n int) {
	t.Helper()
	if len(hashes) == 0 {
		t.Fatal("no content_archive_hashes")
	}
	ids := make([]string, 0, len(hashes))
	for id := range hashes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids[:min(n, len(ids))] {
		got := data(call(t, c, "research", map[string]any{"action": "archive-get", "archive_id": id, "expected_hash": hashes[id]}))
		if got["verified"] != true || got["content"] == nil || sha256Of(canonicalJSON(t, got["content"])) != hashes[id] {
			t.Fatalf("archive-get %s: %v", id, got)
		}
	}
}

// TestBudgetSpecResource: the document resource of a ~2,000-node spec fits
// the budget, with a _fidelity marker naming what was left out.
func TestBudgetSpecResource(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 2000)
	for i := 0; i < 30; i++ {
		call(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Note %d", i), "content": strings.Repeat("x", 5000)})
	}
	for _, uri := range []string{"specd://specs/" + specID, "specd://specs/" + specID + "/journal"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		text := res.Contents[0].(mcp.TextResourceContents).Text
		t.Logf("%s: %d bytes", uri, len(text))
		if len(text) > core.DefaultTokenBudget*4 {
			t.Fatalf("%s: %d bytes, over the %d-token budget", uri, len(text), core.DefaultTokenBudget)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatal(err)
		}
		fid, _ := doc["_fidelity"].(map[string]any)
		if fid == nil || fid["content_fidelity"] == nil || fid["content_fidelity"] == "full" || len(fid["dropped_content_ids"].([]any)) == 0 {
			t.Fatalf("%s: no _fidelity marker: %.300s", uri, text)
		}
		if len(fid["warnings"].([]any)) == 0 {
			t.Fatalf("%s: _fidelity without warnings: %v", uri, fid)
		}
		verifyArchive(t, c, fid["content_archive_hashes"].(map[string]any), 3)
	}
}

// TestBudgetSpecGetCountsWholeEnvelope: max_tokens bounds the whole answer,
// meta (dropped ids, archive hashes) included.
func TestBudgetSpecGetCountsWholeEnvelope(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[1])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 300)
	for i := 0; i < 40; i++ {
		call(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Note %d", i), "content": strings.Repeat("y", 3000)})
	}
	for _, mt := range []int{25_000, 20_000, 16_000, 12_000, 8_000, 5_000, 2_000, 500} {
		env, size := callSized(t, c, "spec", map[string]any{"action": "get", "spec_id": specID, "max_tokens": mt})
		t.Logf("max_tokens %d: %d bytes, %v", mt, size, env["meta"].(map[string]any)["content_fidelity"])
		if size > mt*4 {
			t.Fatalf("max_tokens %d: the answer is %d bytes, over %d", mt, size, mt*4)
		}
		if env["success"] != true && mt < 1000 && errorCode(env) == "PAYLOAD_TOO_LARGE" {
			// Too small for even reference_only: the recovery call works.
			rec := data(env)["recovery"].(map[string]any)
			if again := call(t, c, rec["suggested_tool"].(string), rec["suggested_args"].(map[string]any)); again["success"] != true {
				t.Fatalf("max_tokens %d: recovery %v failed: %v", mt, rec, again)
			}
			continue
		}
		if env["success"] != true {
			t.Fatalf("max_tokens %d: %v", mt, env["data"])
		}
		if env["meta"].(map[string]any)["content_fidelity"] == nil {
			t.Fatalf("max_tokens %d: no content_fidelity", mt)
		}
	}
	// A sweep: wherever the data alone just fits, the meta must not push
	// the whole answer over.
	// (Every 250 tokens without -race; coarser under it, offset so the
	// points differ from the fixed ones above.)
	for mt := 1_000 + budgetSweepStep/2; mt <= 25_000; mt += budgetSweepStep {
		env, size := callSized(t, c, "spec", map[string]any{"action": "get", "spec_id": specID, "max_tokens": mt})
		if env["success"] != true || size > mt*4 {
			t.Fatalf("max_tokens %d: %d bytes (success %v)", mt, size, env["success"])
		}
	}
}

// TestBudgetEveryExampleAnswer walks every registry action's example under
// a small budget (1,000 tokens, the smallest the server accepts): no
// envelope exceeds it; an answer that had to shrink says so, and one that
// could not is PAYLOAD_TOO_LARGE with a recovery call, never sent whole.
// Fixtures are made through a second server over the same store with the
// default budget.
func TestBudgetEveryExampleAnswer(t *testing.T) {
	t.Parallel()
	const budget = 1000
	big := newDeps(t, false)
	fixtures, _ := inProcess(t, big, protocols[1])
	small := *big
	small.TokenBudget = budget
	c, reg := inProcess(t, &small, protocols[1])
	shrunk, refused := 0, 0
	for _, tool := range reg.Tools() {
		for _, a := range tool.Describe() {
			act := findAction(tool, a.Name)
			if act.Example == nil {
				continue
			}
			t.Run(tool.Name+"/"+a.Name, func(t *testing.T) {
				fx := fixture(t, fixtures)
				args := map[string]any{"action": a.Name}
				for k, v := range act.Example {
					args[k] = substitute(v, fx)
				}
				env, size := callSized(t, c, tool.Name, args)
				if size > budget*4 {
					t.Fatalf("%s %s answered %d bytes, over the %d-token budget", tool.Name, a.Name, size, budget)
				}
				switch {
				case env["success"] == true:
					if env["meta"].(map[string]any)["content_fidelity"] != nil {
						truncation(t, env, env["meta"].(map[string]any)["content_fidelity"].(string))
						shrunk++
					}
				case errorCode(env) == "PAYLOAD_TOO_LARGE":
					refused++
				default:
					t.Fatalf("happy path failed: %v", env)
				}
			})
		}
	}
	t.Logf("under %d tokens: %d answers shrank, %d were refused as too large", budget, shrunk, refused)
}

// TestBudgetOtherLists: spec list and journal list-unjournaled shrink the
// same way under a small budget; spec list's cursor reaches every spec.
func TestBudgetOtherLists(t *testing.T) {
	t.Parallel()
	const budget = 1000
	deps := newDeps(t, false)
	deps.TokenBudget = budget
	c, _ := inProcess(t, deps, protocols[1])
	for i := 0; i < 30; i++ {
		call(t, c, "authoring", map[string]any{"action": "spec-create", "name": fmt.Sprintf("Listed spec number %d with a long enough name", i)})
	}
	env, size := callSized(t, c, "spec", map[string]any{"action": "list"})
	if size > budget*4 {
		t.Fatalf("spec list: %d bytes over %d tokens", size, budget)
	}
	truncation(t, env, "partial")
	seen := map[string]bool{}
	pageThrough(t, c, env, "spec", map[string]any{"action": "list"}, budget, 30, func(page map[string]any) {
		for _, s := range data(page)["specs"].([]any) {
			seen[s.(map[string]any)["spec_id"].(string)] = true
		}
	})
	if len(seen) != 30 {
		t.Fatalf("spec list paging reached %d specs, want 30", len(seen))
	}

	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 100)
	// task list pages shrink too; the cursor still walks every task once.
	var tasks []any
	args := map[string]any{"action": "list", "spec_id": specID, "limit": 100}
	first, size := callSized(t, c, "task", args)
	if size > budget*4 || first["success"] != true {
		t.Fatalf("task list: %d bytes: %v", size, first["data"])
	}
	pageThrough(t, c, first, "task", args, budget, 50, func(page map[string]any) {
		tasks = append(tasks, data(page)["tasks"].([]any)...)
	})
	if len(tasks) < 100 {
		t.Fatalf("task list paging reached %d tasks, want ≥ 100", len(tasks))
	}
	for _, tk := range tasks[:40] {
		id := tk.(map[string]any)["task_id"]
		if env := call(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": "done", "force": true}); env["success"] != true {
			t.Fatalf("complete %v: %v", id, env)
		}
	}
	env, size = callSized(t, c, "journal", map[string]any{"action": "list-unjournaled", "spec_id": specID})
	t.Logf("list-unjournaled: %d bytes, %v tasks", size, data(env)["count"])
	if size > budget*4 {
		t.Fatalf("list-unjournaled: %d bytes over %d tokens", size, budget)
	}
	meta, _ := truncation(t, env, "partial")
	verifyArchive(t, c, meta["content_archive_hashes"].(map[string]any), 3)
}

// TestBudgetArchiveGetEscapedText: archive-get cuts text by its bytes, but
// JSON escapes (<, >, & and quotes) make the answer larger; the window is cut
// shorter so the answer still fits, and offsets still page through it all.
func TestBudgetArchiveGetEscapedText(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	text := strings.Repeat(`<a href="x">&amp;</a> `, 4000) // 88 KB, about 2.5× as JSON
	put := data(call(t, c, "research", map[string]any{"action": "archive-put", "content": text, "content_id": "escaped"}))
	var got strings.Builder
	args := map[string]any{"action": "archive-get", "hash": put["hash"]}
	for pages := 0; pages < 20; pages++ {
		env, size := callSized(t, c, "research", args)
		if env["success"] != true || size > core.DefaultTokenBudget*4 {
			t.Fatalf("archive-get offset %v: %d bytes: %v", args["offset"], size, env["data"])
		}
		d := data(env)
		got.WriteString(d["content"].(string))
		if d["next_offset"] == nil {
			break
		}
		if pages == 0 && env["meta"].(map[string]any)["content_fidelity"] != "partial" {
			t.Fatalf("cut without content_fidelity: %v", env["meta"])
		}
		args["offset"] = d["next_offset"]
	}
	if got.String() != text {
		t.Fatalf("paging returned %d of %d bytes", got.Len(), len(text))
	}
}
