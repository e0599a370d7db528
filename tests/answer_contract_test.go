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
