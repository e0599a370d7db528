package tools

import (
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// TestObjectArgsBindStrictly: phase-add-bulk's phase and tasks[i] and
// complete-batch's completions[i] follow one rule: unknown keys (the first
// in sorted order, the same on every call) are UNKNOWN_PARAMETER with the
// tool's schema as recovery, wrong types INVALID_FORMAT, missing required
// keys MISSING_REQUIRED, each naming path.key.
func TestObjectArgsBindStrictly(t *testing.T) {
	for _, tc := range []struct {
		name  string
		bind  func() error
		code  string
		field string
		tool  string // recovery tool_name, for unknown keys
	}{
		{"task unknown keys: the first sorted", func() error {
			_, err := taskInputs([]any{map[string]any{"zeta": 1, "gamma": 1, "alpha": 1, "title": "x"}})
			return err
		}, errcode.UnknownParameter, "tasks[0].alpha", "authoring"},
		{"task title not a string", func() error {
			_, err := taskInputs([]any{map[string]any{"title": "ok"}, map[string]any{"title": 3}})
			return err
		}, errcode.InvalidFormat, "tasks[1].title", ""},
		{"task hours negative", func() error {
			_, err := taskInputs([]any{map[string]any{"title": "x", "estimated_hours": -1.0}})
			return err
		}, errcode.InvalidFormat, "tasks[0].estimated_hours", ""},
		{"task criterion not a string", func() error {
			_, err := taskInputs([]any{map[string]any{"title": "x", "acceptance_criteria": []any{"a", 2.0}}})
			return err
		}, errcode.InvalidFormat, "tasks[0].acceptance_criteria[1]", ""},
		{"completion unknown keys: the first sorted", func() error {
			_, err := completionOf(0, map[string]any{"task_id": "task-1-1", "success": true, "zz": 1, "bogus": 1, "mm": 1})
			return errOrNil(err)
		}, errcode.UnknownParameter, "completions[0].bogus", "task"},
		{"completion without task_id", func() error {
			_, err := completionOf(2, map[string]any{"success": true})
			return errOrNil(err)
		}, errcode.MissingRequired, "completions[2].task_id", ""},
		{"completion without success", func() error {
			_, err := completionOf(0, map[string]any{"task_id": "task-1-1"})
			return errOrNil(err)
		}, errcode.MissingRequired, "completions[0].success", ""},
		{"completion note not a string", func() error {
			_, err := completionOf(0, map[string]any{"task_id": "task-1-1", "success": true, "note": 1.0})
			return errOrNil(err)
		}, errcode.InvalidFormat, "completions[0].note", ""},
		{"phase unknown keys: the first sorted", func() error {
			_, err := phaseObject(map[string]any{"title": "P", "zz": 1, "colour": 1, "size": 1}, specs.PhaseInput{}, nil)
			return err
		}, errcode.UnknownParameter, "phase.colour", "authoring"},
		{"phase without title", func() error {
			_, err := phaseObject(map[string]any{"description": "d"}, specs.PhaseInput{}, nil)
			return err
		}, errcode.MissingRequired, "phase.title", ""},
		{"phase metadata not an object", func() error {
			_, err := phaseObject(map[string]any{"title": "P", "metadata": "x"}, specs.PhaseInput{}, nil)
			return err
		}, errcode.InvalidFormat, "phase.metadata", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.bind()
			e := core.AsError(err)
			if e == nil || e.Code != tc.code || e.Details["field"] != tc.field {
				t.Fatalf("got %v (details %v), want %s on %s", err, e, tc.code, tc.field)
			}
			if tc.tool != "" && (e.Recovery == nil || e.Recovery.Tool != "server" || e.Recovery.Args["tool_name"] != tc.tool) {
				t.Fatalf("recovery %+v, want server schema of %s", e.Recovery, tc.tool)
			}
		})
	}
	// A valid item binds every field.
	tasks, err := taskInputs([]any{map[string]any{"type": "verify", "title": "v", "estimated_hours": 1.5, "acceptance_criteria": []any{"a"}, "command": "go test"}})
	if err != nil || len(tasks) != 1 || tasks[0].Title != "v" || *tasks[0].EstimatedHours != 1.5 || tasks[0].Command != "go test" || tasks[0].AcceptanceCriteria[0] != "a" {
		t.Fatalf("bound %+v, %v", tasks, err)
	}
}
