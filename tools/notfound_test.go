package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnknownNodeIsOneErrorEverywhere: a node id that names nothing is the
// same answer whichever action and argument named it — the code (phase-like
// ids are PHASE_NOT_FOUND), the message, the field, and the recovery (task
// list for a task, task hierarchy for a phase) with fuzzy matches.
func TestUnknownNodeIsOneErrorEverywhere(t *testing.T) {
	h := newTaskHarness(t)
	h.d.VerificationExecute = true
	h.reg = New(h.d)
	type want struct{ code, recovery, what string }
	task, phase := want{"TASK_NOT_FOUND", "list", "node"}, want{"PHASE_NOT_FOUND", "hierarchy", "phase"}
	tests := []struct {
		tool  string
		field string
		args  map[string]any
		want  want
	}{
		{"task", "task_id", map[string]any{"action": "start", "task_id": "task-1-9"}, task},
		{"task", "task_id", map[string]any{"action": "prepare", "task_id": "task-1-9"}, task},
		{"task", "parent", map[string]any{"action": "query", "parent": "task-1-9"}, task},
		{"task", "parent", map[string]any{"action": "query", "parent": "phase-9"}, phase},
		{"task", "node_id", map[string]any{"action": "progress", "node_id": "task-1-9"}, task},
		{"task", "parent", map[string]any{"action": "metadata-batch", "parent": "task-1-9", "updates": map[string]any{"estimated_hours": 1}}, task},
		{"verification", "verify_id", map[string]any{"action": "execute", "verify_id": "task-1-9"}, task},
		{"task", "parent", map[string]any{"action": "add", "parent": "phase-9", "title": "x"}, phase},
	}
	for _, tc := range tests {
		name := fmt.Sprint(tc.tool, " ", tc.args["action"], " ", tc.field)
		env := h.call("s1", tc.tool, tc.args)
		d, _ := env["data"].(map[string]any)
		rec, _ := d["recovery"].(map[string]any)
		args, _ := rec["suggested_args"].(map[string]any)
		details, _ := d["details"].(map[string]any)
		id := tc.args[tc.field].(string)
		msg, _ := env["error"].(string)
		wantMsg := fmt.Sprintf("%s %q does not exist in spec %s", tc.want.what, id, h.specID)
		if d["error_code"] != tc.want.code || rec["suggested_tool"] != "task" || args["action"] != tc.want.recovery ||
			len(strs(rec["fuzzy_matches"])) == 0 || details["field"] != tc.field || details["received"] != id || !strings.Contains(msg, wantMsg) {
			t.Errorf("%s: want %s, recovery task %s, message %q; got %s", name, tc.want.code, tc.want.recovery, wantMsg, compact(env))
		}
	}
}

// TestVerifyNodeErrorsAgree: verification add and execute refuse a verify
// id the same way (one rule, specs.VerifyNode): same code, message and
// details for an unknown id, a phase-like id and a node of another kind.
func TestVerifyNodeErrorsAgree(t *testing.T) {
	h := newTaskHarness(t)
	h.d.VerificationExecute = true
	h.reg = New(h.d)
	for _, id := range []string{"verify-1-9", "phase-9", "task-1-1", "spec-root"} {
		add := h.call("s1", "verification", map[string]any{"action": "add", "verify_id": id, "result": "PASSED"})
		exec := h.call("s1", "verification", map[string]any{"action": "execute", "verify_id": id})
		ad, _ := add["data"].(map[string]any)
		ed, _ := exec["data"].(map[string]any)
		if add["success"] != false || add["error"] != exec["error"] || ad["error_code"] != ed["error_code"] || compact(ad["details"]) != compact(ed["details"]) {
			t.Errorf("%s: add %s\nexecute %s", id, compact(add), compact(exec))
		}
	}
}
