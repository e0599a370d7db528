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
	callMoveTask       = specCall{tool: "task", action: "move", task: true}
	callFixSpec        = specCall{tool: "spec", action: "fix"}
	// callFirstPhase fills a spec with no phases: its first phase.
	callFirstPhase = specCall{tool: "authoring", action: "phase-add", fixed: [][2]string{{"title", "Phase 1"}}}
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
	specs.StepIntoPhase:    callMoveTask,
	specs.StepFixSpec:      callFixSpec,
}

// stepCall is the call that takes step s (a move's target as parent).
func stepCall(s specs.NextStep) core.NextCall {
	c := stepCalls[s.Kind].on(s.SpecID, s.TaskID)
	if s.Parent != "" {
		c.Args["parent"] = s.Parent
	}
	return c
}

// NothingActionable is the answer's account of an empty next: blocked
// tasks with what they wait on, failed tasks with the call that retries
// each, tasks in progress with who started them, a hint, and the call that
// takes the next step (omitted: none).
type NothingActionable struct {
	Blocked    []specs.BlockedTask    `json:"blocked"`
	Failed     []FailedTaskItem       `json:"failed"`
	InProgress []specs.InProgressTask `json:"in_progress"`
	Hint       string                 `json:"hint"`
	NextCall   *core.NextCall         `json:"next_call,omitempty"`
}

// FailedTaskItem is a failed task with retry: the call that retries it as
// given (task reopen with a reason: back to pending, retry_count kept, so
// that next and prepare-batch offer it again).
type FailedTaskItem struct {
	TaskID        string        `json:"task_id"`
	RetryCount    int           `json:"retry_count"`
	Retry         core.NextCall `json:"retry"`
	FailureReason string        `json:"failure_reason,omitempty"`
}

// failedItems are the failed tasks of spec specID, each with the call that
// takes its retry step (specs.RetryStep); never nil.
func failedItems(specID string, failed []specs.FailedTask) []FailedTaskItem {
	out := make([]FailedTaskItem, 0, len(failed))
	for _, f := range failed {
		out = append(out, FailedTaskItem{TaskID: f.TaskID, RetryCount: f.RetryCount, FailureReason: f.Reason,
			Retry: stepCall(specs.RetryStep(specID, f))})
	}
	return out
}

// nothingActionable is idle (nil: nil) as the answer shows it, every step
// turned into the call that takes it.
func nothingActionable(specID string, idle *specs.Idle) *NothingActionable {
	if idle == nil {
		return nil
	}
	na := &NothingActionable{Blocked: idle.Blocked, Failed: failedItems(specID, idle.Failed), InProgress: idle.InProgress, Hint: idle.Hint}
	if idle.Next != nil {
		c := stepCall(*idle.Next)
		na.NextCall = &c
	}
	return na
}

// refusalSteps is the call that takes each step a refusal of the domain or
// its stores carries (core.Error.Step): the step's args are the subject's
// identifiers, added to the call's action.
var refusalSteps = map[string]specCall{
	"spec-list":    callSpecList,
	"spec-get":     callSpecGet,
	"spec-history": callSpecHistory,
	"export-to":    {tool: "spec", action: "export", noSpec: true},
	"intake-list":  {tool: "authoring", action: "intake-list", noSpec: true},
	"error-list":   {tool: "error", action: "list", noSpec: true},
	"digest-list":  {tool: "research", action: "digest-list", noSpec: true},
	// A refused transition's one allowed move toward what was asked.
	"lifecycle-move": {tool: "lifecycle", action: "move"},
	"task-start":     {tool: "task", action: "start"},
	"task-complete":  {tool: "task", action: "complete"},
	"task-unblock":   {tool: "task", action: "unblock"},
	"task-reopen":    {tool: "task", action: "reopen"},
	// The removal of the one stored edge that closes a refused cycle.
	"task-remove-dependency": {tool: "task", action: "remove-dependency"},
}

// refusalCall is the call that takes a refusal's step s (mcptool's
// StepCalls): its action and fixed arguments, then s's identifiers.
func refusalCall(s *core.Step) (core.NextCall, bool) {
	c, ok := refusalSteps[s.Kind]
	if !ok {
		return core.NextCall{}, false
	}
	spec, _ := s.Args["spec_id"].(string)
	next := c.on(spec, "")
	for k, v := range s.Args {
		next.Args[k] = v
	}
	return next, true
}
