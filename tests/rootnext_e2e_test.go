package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// handWrittenSpec is a hand-written spec (not made by specd or foundry):
// the task "cleanup" has an id that names no parent and no parent field,
// so nothing says which phase it belongs to. phases is the JSON of the
// phase nodes (with their tasks) and rootChildren lists them.
func handWrittenSpec(id, rootChildren, phases string) string {
	node := func(typ, title, status, parent, children string) string {
		p := "null"
		if parent != "" {
			p = `"` + parent + `"`
		}
		return fmt.Sprintf(`{"type": %q, "title": %q, "status": %q, "parent": %s, "children": [%s], "total_tasks": 0, "completed_tasks": 0,
			"metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}}`, typ, title, status, p, children)
	}
	cleanup := strings.Replace(node("task", "Clean up the scratch files", "pending", "", ""), `"parent": null, `, "", 1)
	h := `"spec-root": ` + node("spec", "hand", "pending", "", rootChildren) + `, "cleanup": ` + cleanup
	if phases != "" {
		h += ", " + phases
	}
	return `{"spec_id": "` + id + `", "title": "hand written", "generated": "2026-01-02T10:00:00Z", "last_updated": "2026-01-02T10:00:00Z",
		"metadata": {"description": "hand written"}, "hierarchy": {` + h + `}}`
}

// TestTaskOutsideEveryPhaseIsReachable: a hand-written spec whose task
// "cleanup" names no parent imports and is fixed (spec fix); afterwards an
// agent that follows only task next's answer gets to that pending,
// unblocked task with at most one call: next offers it, or its next_call
// (run exactly as given) puts it where next offers it. The read models
// agree on the way: task info's can_start is true, and next never answers
// the misleading "nothing is actionable, run check-deps" while the task
// waits. Both a spec whose only phase is done and one with no phase at all.
func TestTaskOutsideEveryPhaseIsReachable(t *testing.T) {
	t.Parallel()
	donePhase := `"phase-1": {"type": "phase", "title": "Done", "status": "completed", "parent": "spec-root", "children": ["task-1-1"],
		"total_tasks": 1, "completed_tasks": 1, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
		"task-1-1": {"type": "task", "title": "Done work", "status": "completed", "parent": "phase-1", "children": [],
		"total_tasks": 1, "completed_tasks": 1, "metadata": {"completed_at": "2026-01-02T11:00:00Z"}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}}`
	cases := []struct{ name, rootChildren, phases string }{
		{"done phase", `"phase-1"`, donePhase},
		{"no phase", "", ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deps := newDeps(t, false)
			c, _ := inProcess(t, deps, protocols[0])
			id := fmt.Sprintf("hand-written-2026-01-02-%03d", i+1)
			dir := filepath.Join(deps.Workspace, "hand", "active")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "hand.json"), []byte(handWrittenSpec(id, tc.rootChildren, tc.phases)), 0o644))
			imp := ok(t, c, "spec", map[string]any{"action": "import", "path": "hand"})
			if f := asSlice(imp["files"])[0].(map[string]any); f["outcome"] != "imported" {
				t.Fatalf("import: %v", imp)
			}
			ok(t, c, "spec", map[string]any{"action": "fix", "spec_id": id})
			reachCleanup(t, c, id, "")
		})
	}
}

// reachCleanup is an agent reading only next's answer: found, or one
// next_call run as given and then found. step, when not "", is the
// "tool action" next_call the first next must answer.
func reachCleanup(t *testing.T, c *client.Client, id, step string) {
	t.Helper()
	info := ok(t, c, "task", map[string]any{"action": "info", "spec_id": id, "task_id": "cleanup"})
	if info["can_start"] != true {
		t.Fatalf("cleanup: can_start %v, want true (pending, nothing blocks it): %v", info["can_start"], info)
	}
	next := ok(t, c, "task", map[string]any{"action": "next", "spec_id": id})
	if next["found"] != true {
		hint, _ := next["hint"].(string)
		nc, _ := next["next_call"].(map[string]any)
		if !strings.Contains(hint, "cleanup") || nc == nil {
			t.Fatalf("next hides the pending task cleanup (info says it can start): %v", compactJSON(next))
		}
		if got := fmt.Sprint(nc["tool"], " ", nc["args"].(map[string]any)["action"]); step != "" && got != step {
			t.Fatalf("next_call %v, want %s", compactJSON(nc), step)
		}
		step = ""
		ok(t, c, nc["tool"].(string), nc["args"].(map[string]any))
		next = ok(t, c, "task", map[string]any{"action": "next", "spec_id": id})
	}
	if step != "" {
		t.Fatalf("next found %v at once, want the next_call %s first", next["task_id"], step)
	}
	if next["found"] != true || next["task_id"] != "cleanup" || next["phase_id"] == "" {
		t.Fatalf("next after at most one step: %v, want cleanup in a phase", compactJSON(next))
	}
	// It runs to the end: start, complete, and the spec is complete.
	ok(t, c, "task", map[string]any{"action": "start", "spec_id": id, "task_id": "cleanup"})
	ok(t, c, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": "cleanup", "completion_note": "done"})
	if done := ok(t, c, "task", map[string]any{"action": "next", "spec_id": id}); done["spec_complete"] != true {
		t.Fatalf("after cleanup: %v", compactJSON(done))
	}
}

// TestNextNamesATaskUnderTheRoot: a spec stored with a task directly
// under spec-root (imported with auto_fix false: the placement is only a
// warning) — next names that task with the one call that puts it into a
// phase, which runs as given, and then offers it: task move into the open
// phase, or, with no phase, spec fix (which makes one).
func TestNextNamesATaskUnderTheRoot(t *testing.T) {
	t.Parallel()
	openPhase := `"phase-1": {"type": "phase", "title": "Open", "status": "pending", "parent": "spec-root", "children": [],
		"total_tasks": 0, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}}`
	cases := []struct{ name, rootChildren, phases, current, step string }{
		{"open phase", `"phase-1", "cleanup"`, openPhase, `"phase-1"`, "task move"},
		{"no phase", `"cleanup"`, "", "null", "spec fix"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deps := newDeps(t, false)
			c, _ := inProcess(t, deps, protocols[0])
			id := fmt.Sprintf("hand-written-2026-01-02-%03d", i+11)
			spec := underRootSpec(t, id, tc.rootChildren, tc.phases, tc.current)
			importUnfixed(t, c, deps.Workspace, spec)
			reachCleanup(t, c, id, tc.step)
		})
	}
}

// underRootSpec is handWrittenSpec with cleanup listed under spec-root
// (rootChildren must name it) and the counts and rollups right, so that it
// imports with auto_fix false as written; current is the JSON of
// current_phase.
func underRootSpec(t *testing.T, id, rootChildren, phases, current string) string {
	t.Helper()
	spec := handWrittenSpec(id, rootChildren, phases)
	for _, r := range [][2]string{
		{`"cleanup": {"type": "task", "title": "Clean up the scratch files", "status": "pending", "children": [], "total_tasks": 0`,
			`"cleanup": {"parent": "spec-root", "type": "task", "title": "Clean up the scratch files", "status": "pending", "children": [], "total_tasks": 1`},
		{`"children": [` + rootChildren + `], "total_tasks": 0`, `"children": [` + rootChildren + `], "total_tasks": 1`},
		{`"metadata": {"description": "hand written"}`, `"status": "pending", "progress_percentage": 0, "current_phase": ` + current +
			`, "metadata": {"description": "hand written", "mission": "clean up"}`},
	} {
		if !strings.Contains(spec, r[0]) {
			t.Fatalf("the spec has no %s", r[0])
		}
		spec = strings.Replace(spec, r[0], r[1], 1)
	}
	return spec
}

// importUnfixed writes spec into the workspace ws and imports it as
// written (auto_fix false).
func importUnfixed(t *testing.T, c *client.Client, ws, spec string) {
	t.Helper()
	dir := filepath.Join(ws, "hand", "active")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "hand.json"), []byte(spec), 0o644))
	imp := ok(t, c, "spec", map[string]any{"action": "import", "path": "hand", "auto_fix": false})
	if f := asSlice(imp["files"])[0].(map[string]any); f["outcome"] != "imported" {
		t.Fatalf("import: %v", imp)
	}
}
