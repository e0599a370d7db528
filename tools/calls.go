package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
)

// The calls the tools name as a next call (a refusal's recovery, an
// answer's next_calls, a listing's restart and continuation), each built
// from the target action's own typed argument struct: the compiler checks
// the field names and TestCallTargetsBindTheirActions holds every target's
// struct to the one its action binds, so a suggested call names only
// parameters the action declares.

// callTargets lists every target declared with target, for the test.
var callTargets []mcptool.CallTarget

// target declares the action tool(action), whose arguments are T, as one
// the tools name in next calls.
func target[T any](tool, action string) mcptool.Target[T] {
	t := mcptool.Target[T]{Tool: tool, Action: action}
	callTargets = append(callTargets, t)
	return t
}

var (
	toTaskSession        = target[sessionArgs]("task", "session")
	toTaskSessionStep    = target[sessionStepArgs]("task", "session-step")
	toTaskSessionEvents  = target[sessionEventsArgs]("task", "session-events")
	toTaskInfo           = target[taskNodeArgs]("task", "info")
	toTaskUpdateMetadata = target[taskMetadataArgs]("task", "update-metadata")
	toTaskList           = target[taskListArgs]("task", "list")
	toTaskHierarchy      = target[taskHierarchyArgs]("task", "hierarchy")
	toTaskListBlocked    = target[taskListBlockedArgs]("task", "list-blocked")

	toSpecList    = target[specListArgs]("spec", "list")
	toSpecGet     = target[specGetArgs]("spec", "get")
	toSpecHistory = target[specHistoryArgs]("spec", "history")
	toSpecDiff    = target[specDiffArgs]("spec", "diff")

	toJournalList            = target[journalListArgs]("journal", "list")
	toJournalListUnjournaled = target[journalUnjournaledArgs]("journal", "list-unjournaled")

	toResearchDigestList   = target[digestListArgs]("research", "digest-list")
	toResearchDigestCreate = target[digestCreateArgs]("research", "digest-create")

	toAuthoringPhaseTemplate = target[phaseTemplateArgs]("authoring", "phase-template")
	toAuthoringSpecTemplate  = target[specTemplateArgs]("authoring", "spec-template")
	toAuthoringIntakeList    = target[intakeListArgs]("authoring", "intake-list")

	toServerSchema       = target[serverSchemaArgs]("server", "schema")
	toServerCapabilities = target[noArgs]("server", "capabilities")
	toServerContext      = target[serverContextArgs]("server", "context")
	toServerTools        = target[serverToolsArgs]("server", "tools")

	toHealthReadiness   = target[noArgs]("health", "readiness")
	toTestDiscover      = target[noArgs]("test", "discover")
	toEnvironmentDetect = target[noArgs]("environment", "detect")
	toPlanList          = target[noArgs]("plan", "list")
	toPlanReview        = target[planReviewArgs]("plan", "review")
	toErrorList         = target[errorListArgs]("error", "list")
)

// specOf is the specArgs naming id.
func specOf(id string) specArgs { return specArgs{SpecID: id} }

// sessionListCall lists the autonomy sessions: the next call of a session
// refusal that has no better one (it runs with no other argument).
func sessionListCall() core.NextCall { return toTaskSession.Call(sessionArgs{Command: "list"}) }

// sessionStepCall is session-step command for the session of specID.
func sessionStepCall(command, specID string, heartbeat bool) core.NextCall {
	return toTaskSessionStep.Call(sessionStepArgs{Command: command, SpecID: specID, Heartbeat: heartbeat})
}

// digestListCall lists the research digests.
func digestListCall() core.NextCall { return toResearchDigestList.Call(digestListArgs{}) }

// testDiscoverCall discovers the workspace's tests.
func testDiscoverCall() core.NextCall { return toTestDiscover.Call(noArgs{}) }

// serverSchemaCall is the published schema of tool.
func serverSchemaCall(tool string) core.NextCall {
	return toServerSchema.Call(serverSchemaArgs{ToolName: tool})
}
