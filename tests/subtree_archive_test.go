package tests

import (
	"sort"
	"strings"
	"testing"

	"github.com/specd/specd/specs/specstore"
)

// TestSubtreeArchiveHashesAgree: a subtree item is built in three places —
// the budgeted spec get that drops it, research archive-get that serves it
// from the store, and archive-get's split of an item over the budget into
// parts — all by the one walk (specs.Subtree). Each hash handed out must
// verify where the item is served: the dropped phase subtrees, and the
// parts (node and child subtrees) of one of them.
func TestSubtreeArchiveHashesAgree(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	deps.TokenBudget = 8000 // a phase of 100 tasks is over it: archive-get answers with parts
	c, _ := inProcess(t, deps, protocols[0])
	specID := seedSpec(t, deps.Specs.(*specstore.Repo), 1000)
	env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": specID})
	if env["success"] != true {
		t.Fatalf("spec get: %v", env)
	}
	hashes, _ := env["meta"].(map[string]any)["content_archive_hashes"].(map[string]any)
	var subtrees []string
	for id := range hashes {
		if strings.Contains(id, "/subtree:") {
			subtrees = append(subtrees, id)
		}
	}
	sort.Strings(subtrees)
	if len(subtrees) < 10 {
		t.Fatalf("spec get dropped %d phase subtrees, want 10: %v", len(subtrees), hashes)
	}
	archiveGet := func(id string, hash any) map[string]any {
		t.Helper()
		env := call(t, c, "research", map[string]any{"action": "archive-get", "archive_id": id, "expected_hash": hash})
		if env["success"] != true || data(env)["verified"] != true {
			t.Fatalf("archive-get %s: %v", id, env)
		}
		return env
	}
	var whole map[string]any // subtrees[0]'s answer
	for i, id := range subtrees[:3] {
		if env := archiveGet(id, hashes[id]); i == 0 {
			whole = env
		}
	}
	parts, _ := whole["meta"].(map[string]any)["content_archive_hashes"].(map[string]any)
	childSubtrees := 0
	for id, h := range parts {
		if strings.Contains(id, "/subtree:") {
			childSubtrees++
		}
		archiveGet(id, h)
	}
	if len(parts) < 2 || childSubtrees == 0 {
		t.Fatalf("%s was not split into a node and child subtrees: %v", subtrees[0], parts)
	}
}
