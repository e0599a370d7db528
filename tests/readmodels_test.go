package tests

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestReadModelsAgreeWithRefusals: what task info and lifecycle state say
// can be done is what the move does, for the session that asks: can_start
// of a task another session holds is false for it (and its start is
// refused) and true for the holder; of a completed task, false; can_complete
// of a pending spec at 100% progress is false (complete is refused: a
// pending spec is activated first), and true once it is active.
func TestReadModelsAgreeWithRefusals(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer", "bob:maintainer"})
	ann, bob := s.client(t, "ann"), s.client(t, "bob")
	fx := fixture(t, ann)
	spec, t1 := fx["$spec_id"], fx["$task_id"]

	// agrees checks that the read's flag is what the move (made on a
	// state where it changes nothing when refused) does.
	agrees := func(who string, c *client.Client, read map[string]any, flag string, move map[string]any, want bool) {
		t.Helper()
		d := data(mustCall(t, c, read["tool"].(string), without(read, "tool")))
		if sub, ok := d["task"].(map[string]any); ok && d[flag] == nil {
			d = sub
		}
		if got := d[flag]; got != want {
			t.Fatalf("%s: %s %s says %s = %v, want %v: %s", who, read["tool"], read["action"], flag, got, want, compactJSON(d))
		}
		env := call(t, c, move["tool"].(string), without(move, "tool"))
		if (env["success"] == true) != want {
			t.Fatalf("%s: %s = %v but %s %s answered %s", who, flag, want, move["tool"], move["action"], compactJSON(data(env)))
		}
	}
	info := map[string]any{"tool": "task", "action": "info", "spec_id": spec, "task_id": t1}
	start := map[string]any{"tool": "task", "action": "start", "spec_id": spec, "task_id": t1}

	mustCall(t, ann, "task", map[string]any{"action": "start", "spec_id": spec, "task_id": t1})
	agrees("a task ann holds, asked by bob", bob, info, "can_start", start, false)
	agrees("a task ann holds, asked by ann", ann, info, "can_start", start, true)
	mustCall(t, ann, "task", map[string]any{"action": "complete", "spec_id": spec, "task_id": t1, "completion_note": "done"})
	agrees("a completed task", ann, info, "can_start", start, false)

	// A pending spec whose one task is completed: 100%, but complete is
	// refused until it is active.
	id := data(mustCall(t, ann, "authoring", map[string]any{"action": "spec-create", "name": "read models"}))["spec_id"].(string)
	ids := data(mustCall(t, ann, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "One"},
		"tasks": []any{map[string]any{"title": "Only task", "task_category": "implementation", "file_path": "a.go", "description": "do it"}}}))["task_ids"].([]any)
	mustCall(t, ann, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": ids[0], "completion_note": "done"})
	state := map[string]any{"tool": "lifecycle", "action": "state", "spec_id": id}
	complete := map[string]any{"tool": "lifecycle", "action": "complete", "spec_id": id}
	agrees("a pending spec at 100%", ann, state, "can_complete", complete, false)
	mustCall(t, ann, "lifecycle", map[string]any{"action": "activate", "spec_id": id})
	agrees("an active spec at 100%", ann, state, "can_complete", complete, true)
}

// without is m without key k.
func without(m map[string]any, k string) map[string]any {
	out := copyArgs(m)
	delete(out, k)
	return out
}
