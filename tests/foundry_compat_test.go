package tests

import (
	"fmt"
	"strings"
	"testing"
)

// foundryRow is one foundry-mcp style call (README "Coming from foundry-mcp"):
// the arguments a foundry agent sends, with fixture placeholders ("$spec_id",
// …), and what specd must answer. code "" means success; check, when set,
// inspects the envelope of a success.
type foundryRow struct {
	name  string
	tool  string
	args  map[string]any
	code  string
	check func(t *testing.T, env map[string]any)
}

// foundryTables are the compatibility table, in parts: every parameter or
// spelling foundry-mcp accepts for an action specd shares, each with
// foundry's meaning. Each part runs on a fixture of its own, its rows in
// order, so a row may rely on an earlier one's change. Files add their part
// with an init function.
var foundryTables = map[string][]foundryRow{"spellings": foundrySpellings}

// foundrySpellings: case, clamping and the workspace parameters.
var foundrySpellings = []foundryRow{
	// Action names and enum values in any letter case.
	{name: "action in upper case", tool: "task", args: map[string]any{"action": "Next", "spec_id": "$spec_id"}},
	{name: "snake_case action in mixed case", tool: "task", args: map[string]any{"action": "Check_Deps", "spec_id": "$spec_id", "task_id": "$task_id"}},
	{name: "enum in title case", tool: "task", args: map[string]any{"action": "update-estimate", "spec_id": "$spec_id", "task_id": "$task_id", "complexity": "High"},
		check: wantData("complexity", "high")},
	{name: "requirement_type in title case", tool: "task", args: map[string]any{"action": "add-requirement", "spec_id": "$spec_id", "task_id": "$task_id", "text": "Handles empty input", "requirement_type": "Acceptance"}},
	{name: "lowercase verification result", tool: "verification", args: map[string]any{"action": "add", "spec_id": "$spec_id", "verify_id": "$verify_id", "result": "passed"},
		check: wantData("result", "PASSED")},
	{name: "verification-add (foundry's prefixed name)", tool: "verification", args: map[string]any{"action": "verification-add", "spec_id": "$spec_id", "verify_id": "$verify_id", "result": "PASSED"}},
	{name: "verification_add", tool: "verification", args: map[string]any{"action": "verification_add", "spec_id": "$spec_id", "verify_id": "$verify_id", "result": "PARTIAL"}},
	{name: "lifecycle folder in upper case", tool: "spec", args: map[string]any{"action": "list", "status": "ACTIVE"}},
	// Page sizes over the maximum are clamped with a warning.
	{name: "task list limit over the maximum", tool: "task", args: map[string]any{"action": "list", "spec_id": "$spec_id", "limit": 5000},
		check: wantWarning("limit 5000 is over the maximum")},
	{name: "spec list limit over the maximum", tool: "spec", args: map[string]any{"action": "list", "limit": 5000},
		check: wantWarning("limit 5000 is over the maximum")},
	{name: "server tools limit over the maximum", tool: "server", args: map[string]any{"action": "tools", "limit": 5000},
		check: wantWarning("limit 5000 is over the maximum; 1000 was used.")},
	{name: "hierarchy max_depth over the maximum", tool: "task", args: map[string]any{"action": "hierarchy", "spec_id": "$spec_id", "max_depth": 50},
		check: wantWarning("max_depth 50 is over the maximum; 10 was used.")},
	{name: "prepare-batch max_tasks over 20", tool: "task", args: map[string]any{"action": "prepare-batch", "spec_id": "$spec_id", "max_tasks": 50},
		check: wantWarning("max_tasks 50 is over the maximum; 20 was used.")},
	// workspace / path name this server's workspace.
	{name: "workspace = the workspace", tool: "spec", args: map[string]any{"action": "get", "spec_id": "$spec_id", "workspace": "$workspace"}},
	{name: "workspace = a folder inside it", tool: "task", args: map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "$task_id", "workspace": "$workspace/specs"}},
	{name: "workspace relative", tool: "journal", args: map[string]any{"action": "list", "spec_id": "$spec_id", "workspace": "."}},
	{name: "path = the specs folder", tool: "lifecycle", args: map[string]any{"action": "state", "spec_id": "$spec_id", "path": "specs"}},
	{name: "path absolute inside", tool: "verification", args: map[string]any{"action": "add", "spec_id": "$spec_id", "verify_id": "$verify_id", "result": "FAILED", "path": "$workspace/specs"}},
	{name: "path on authoring", tool: "authoring", args: map[string]any{"action": "phase-add", "spec_id": "$spec_id", "title": "From foundry", "path": "specs"}},
	{name: "workspace elsewhere", tool: "spec", args: map[string]any{"action": "get", "spec_id": "$spec_id", "workspace": "/srv/other-project"}, code: "WORKSPACE_MISMATCH"},
	{name: "path escaping the workspace", tool: "lifecycle", args: map[string]any{"action": "state", "spec_id": "$spec_id", "path": "../elsewhere/specs"}, code: "WORKSPACE_MISMATCH"},
}

func wantData(key string, want any) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		if got := data(env)[key]; got != want {
			t.Errorf("data.%s = %v, want %v", key, got, want)
		}
	}
}

func wantWarning(prefix string) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		meta, _ := env["meta"].(map[string]any)
		for _, w := range meta["warnings"].([]any) {
			if strings.HasPrefix(fmt.Sprint(w), prefix) {
				return
			}
		}
		t.Errorf("no warning starting %q in %v", prefix, meta["warnings"])
	}
}

// TestFoundryCompatibility runs the compatibility table through a real MCP
// client: each foundry-style call succeeds with foundry's meaning (or fails
// with the code its row names, whose recovery must run as given).
func TestFoundryCompatibility(t *testing.T) {
	t.Parallel()
	tmpl := newFixtureTemplate(t, protocols[0], false)
	for part, rows := range foundryTables {
		t.Run(part, func(t *testing.T) {
			t.Parallel()
			runFoundryRows(t, tmpl, rows)
		})
	}
}

func runFoundryRows(t *testing.T, tmpl *fixtureTemplate, rows []foundryRow) {
	deps, fx := tmpl.open(t)
	fx["$workspace"] = deps.Workspace
	c, _ := inProcess(t, deps, protocols[0])
	for _, row := range rows {
		args := substitute(row.args, fx).(map[string]any)
		for k, v := range args {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "$workspace/") {
				args[k] = deps.Workspace + strings.TrimPrefix(s, "$workspace")
			}
		}
		env := call(t, c, row.tool, args)
		if row.code == "" {
			if env["success"] != true {
				t.Errorf("%s: %s %v: want success, got %v", row.name, row.tool, args, data(env))
				continue
			}
			if row.check != nil {
				t.Run(row.name, func(t *testing.T) { row.check(t, env) })
			}
			continue
		}
		if errorCode(env) != row.code {
			t.Errorf("%s: want %s, got %v", row.name, row.code, env)
			continue
		}
		rec, _ := data(env)["recovery"].(map[string]any)
		tool, _ := rec["suggested_tool"].(string)
		next, _ := rec["suggested_args"].(map[string]any)
		if tool == "" || next == nil {
			t.Errorf("%s: %s needs a recovery call: %v", row.name, row.code, data(env))
			continue
		}
		// A recovery that is a move (a refused transition's allowed one: a
		// mutation, which takes dry_run) runs as a dry run, so the rows
		// after it see the state they were written for.
		probe := copyArgs(next)
		probe["dry_run"] = true
		again := call(t, c, tool, probe)
		if errorCode(again) == "UNKNOWN_PARAMETER" {
			again = call(t, c, tool, next)
		}
		if again["success"] != true {
			t.Errorf("%s: recovery %s %v does not run: %v", row.name, tool, next, data(again))
		}
	}
}
