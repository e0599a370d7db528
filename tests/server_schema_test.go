package tests

import (
	"strings"
	"testing"
)

// TestServerSchemaOfABigTool: a tool whose full schema is over the token
// budget (task: 30 actions with their answer schemas) is still described —
// without the answer schemas, with a warning naming action_name — and
// action_name gives one action in full; an unknown action_name is NOT_FOUND
// whose recovery runs.
func TestServerSchemaOfABigTool(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), protocols[0])
	env := call(t, c, "server", map[string]any{"action": "schema", "tool_name": "task"})
	if env["success"] != true {
		t.Fatalf("server schema task: %v", data(env))
	}
	warnings, _ := env["meta"].(map[string]any)["warnings"].([]any)
	if len(warnings) == 0 || !strings.Contains(warnings[0].(string), "action_name") {
		t.Fatalf("no warning naming action_name: %v", env["meta"])
	}
	for _, a := range data(env)["actions"].([]any) {
		if _, has := a.(map[string]any)["answer_schema"]; has {
			t.Fatalf("answer_schema kept over the budget: %v", a.(map[string]any)["name"])
		}
	}
	one := data(call(t, c, "server", map[string]any{"action": "schema", "tool_name": "task", "action_name": "Prepare_Batch"}))
	actions := one["actions"].([]any)
	if len(actions) != 1 || actions[0].(map[string]any)["name"] != "prepare-batch" || actions[0].(map[string]any)["answer_schema"] == nil {
		t.Fatalf("action_name prepare-batch: %v", one)
	}
	bad := call(t, c, "server", map[string]any{"action": "schema", "tool_name": "task", "action_name": "nxt"})
	rec, _ := data(bad)["recovery"].(map[string]any)
	if errorCode(bad) != "NOT_FOUND" || rec == nil || !strings.Contains(compactJSON(rec["fuzzy_matches"]), "next") {
		t.Fatalf("unknown action_name: %v", data(bad))
	}
	if again := call(t, c, rec["suggested_tool"].(string), rec["suggested_args"].(map[string]any)); again["success"] != true {
		t.Fatalf("recovery: %v", data(again))
	}
}
