package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// The domain suggests next steps as facts (specs.NextStep: what to do on
// which spec and task) and names no tools; the calls that take them are
// named here, where the tools are.

// stepCall is the call that takes step s.
func stepCall(s specs.NextStep) core.NextCall {
	switch s.Kind {
	case specs.StepCompleteSpec:
		return core.NextCall{Tool: "lifecycle", Args: map[string]any{"action": "complete", "spec_id": s.SpecID}}
	case specs.StepRetry:
		return taskCall("reopen", s, "reason", "retry after failure")
	case specs.StepCheckDeps:
		return taskCall("check-deps", s)
	default: // specs.StepTaskInfo
		return taskCall("info", s)
	}
}

// taskCall is the task action on s's spec and task, with more argument
// pairs.
func taskCall(action string, s specs.NextStep, more ...string) core.NextCall {
	args := map[string]any{"action": action, "spec_id": s.SpecID, "task_id": s.TaskID}
	for i := 0; i+1 < len(more); i += 2 {
		args[more[i]] = more[i+1]
	}
	return core.NextCall{Tool: "task", Args: args}
}

// nameFailed fills in the retry call of every failed task.
func nameFailed(failed []specs.FailedTaskItem) {
	for i := range failed {
		failed[i].Retry = stepCall(failed[i].Step)
	}
}

// nameNothing fills in the calls of a nothing-actionable answer (nil:
// none).
func nameNothing(na *specs.NothingActionable) {
	if na == nil {
		return
	}
	nameFailed(na.Failed)
	if na.Next != nil {
		c := stepCall(*na.Next)
		na.NextCall = &c
	}
}
