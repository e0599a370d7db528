package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core"
)

// researchOK calls tool and fails the test unless the call succeeded.
func researchOK(t testing.TB, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	env := call(t, c, tool, args)
	if env["success"] != true {
		t.Fatalf("%s %v failed: %v", tool, args["action"], env)
	}
	return data(env)
}

// researchFail calls tool and checks it failed with code.
func researchFail(t testing.TB, c *client.Client, code, tool string, args map[string]any) map[string]any {
	t.Helper()
	env := call(t, c, tool, args)
	if env["success"] != false || errorCode(env) != code {
		t.Fatalf("%s %v: want %s, got %v", tool, args["action"], code, env)
	}
	return data(env)
}

var researchDoc = `<html><head><title>Embedded stores</title></head><body>
<h1>Choosing an embedded store</h1>
<p>bbolt is an embedded key/value store. It keeps every bucket in one file and
supports fully serializable ACID transactions with a single writer &amp; many readers.</p>
<p>Readers never block the writer: each read transaction sees a consistent
snapshot of the file, taken when it begins. Long read transactions keep old pages alive.</p>
<p>Only one process may open a store file for writing; others wait for the file lock
until a timeout expires. Café owners rarely care, but agents running in parallel do.</p>
<ul><li>Transactions are cheap.</li><li>Cursors seek in O(log n).</li></ul>
` + researchFiller + `</body></html>`

// researchFiller makes researchDoc long enough to compress (a digest is
// never longer than its source: a short one is kept whole as the summary).
var researchFiller = strings.Repeat("<p>Pages stay on disk until they are freed.</p>\n", 60)

// TestResearchDigestLifecycle is the digest lifecycle through a real MCP
// client: a consumer creates a digest from a document, stores it with its
// source, fetches it back, later verifies every locator against the archived
// source, and reads the archived source itself.
func TestResearchDigestLifecycle(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		const sourceID, query = "https://example.org/stores#bbolt", "bbolt read transactions writer lock"
		created := researchOK(t, c, "research", map[string]any{"action": "digest-create", "text": researchDoc, "query": query,
			"source_id": sourceID, "max_snippets": 4})
		payload := created["payload"].(map[string]any)
		if created["source_id"] != sourceID || payload["content_type"] != "digest/v1" || created["paged"] != false {
			t.Fatalf("digest-create: %v", created)
		}
		snippets := payload["evidence_snippets"].([]any)
		if len(snippets) == 0 || len(snippets) > 4 {
			t.Fatalf("want 1..4 snippets, got %d", len(snippets))
		}
		for _, s := range snippets {
			if loc := s.(map[string]any)["locator"].(string); !strings.HasPrefix(loc, "char:") {
				t.Fatalf("single text must give char: locators, got %s", loc)
			}
		}
		again := researchOK(t, c, "research", map[string]any{"action": "digest-create", "text": researchDoc, "query": query,
			"source_id": sourceID, "max_snippets": 4})
		if !jsonEqual(again["payload"], payload) {
			t.Fatal("digest-create is not deterministic")
		}
		queryHash := payload["query_hash"].(string)

		// Store it with its source: archived, every locator verified.
		put := researchOK(t, c, "research", map[string]any{"action": "digest-put", "source_id": sourceID, "payload": payload, "text": researchDoc})
		if put["replaced"] != false || put["source_archived"] != true || put["text_checked"] != true ||
			put["locators_verified"] != float64(len(snippets)) || put["digest_id"] != sourceID+"#"+queryHash {
			t.Fatalf("digest-put: %v", put)
		}
		if put := researchOK(t, c, "research", map[string]any{"action": "digest-put", "source_id": sourceID, "payload": payload}); put["replaced"] != true || put["text_checked"] != true {
			t.Fatalf("second digest-put (verified from the archive by source_text_hash): %v", put)
		}

		// Fetch it back.
		got := researchOK(t, c, "research", map[string]any{"action": "digest-get", "source_id": sourceID, "query_hash": queryHash})
		if !jsonEqual(got["payload"], payload) || got["source_archived"] != true || got["stored_at"] == "" {
			t.Fatalf("digest-get: %v", got)
		}

		// Later: verify every locator against the archived source, by id and
		// by the payload's own source hash.
		for _, args := range []map[string]any{
			{"action": "digest-validate", "payload": payload, "source_id": sourceID, "query": query},
			{"action": "digest-validate", "payload": payload},
		} {
			v := researchOK(t, c, "research", args)
			if v["valid"] != true || v["text_checked"] != true || v["source"] != "archive" || v["source_text_hash"] != payload["source_text_hash"] {
				t.Fatalf("digest-validate %v: %v", args, v)
			}
			locs := v["locators"].([]any)
			if len(locs) != len(snippets) {
				t.Fatalf("want %d locator checks, got %v", len(snippets), locs)
			}
			for _, l := range locs {
				if l.(map[string]any)["ok"] != true {
					t.Fatalf("locator failed: %v", l)
				}
			}
		}
		// A shifted locator is reported with expected and found text.
		bad := researchCopy(t, payload)
		s0 := bad["evidence_snippets"].([]any)[0].(map[string]any)
		var start, end int
		if _, err := fmt.Sscanf(s0["locator"].(string), "char:%d-%d", &start, &end); err != nil {
			t.Fatal(err)
		}
		s0["locator"] = fmt.Sprintf("char:%d-%d", start+1, end+1)
		v := researchOK(t, c, "research", map[string]any{"action": "digest-validate", "payload": bad, "source_id": sourceID})
		if v["valid"] != false {
			t.Fatalf("a shifted locator must not validate: %v", v)
		}
		l0 := v["locators"].([]any)[0].(map[string]any)
		if l0["ok"] != false || l0["expected"] != s0["text"] || l0["found"] == s0["text"] {
			t.Fatalf("locator report: %v", l0)
		}
		viol := v["violations"].([]any)[0].(map[string]any)
		if viol["path"] != "evidence_snippets[0].locator" {
			t.Fatalf("violation path: %v", viol)
		}

		// The archived source itself, hash verified on read.
		src := researchOK(t, c, "research", map[string]any{"action": "archive-get", "content_id": sourceID})
		if src["hash"] != payload["source_text_hash"] || src["verified"] != true || src["item_type"] != "source" ||
			src["truncated"] != false || src["total_chars"] != payload["original_chars"] {
			t.Fatalf("archive-get source: %v", src)
		}
		if content := src["content"].(string); strings.Contains(content, "<p>") || !strings.Contains(content, "writer & many readers") {
			t.Fatalf("archived text is not the canonical text: %q", content)
		}
		byHash := researchOK(t, c, "research", map[string]any{"action": "archive-get", "hash": payload["source_text_hash"], "max_chars": 10, "offset": 5})
		if byHash["returned_chars"] != float64(10) || byHash["next_offset"] != float64(15) || byHash["content"] != src["content"].(string)[5:15] {
			t.Fatalf("archive-get window: %v", byHash)
		}

		// Listing, paged.
		other := researchOK(t, c, "research", map[string]any{"action": "digest-create", "text": researchDoc, "query": "file lock timeout", "source_id": sourceID})
		researchOK(t, c, "research", map[string]any{"action": "digest-put", "source_id": sourceID, "payload": other["payload"]})
		page1 := call(t, c, "research", map[string]any{"action": "digest-list", "source_id": sourceID, "limit": 1})
		pg := page1["meta"].(map[string]any)["pagination"].(map[string]any)
		cursor, _ := pg["cursor"].(string)
		if len(data(page1)["digests"].([]any)) != 1 || pg["has_more"] != true || cursor == "" {
			t.Fatalf("digest-list page 1: %v", page1)
		}
		page2 := researchOK(t, c, "research", map[string]any{"action": "digest-list", "source_id": sourceID, "limit": 1, "cursor": cursor})
		first := data(page1)["digests"].([]any)[0].(map[string]any)
		second := page2["digests"].([]any)[0].(map[string]any)
		if first["query_hash"] == second["query_hash"] || second["source_id"] != sourceID || second["summary"] == "" {
			t.Fatalf("digest-list pages: %v / %v", first, second)
		}
		researchFail(t, c, "INVALID_CURSOR", "research", map[string]any{"action": "digest-list", "cursor": cursor})

		// Delete; a second read says what exists.
		researchOK(t, c, "research", map[string]any{"action": "digest-delete", "source_id": sourceID, "query_hash": queryHash})
		miss := researchFail(t, c, "DIGEST_NOT_FOUND", "research", map[string]any{"action": "digest-get", "source_id": sourceID, "query_hash": queryHash})
		rec := miss["recovery"].(map[string]any)
		if rec["suggested_tool"] != "research" || rec["suggested_args"].(map[string]any)["action"] != "digest-list" {
			t.Fatalf("recovery: %v", miss)
		}
		nf := researchFail(t, c, "ARCHIVE_NOT_FOUND", "research", map[string]any{"action": "archive-get", "hash": "sha256:" + strings.Repeat("0", 64)})
		if nf["recovery"].(map[string]any)["suggested_tool"] != "research" {
			t.Fatalf("archive recovery: %v", nf)
		}
		// The research domain names no tools: the tool names these calls.
		unarchived := researchCopy(t, payload)
		unarchived["source_text_hash"] = "sha256:" + strings.Repeat("0", 64)
		for _, args := range []map[string]any{
			{"action": "archive-get", "content_id": "no-such-source"},
			{"action": "digest-validate", "payload": unarchived, "source_id": "no-such-source"},
		} {
			nf := researchFail(t, c, "ARCHIVE_NOT_FOUND", "research", args)
			rec := nf["recovery"].(map[string]any)
			if rec["suggested_tool"] != "research" || fmt.Sprint(rec["suggested_args"]) != "map[action:digest-list source_id:no-such-source]" {
				t.Fatalf("%v: recovery %v", args["action"], rec)
			}
		}
	})
}

// researchCopy deep-copies a decoded JSON object.
func researchCopy(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	must(t, json.Unmarshal([]byte(researchJSON(t, m)), &out))
	return out
}

// researchJSON is v as compact JSON.
func researchJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// TestResearchPagedSource: a PDF-like source given as pages[] gets page
// locators, verifies with pages again and, once archived, by source_id.
func TestResearchPagedSource(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, _ := inProcess(t, newDeps(t, false), p)
			pages := []any{
				"<h2>Page one</h2><p>Write-ahead logs make crash recovery simple: replay the log.</p>" + researchFiller,
				"<p>Copy-on-write B+trees, as in bbolt, need no log at all; a crash leaves the old root intact.</p>",
				"<p>Compaction rewrites the file to reclaim free pages &mdash; it needs the write lock.</p>",
			}
			const query = "crash recovery log bbolt"
			cr := researchOK(t, c, "research", map[string]any{"action": "digest-create", "pages": pages, "query": query, "source_id": "paper.pdf"})
			payload := cr["payload"].(map[string]any)
			if cr["paged"] != true || cr["page_count"] != float64(3) {
				t.Fatalf("digest-create pages: %v", cr)
			}
			seen := map[string]bool{}
			for _, s := range payload["evidence_snippets"].([]any) {
				loc := s.(map[string]any)["locator"].(string)
				if !strings.HasPrefix(loc, "page:") {
					t.Fatalf("paged source must give page locators, got %s", loc)
				}
				seen[strings.SplitN(loc, ":", 3)[1]] = true
			}
			if len(seen) < 2 {
				t.Fatalf("snippets should come from several pages: %v", payload["evidence_snippets"])
			}
			v := researchOK(t, c, "research", map[string]any{"action": "digest-validate", "payload": payload, "pages": pages, "query": query})
			if v["valid"] != true || v["text_checked"] != true || v["query_checked"] != true || v["source"] != "pages" {
				t.Fatalf("validate with pages: %v", v)
			}
			// The same content as one text is another canonical text.
			joined := strings.Join([]string{pages[0].(string), pages[1].(string), pages[2].(string)}, "\n\n")
			if v := researchOK(t, c, "research", map[string]any{"action": "digest-validate", "payload": payload, "text": joined}); v["valid"] != false {
				t.Fatalf("a paged digest must not verify against the pages joined as one text: %v", v)
			}
			// Archived with pages, verified later by id (page spans recovered).
			researchOK(t, c, "research", map[string]any{"action": "digest-put", "source_id": "paper.pdf", "payload": payload, "pages": pages})
			v = researchOK(t, c, "research", map[string]any{"action": "digest-validate", "payload": payload, "source_id": "paper.pdf"})
			if v["valid"] != true || v["locators_verified"] != float64(len(payload["evidence_snippets"].([]any))) {
				t.Fatalf("validate by source_id: %v", v)
			}
			// Sources: exactly one; path must stay in the workspace.
			researchFail(t, c, "INVALID_FORMAT", "research", map[string]any{"action": "digest-validate", "payload": payload, "pages": pages, "text": "x"})
			researchFail(t, c, "INVALID_FORMAT", "research", map[string]any{"action": "digest-create", "path": "../../outside.txt", "query": "q"})
			researchFail(t, c, "MISSING_REQUIRED", "research", map[string]any{"action": "digest-create", "query": "q"})
		})
	}
}

// TestResearchPathAndLargeText reads a workspace file as the source and
// accepts a text far over the 100 KB request cap.
func TestResearchPathAndLargeText(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[1])
	must(t, os.WriteFile(filepath.Join(deps.Workspace, "notes.html"), []byte(researchDoc), 0o644))
	byPath := researchOK(t, c, "research", map[string]any{"action": "digest-create", "path": "notes.html", "query": "writer"})
	byText := researchOK(t, c, "research", map[string]any{"action": "digest-create", "text": researchDoc, "query": "writer"})
	if !jsonEqual(byPath["payload"], byText["payload"]) {
		t.Fatal("path and text give different digests")
	}
	researchFail(t, c, "NOT_FOUND", "research", map[string]any{"action": "digest-create", "path": "missing.txt", "query": "writer"})

	var b strings.Builder
	for i := 0; b.Len() < largeTextBytes; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d discusses storage engine number %d and its lock manager.</p>\n", i, i%97)
	}
	big := b.String()
	cr := researchOK(t, c, "research", map[string]any{"action": "digest-create", "text": big, "query": "lock manager engine 42", "source_id": "big"})
	put := researchOK(t, c, "research", map[string]any{"action": "digest-put", "source_id": "big", "payload": cr["payload"], "text": big})
	if put["text_checked"] != true || put["source_archived"] != true {
		t.Fatalf("big digest-put: %v", put)
	}
	// The archived source is larger than the token budget: archive-get pages it.
	env := call(t, c, "research", map[string]any{"action": "archive-get", "content_id": "big"})
	d := data(env)
	meta := env["meta"].(map[string]any)
	if env["success"] != true || d["truncated"] != true || meta["content_fidelity"] != "partial" || d["hash"] != cr["source_text_hash"] {
		t.Fatalf("big archive-get: %v", meta)
	}
	if got := int(d["returned_chars"].(float64)); got > core.DefaultTokenBudget*4 || got < core.DefaultTokenBudget*3 {
		t.Fatalf("returned %d chars for a %d-token budget", got, core.DefaultTokenBudget)
	}
	// Paging through the windows gives back the whole text, whose hash is
	// the digest's source_text_hash.
	var all strings.Builder
	all.WriteString(d["content"].(string))
	for next := d["next_offset"]; next != nil; {
		w := researchOK(t, c, "research", map[string]any{"action": "archive-get", "content_id": "big", "offset": next})
		if w["offset"] != next {
			t.Fatalf("window at %v starts at %v", next, w["offset"])
		}
		all.WriteString(w["content"].(string))
		next = w["next_offset"]
	}
	if sum := sha256.Sum256([]byte(all.String())); "sha256:"+hex.EncodeToString(sum[:]) != cr["source_text_hash"] {
		t.Fatal("the windows do not add up to the archived text")
	}
}

// TestResearchInvalidPayloadReport: every violation at once, with its path;
// validate succeeds saying so, put refuses with the same list.
func TestResearchInvalidPayloadReport(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[0])
	payload := map[string]any{
		"version": "2.0", "content_type": "digest/v1", "query_hash": "XYZ",
		"summary": strings.Repeat("s", 2001), "key_points": []any{"fine", "   "},
		"evidence_snippets": []any{map[string]any{"text": "abc", "locator": "char:0-3", "relevance_score": 1.5}},
		"original_chars":    10, "digest_chars": 1, "compression_ratio": 0.1,
		"source_text_hash": "sha256:" + strings.Repeat("a", 64), "producer": "someone else",
	}
	v := researchOK(t, c, "research", map[string]any{"action": "digest-validate", "payload": payload, "text": "abcdefghij"})
	if v["valid"] != false {
		t.Fatalf("invalid payload validated: %v", v)
	}
	paths := map[string]bool{}
	for _, x := range v["violations"].([]any) {
		m := x.(map[string]any)
		paths[m["path"].(string)] = true
		if m["constraint"] == "" || m["message"] == "" {
			t.Fatalf("violation without constraint or message: %v", m)
		}
	}
	for _, want := range []string{"version", "query_hash", "summary", "key_points[1]", "evidence_snippets[0].relevance_score", "digest_chars", "source_text_hash"} {
		if !paths[want] {
			t.Errorf("no violation at %s (got %v)", want, paths)
		}
	}
	warnings := v["warnings"].([]any)
	if len(warnings) != 1 || warnings[0].(map[string]any)["path"] != "producer" {
		t.Fatalf("unknown field must be a warning: %v", warnings)
	}
	put := researchFail(t, c, "VALIDATION_ERROR", "research", map[string]any{"action": "digest-put", "source_id": "s", "payload": payload, "text": "abcdefghij"})
	details := put["details"].(map[string]any)
	if details["field"] != "payload" || len(details["violations"].([]any)) != len(v["violations"].([]any)) {
		t.Fatalf("digest-put details: %v", details)
	}
	researchFail(t, c, "DIGEST_NOT_FOUND", "research", map[string]any{"action": "digest-get", "source_id": "s", "query_hash": "0123abcd"})
	// Not an object at all: the schema's type check.
	researchFail(t, c, "INVALID_FORMAT", "research", map[string]any{"action": "digest-validate", "payload": "{}"})
}

// TestResearchArchiveServesBudgetedSpecAnswer: content a budgeted spec get
// dropped is retrieved by its archive id, hash verified, at every
// fidelity level, and still after the spec moves on.
func TestResearchArchiveServesBudgetedSpecAnswer(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, _ := inProcess(t, newDeps(t, false), p)
			specID, taskIDs := researchBigSpec(t, c)
			full := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID})
			fullTokens := (len(researchJSON(t, data(full))) + 3) / 4

			kinds := map[string]int{}
			fidelities := map[string]bool{}
			verified := map[string]bool{}
			for mt := fullTokens - 50; mt >= 200; mt = mt * 3 / 4 {
				env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID, "max_tokens": mt})
				meta := env["meta"].(map[string]any)
				fid, _ := meta["content_fidelity"].(string)
				fidelities[fid] = true
				hashes, _ := meta["content_archive_hashes"].(map[string]any)
				// Only the smallest form may leave its archive ids out,
				// and then it says so (and names the calls that page).
				if fid != "" && len(hashes) == 0 && (fid != "reference_only" || !archiveIDsOmitted(env)) {
					t.Fatalf("max_tokens %d: %s without archive hashes", mt, fid)
				}
				for id, h := range hashes {
					if verified[id] {
						continue
					}
					got := researchOK(t, c, "research", map[string]any{"action": "archive-get", "archive_id": id, "expected_hash": h})
					if got["verified"] != true || got["hash"] != h || got["content"] == nil || got["source"] != "spec_store" {
						t.Fatalf("archive-get %s: %v", id, got)
					}
					verified[id] = true
					kinds[strings.SplitN(strings.SplitN(id, "/", 2)[1], ":", 2)[0]]++
				}
			}
			if !fidelities["partial"] || (!fidelities["summary"] && !fidelities["reference_only"]) {
				t.Fatalf("fidelities seen: %v", fidelities)
			}
			for _, k := range []string{"journal", "subtree", "node"} {
				if kinds[k] == 0 {
					t.Errorf("no %s item was dropped and verified (kinds %v)", k, kinds)
				}
			}
			// The spec moves on: the pinned ids still serve the old content.
			researchOK(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": taskIDs[12], "completion_note": "later", "force": true})
			for id := range verified {
				if got := researchOK(t, c, "research", map[string]any{"action": "archive-get", "archive_id": id}); got["hash_checked"] != false {
					t.Fatalf("%s: %v", id, got)
				}
			}
			var anyID string
			for id := range verified {
				anyID = id
				break
			}
			mis := call(t, c, "research", map[string]any{"action": "archive-get", "archive_id": anyID, "expected_hash": "sha256:" + strings.Repeat("1", 64)})
			if data(mis)["verified"] != false || !strings.Contains(researchJSON(t, mis["meta"]), "HASH_MISMATCH") {
				t.Fatalf("hash mismatch: %v", mis)
			}
			nf := researchFail(t, c, "ARCHIVE_NOT_FOUND", "research", map[string]any{"action": "archive-get", "archive_id": "spec:" + specID + "@1/node:task-9-9"})
			if rec := nf["recovery"].(map[string]any); rec["suggested_tool"] != "spec" {
				t.Fatalf("recovery: %v", nf)
			}
			researchFail(t, c, "ARCHIVE_NOT_FOUND", "research", map[string]any{"action": "archive-get", "archive_id": "spec:no-such-spec@1/node:spec-root"})
			researchFail(t, c, "INVALID_FORMAT", "research", map[string]any{"action": "archive-get", "archive_id": "spec:" + specID + "/node:x"})
		})
	}
}

// researchBigSpec makes a spec with two phases of 12 tasks (10 completed,
// with notes) and 15 journal notes, all with long texts.
func researchBigSpec(t testing.TB, c *client.Client) (string, []any) {
	t.Helper()
	specID := researchOK(t, c, "authoring", map[string]any{"action": "spec-create", "name": "budget archive"})["spec_id"].(string)
	long := strings.Repeat("The archive must return exactly what the budget dropped. ", 6)
	var taskIDs []any
	for ph := 0; ph < 2; ph++ {
		var tasks []any
		for i := 0; i < 12; i++ {
			tasks = append(tasks, map[string]any{"title": fmt.Sprintf("Task %d.%d", ph, i), "task_category": "implementation",
				"file_path": fmt.Sprintf("p%d/f%d.go", ph, i), "description": long})
		}
		d := researchOK(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": specID,
			"phase": map[string]any{"title": fmt.Sprintf("Phase %d", ph)}, "tasks": tasks})
		taskIDs = append(taskIDs, d["task_ids"].([]any)...)
	}
	for i, id := range taskIDs[:10] {
		researchOK(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": fmt.Sprintf("done %d: %s", i, long)})
	}
	for i := 0; i < 15; i++ {
		researchOK(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Note %d", i), "content": long, "entry_type": "note"})
	}
	return specID, taskIDs
}

// TestResearchArchiveSplitsLargeItems: with a small token budget, a dropped
// phase subtree or journal range larger than the budget is answered by the
// archive ids of its parts, each of which verifies in turn.
func TestResearchArchiveSplitsLargeItems(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	deps.TokenBudget = 1500
	c, _ := inProcess(t, deps, protocols[1])
	specID, _ := researchBigSpec(t, c)
	env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID})
	pending, _ := env["meta"].(map[string]any)["content_archive_hashes"].(map[string]any)
	if len(pending) == 0 {
		t.Fatalf("spec get within 1500 tokens dropped nothing: %v", env["meta"])
	}
	split := map[string]int{}
	leaves := 0
	for len(pending) > 0 {
		next := map[string]any{}
		for id, h := range pending {
			env := call(t, c, "research", map[string]any{"action": "archive-get", "archive_id": id, "expected_hash": h})
			d := data(env)
			if env["success"] != true || d["verified"] != true {
				t.Fatalf("archive-get %s: %v", id, env)
			}
			if tokens := (len(researchJSON(t, d)) + 3) / 4; tokens > deps.TokenBudget {
				t.Fatalf("archive-get %s answered %d tokens over a %d budget", id, tokens, deps.TokenBudget)
			}
			if d["content"] != nil {
				leaves++
				continue
			}
			meta := env["meta"].(map[string]any)
			if meta["content_fidelity"] != "reference_only" {
				t.Fatalf("%s without content: %v", id, meta)
			}
			split[strings.SplitN(strings.SplitN(id, "/", 2)[1], ":", 2)[0]]++
			for pid, ph := range meta["content_archive_hashes"].(map[string]any) {
				next[pid] = ph
			}
		}
		pending = next
	}
	if split["subtree"] == 0 || split["journal"] == 0 || leaves == 0 {
		t.Fatalf("splits %v, leaves %d", split, leaves)
	}
}

// TestPrepareIncludesLinkedDigests: a research node that links a stored
// digest (metadata.digest_ids) gets its summary and evidence in task prepare.
func TestPrepareIncludesLinkedDigests(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	ok := func(env map[string]any) map[string]any {
		t.Helper()
		if env["success"] != true {
			t.Fatalf("call failed: %v", env)
		}
		return data(env)
	}
	id := ok(call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "with research"}))["spec_id"].(string)
	ph := ok(call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id,
		"phase": map[string]any{"title": "Investigate"},
		"tasks": []any{map[string]any{"type": "research", "title": "Read the retry RFC", "query": "retry backoff"}}}))
	rid := ph["task_ids"].([]any)[0].(string)
	text := "Retries should use exponential backoff with jitter. A client must cap the number of retries. " +
		"Idempotency keys make a retried payment safe. Without jitter, clients retry in lockstep and overload the server."
	created := ok(call(t, c, "research", map[string]any{"action": "digest-create", "text": text, "query": "retry backoff", "source_id": "retry-rfc"}))
	put := ok(call(t, c, "research", map[string]any{"action": "digest-put", "source_id": "retry-rfc", "payload": created["payload"], "text": text}))
	ok(call(t, c, "task", map[string]any{"action": "update-metadata", "spec_id": id, "task_id": rid,
		"metadata": map[string]any{"digest_ids": []any{put["digest_id"]}}}))
	prep := ok(call(t, c, "task", map[string]any{"action": "prepare", "spec_id": id, "task_id": rid}))
	digests, _ := prep["context"].(map[string]any)["digests"].([]any)
	if len(digests) != 1 {
		t.Fatalf("prepare context digests: %v", prep["context"])
	}
	d0 := digests[0].(map[string]any)
	if d0["summary"] == nil || d0["summary"] == "" {
		t.Fatalf("digest summary missing: %v", d0)
	}
}

// archiveIDsOmitted reports whether env's CONTENT_TRUNCATED warning says
// the archive ids did not fit.
func archiveIDsOmitted(env map[string]any) bool {
	ws, _ := env["meta"].(map[string]any)["warning_details"].([]any)
	for _, w := range ws {
		w := w.(map[string]any)
		if ctx, _ := w["context"].(map[string]any); w["code"] == "CONTENT_TRUNCATED" && ctx["archive_ids_omitted"] == true {
			return true
		}
	}
	return false
}
