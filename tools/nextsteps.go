package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// The domain suggests next steps as facts (specs.NextStep: what to do on
// which spec and task) and names no tools; the calls that take them are
// named here, where the tools are.

// specCall is the shape of most next calls: tool's action on a spec (its
// spec_id unless noSpec) and, when task is set, on one of its tasks, plus
// fixed arguments.
type specCall struct {
	tool, action string
	noSpec, task bool
	fixed        [][2]string
}

// The next calls the tools name for the domain's steps and refusals.
var (
	callSpecGet        = specCall{tool: "spec", action: "get"}
	callSpecList       = specCall{tool: "spec", action: "list", noSpec: true}
	callSpecHistory    = specCall{tool: "spec", action: "history"}
	callTaskList       = specCall{tool: "task", action: "list"}
	callTaskHierarchy  = specCall{tool: "task", action: "hierarchy"}
	callTaskInfo       = specCall{tool: "task", action: "info", task: true}
	callCheckDeps      = specCall{tool: "task", action: "check-deps", task: true}
	callReopen         = specCall{tool: "task", action: "reopen", task: true, fixed: [][2]string{{"reason", "retry after failure"}}}
	callLifecycleState = specCall{tool: "lifecycle", action: "state"}
	callCompleteSpec   = specCall{tool: "lifecycle", action: "complete"}
)

// on is c on spec specID and task taskID.
func (c specCall) on(specID, taskID string) core.NextCall {
	args := make(map[string]any, 3+len(c.fixed))
	args["action"] = c.action
	if !c.noSpec {
		args["spec_id"] = specID
	}
	if c.task {
		args["task_id"] = taskID
	}
	for _, kv := range c.fixed {
		args[kv[0]] = kv[1]
	}
	return core.NextCall{Tool: c.tool, Args: args}
}

// stepCalls is the call that takes each kind of step.
var stepCalls = map[specs.StepKind]specCall{
	specs.StepCompleteSpec: callCompleteSpec,
	specs.StepRetry:        callReopen,
	specs.StepCheckDeps:    callCheckDeps,
	specs.StepTaskInfo:     callTaskInfo,
}

// stepCall is the call that takes step s.
func stepCall(s specs.NextStep) core.NextCall { return stepCalls[s.Kind].on(s.SpecID, s.TaskID) }

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
