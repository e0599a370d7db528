package tools

import (
	"reflect"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// TestStepCalls: every step the domain suggests becomes the call that takes
// it, and nothingActionable names the answer's next call and every retry.
func TestStepCalls(t *testing.T) {
	const spec = "s-1"
	for _, tc := range []struct {
		step specs.NextStep
		want core.NextCall
	}{
		{specs.NextStep{Kind: specs.StepCompleteSpec, SpecID: spec}, core.NextCall{Tool: "lifecycle", Args: map[string]any{"action": "complete", "spec_id": spec}}},
		{specs.NextStep{Kind: specs.StepRetry, SpecID: spec, TaskID: "task-1"}, core.NextCall{Tool: "task", Args: map[string]any{"action": "reopen", "spec_id": spec, "task_id": "task-1", "reason": "retry after failure"}}},
		{specs.NextStep{Kind: specs.StepCheckDeps, SpecID: spec, TaskID: "task-2"}, core.NextCall{Tool: "task", Args: map[string]any{"action": "check-deps", "spec_id": spec, "task_id": "task-2"}}},
		{specs.NextStep{Kind: specs.StepTaskInfo, SpecID: spec, TaskID: "task-3"}, core.NextCall{Tool: "task", Args: map[string]any{"action": "info", "spec_id": spec, "task_id": "task-3"}}},
	} {
		if got := stepCall(tc.step); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.step.Kind, got, tc.want)
		}
	}
	retry := specs.NextStep{Kind: specs.StepRetry, SpecID: spec, TaskID: "task-1"}
	na := nothingActionable(spec, &specs.Idle{Failed: []specs.FailedTask{{TaskID: "task-1", RetryCount: 2}}, Next: &retry})
	if na.NextCall == nil || na.NextCall.Args["action"] != "reopen" || len(na.Failed) != 1 || na.Failed[0].Retry.Args["task_id"] != "task-1" || na.Failed[0].RetryCount != 2 {
		t.Fatalf("%+v", na)
	}
	if nothingActionable(spec, nil) != nil {
		t.Fatal("no idle, yet an account of nothing actionable")
	}
}
