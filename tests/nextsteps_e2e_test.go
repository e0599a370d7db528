package tests

import (
	"fmt"
	"testing"
)

// TestNothingActionableNamesTheRetryCall: the domain suggests next steps as
// facts and names no tools; the task tool names the calls. With the only
// task failed, next and prepare answer next_call = the failed task's retry
// (task reopen), and next, prepare and prepare-batch list it with that
// retry call, which runs as given.
func TestNothingActionableNamesTheRetryCall(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	id := taskOK(t, c, "authoring", map[string]any{"action": "spec-create", "name": "retry loop"})["spec_id"].(string)
	taskOK(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "One"},
		"tasks": []any{map[string]any{"title": "Only", "task_category": "implementation", "file_path": "a.go", "description": "work"}}})
	taskOK(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": id})
	taskOK(t, c, "task", map[string]any{"action": "update-status", "spec_id": id, "task_id": "task-1-1", "status": "in_progress"})
	taskOK(t, c, "task", map[string]any{"action": "complete-batch", "spec_id": id, "completions": []any{map[string]any{"task_id": "task-1-1", "success": false, "note": "broke"}}})

	want := fmt.Sprint(map[string]any{"tool": "task", "args": map[string]any{"action": "reopen", "spec_id": id, "task_id": "task-1-1", "reason": "retry after failure"}})
	for _, action := range []string{"next", "prepare", "prepare-batch"} {
		d := taskOK(t, c, "task", map[string]any{"action": action, "spec_id": id})
		failed, _ := d["failed"].([]any)
		if len(failed) != 1 || fmt.Sprint(failed[0].(map[string]any)["retry"]) != want {
			t.Fatalf("%s: failed %v, want one with retry %s", action, d["failed"], want)
		}
		if action != "prepare-batch" && fmt.Sprint(d["next_call"]) != want {
			t.Fatalf("%s: next_call %v, want %s", action, d["next_call"], want)
		}
	}
	retry := taskOK(t, c, "task", map[string]any{"action": "next", "spec_id": id})["next_call"].(map[string]any)
	taskOK(t, c, retry["tool"].(string), retry["args"].(map[string]any))
	if d := taskOK(t, c, "task", map[string]any{"action": "next", "spec_id": id}); d["found"] != true {
		t.Fatalf("after the retry call: %v", d)
	}
}
