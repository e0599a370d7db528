package tools

import (
	"reflect"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs/autonomy"
)

// TestAutonomyErrorNamesEachRefusalsCall pins autonomyError's recovery per
// refusal code: the command, the details it reads, when the caller's
// session_id is filled in, and the loop signal a supervisor branches on.
func TestAutonomyErrorNamesEachRefusalsCall(t *testing.T) {
	type args = map[string]any
	cases := []struct {
		code    string
		details map[string]any
		session string
		want    args
		signal  string
	}{
		{errcode.SpecSessionExists, args{"existing_session_id": "e1", "session_id": "s2"}, "sid",
			args{"action": "session", "command": "status", "session_id": "e1", "spec_id": "spec-a"}, ""},
		{errcode.AutonomyWriteLockActive, args{"session_id": "s2"}, "sid",
			args{"action": "session", "command": "status", "session_id": "s2", "spec_id": "spec-a"}, autonomy.SignalBlockedRuntime},
		{errcode.GateAlreadyPassed, args{"session_id": ""}, "sid",
			args{"action": "session", "command": "status", "session_id": "sid", "spec_id": "spec-a"}, ""},
		{errcode.SessionNotFound, nil, "sid", args{"action": "session", "command": "list", "spec_id": "spec-a"}, ""},
		{errcode.NoActiveSession, nil, "sid", args{"action": "session", "command": "list", "spec_id": "spec-a"}, ""},
		{errcode.StepProofMismatch, nil, "sid",
			args{"action": "session-step", "command": "replay", "session_id": "sid", "spec_id": "spec-a"}, autonomy.SignalBlockedRuntime},
		{errcode.StepMismatch, nil, "", args{"action": "session-step", "command": "replay", "spec_id": "spec-a"}, ""},
		{errcode.SpecRebaseRequired, args{"removed_completed_tasks": []string{"task-1"}}, "sid",
			args{"action": "session", "command": "rebase", "force": true, "session_id": "sid", "spec_id": "spec-a"}, autonomy.SignalFailed},
		{errcode.SpecRebaseRequired, nil, "", args{"action": "session", "command": "rebase", "spec_id": "spec-a"}, autonomy.SignalFailed},
		{errcode.ManualGateAckRequired, args{"gate_attempt_id": "g1"}, "sid",
			args{"action": "session", "command": "resume", "acknowledge_gate_review": true, "acknowledged_gate_attempt_id": "g1", "session_id": "sid", "spec_id": "spec-a"}, ""},
		{errcode.InvalidGateAck, args{"expected": "g2"}, "",
			args{"action": "session", "command": "resume", "acknowledge_gate_review": true, "acknowledged_gate_attempt_id": "g2", "spec_id": "spec-a"}, ""},
		{errcode.NotFound, nil, "sid",
			args{"action": "session-step", "command": "next", "heartbeat": true, "session_id": "sid", "spec_id": "spec-a"}, ""},
	}
	for _, c := range cases {
		e := core.AsError(autonomyError(core.NewError(c.code, "refused", c.details), "spec-a", c.session))
		if e.Recovery == nil || e.Recovery.Tool != "task" || !reflect.DeepEqual(e.Recovery.Args, c.want) {
			t.Errorf("%s %v: recovery %+v, want task %v", c.code, c.details, e.Recovery, c.want)
			continue
		}
		if got, _ := e.Extra["loop_signal"].(string); got != c.signal {
			t.Errorf("%s: loop_signal %q, want %q", c.code, got, c.signal)
		}
		if acts, _ := e.Extra["recommended_actions"].([]RecommendedAction); (len(acts) > 0) != (c.signal != "") {
			t.Errorf("%s: recommended_actions %v with signal %q", c.code, acts, c.signal)
		}
	}
	// A refusal that already names its call keeps it.
	named := core.NewError(errcode.StepProofMismatch, "refused", nil).WithNext(sessionListCall(), nil)
	if e := core.AsError(autonomyError(named, "spec-a", "sid")); !reflect.DeepEqual(e.Recovery.Args, map[string]any{"action": "session", "command": "list"}) || e.Extra != nil {
		t.Errorf("named call: %+v %v", e.Recovery, e.Extra)
	}
}

// TestRecommendedActionsFallBackToTriage pins the table's lookups and their
// fallbacks: a known pause reason or code gets its row, another one the
// triage row, a success signal nothing.
func TestRecommendedActionsFallBackToTriage(t *testing.T) {
	first := func(signal, reason, code string) string {
		acts := recommendedActions(signal, reason, code)
		if len(acts) == 0 {
			return ""
		}
		return acts[0].Action
	}
	cases := []struct{ signal, reason, code, want string }{
		{autonomy.SignalPausedNeedsAttention, autonomy.PauseContextLimit, "", "resume_in_fresh_context"},
		{autonomy.SignalPausedNeedsAttention, autonomy.PauseTaskLimit, errcode.StepProofMissing, "start_followup_session"},
		{autonomy.SignalPausedNeedsAttention, autonomy.PauseUser, "", "manual_triage"},
		{autonomy.SignalBlockedRuntime, "", errcode.VerificationReceiptInvalid, "regenerate_verification_receipt"},
		{autonomy.SignalBlockedRuntime, autonomy.PauseContextLimit, errcode.Validation, "resolve_runtime_blocker"},
		{autonomy.SignalFailed, "", "", "collect_failure_context"},
		{autonomy.SignalPhaseComplete, autonomy.PauseContextLimit, errcode.StepProofMissing, ""},
	}
	for _, c := range cases {
		if got := first(c.signal, c.reason, c.code); got != c.want {
			t.Errorf("%s/%s/%s: %q, want %q", c.signal, c.reason, c.code, got, c.want)
		}
	}
	// The caller owns the slice: changing it leaves the table alone.
	recommendedActions(autonomy.SignalFailed, "", "")[0].Action = "changed"
	if got := first(autonomy.SignalFailed, "", ""); got != "collect_failure_context" {
		t.Fatalf("the table changed: %q", got)
	}
}
