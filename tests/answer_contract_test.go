package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specd/specd/specs/specstore"
)

// Answer contract (contract.md §2, §6): what a successful answer carries
// besides its data, checked through a real MCP client.

// TestSpecGetPartialListsEachDropOnce: a spec get cut to fit its budget
// reports the cut once: every dropped id once, one CONTENT_TRUNCATED
// warning whose dropped_count is the number of ids. (The handler's own fit
// and the answer budget's re-fit used to both report, each its own list.)
func TestSpecGetPartialListsEachDropOnce(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[1])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 300)
	for i := 0; i < 40; i++ {
		call(t, c, "journal", map[string]any{"action": "add", "spec_id": specID, "title": fmt.Sprintf("Note %d", i), "content": strings.Repeat("y", 3000)})
	}
	degraded := 0
	for mt := 1_000; mt <= 25_000; mt += 1_000 {
		env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID, "max_tokens": mt})
		if env["success"] != true {
			t.Fatalf("max_tokens %d: %v", mt, env["data"])
		}
		meta := env["meta"].(map[string]any)
		if meta["content_fidelity"] == nil {
			continue
		}
		degraded++
		ids, _ := meta["dropped_content_ids"].([]any)
		seen := map[any]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("max_tokens %d: %v listed twice among %d dropped ids", mt, id, len(ids))
			}
			seen[id] = true
		}
		var truncated []map[string]any
		for _, w := range meta["warning_details"].([]any) {
			if w := w.(map[string]any); w["code"] == "CONTENT_TRUNCATED" {
				truncated = append(truncated, w)
			}
		}
		if len(truncated) != 1 {
			t.Fatalf("max_tokens %d: %d CONTENT_TRUNCATED warnings for one cut: %v", mt, len(truncated), truncated)
		}
		if n := truncated[0]["context"].(map[string]any)["dropped_count"]; n != float64(len(ids)) {
			t.Fatalf("max_tokens %d: dropped_count %v, %d dropped ids", mt, n, len(ids))
		}
		if w := meta["warnings"].([]any); len(w) != len(meta["warning_details"].([]any)) {
			t.Fatalf("max_tokens %d: %d warnings, %d details", mt, len(w), len(meta["warning_details"].([]any)))
		}
	}
	if degraded == 0 {
		t.Fatal("no max_tokens degraded the answer: the test checks nothing")
	}
}

// TestDigestNeverLongerThanSource: a source too short to compress gives a
// digest that keeps the source text (as its summary) with
// compression_ratio 1, says so in a warning, and still validates against
// its source; a source that compresses carries no such warning.
func TestDigestNeverLongerThanSource(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[1])
	const html = "<p>Foxes are quick. Dogs sleep all day long.</p>"
	env := call(t, c, "research", map[string]any{"action": "digest-create", "text": html, "query": "foxes"})
	if env["success"] != true {
		t.Fatalf("digest-create: %v", env)
	}
	p := data(env)["payload"].(map[string]any)
	digest, original := p["digest_chars"].(float64), p["original_chars"].(float64)
	if digest > original {
		t.Fatalf("digest of %v characters from a %v-character source: %v", digest, original, p)
	}
	if p["summary"] != "Foxes are quick. Dogs sleep all day long." || p["compression_ratio"] != 1.0 {
		t.Fatalf("the source text is not kept: %v", p)
	}
	if !hasWarning(env, "DIGEST_NOT_COMPRESSED") {
		t.Fatalf("no DIGEST_NOT_COMPRESSED warning: %v", env["meta"])
	}
	v := call(t, c, "research", map[string]any{"action": "digest-validate", "payload": p, "text": html})
	if v["success"] != true || data(v)["valid"] != true {
		t.Fatalf("the kept digest does not validate: %v", v["data"])
	}
	// Longer than a summary may be, but not long enough for summary, key
	// points and snippets together: the key points and the last snippets go.
	const sentence = "Foxes run across the open field at dawn while the farm sleeps. Nothing else moves. "
	mid := strings.Repeat(sentence, 40)
	env = call(t, c, "research", map[string]any{"action": "digest-create", "text": mid, "query": "foxes"})
	if p := data(env)["payload"].(map[string]any); p["digest_chars"].(float64) > p["original_chars"].(float64) || !hasWarning(env, "DIGEST_NOT_COMPRESSED") || len(p["key_points"].([]any)) != 0 {
		t.Fatalf("a %d-character source: %v %v", len(mid), p, env["meta"])
	}
	long := strings.Repeat(sentence, 400)
	env = call(t, c, "research", map[string]any{"action": "digest-create", "text": long, "query": "foxes"})
	if p := data(env)["payload"].(map[string]any); p["digest_chars"].(float64) >= p["original_chars"].(float64) || hasWarning(env, "DIGEST_NOT_COMPRESSED") || len(p["key_points"].([]any)) == 0 {
		t.Fatalf("a long source: %v %v", p["compression_ratio"], env["meta"])
	}
}

// hasWarning reports whether env's meta carries a warning with code.
func hasWarning(env map[string]any, code string) bool {
	ws, _ := env["meta"].(map[string]any)["warning_details"].([]any)
	for _, w := range ws {
		if w.(map[string]any)["code"] == code {
			return true
		}
	}
	return false
}
