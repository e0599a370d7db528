package tools

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs/specstore"
)

// rerunHarness is the task harness with its tools over storetest.Rerun:
// every store transaction runs its fn twice (an update's first run rolled
// back), as the etcd engine may (bucketstore.Engine). What a tool reads
// inside a Repo fn must answer each row once.
func rerunHarness(t *testing.T) *taskHarness {
	h := newTaskHarness(t)
	h.d.Specs = specstore.New(&storetest.Rerun{Store: h.eng}, nil)
	h.reg = New(h.d)
	return h
}

// TestSessionListSurvivesARerun: session list names each session once.
func TestSessionListSurvivesARerun(t *testing.T) {
	h := rerunHarness(t)
	sid := h.ok("s1", "task", map[string]any{"action": "session", "command": "start"})["session_id"]
	d := h.ok("s1", "task", map[string]any{"action": "session", "command": "list"})
	ss, _ := d["sessions"].([]any)
	if len(ss) != 1 || ss[0].(map[string]any)["session_id"] != sid || d["count"] != 1.0 {
		t.Errorf("session list: %s; want the one session %v", compact(d), sid)
	}
}

// TestMissingTaskCandidatesSurviveARerun: a refusal for a missing task_id
// names each candidate once, so one task in progress is the one candidate.
func TestMissingTaskCandidatesSurviveARerun(t *testing.T) {
	h := rerunHarness(t)
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	ids, _, _ := h.d.missingCandidates(context.Background(), "task", "complete", "task_id", map[string]any{"spec_id": h.specID})
	if !slices.Equal(ids, []string{"task-1-1"}) {
		t.Errorf("candidates %v; want [task-1-1]", ids)
	}
}

// TestPhaseCompletionSurvivesARerun: the complete_phase prompt completes
// phase_id with each phase once.
func TestPhaseCompletionSurvivesARerun(t *testing.T) {
	h := rerunHarness(t)
	c, err := promptCompletion{h.d}.CompletePromptArgument(context.Background(), promptCompletePhase,
		mcp.CompleteArgument{Name: "phase_id", Value: "phase"}, mcp.CompleteContext{Arguments: map[string]string{"spec_id": h.specID}})
	if err != nil || !slices.Equal(c.Values, []string{"phase-1", "phase-2"}) {
		t.Errorf("completion %v, %v; want [phase-1 phase-2]", c, err)
	}
}
