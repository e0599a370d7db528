package autonomy

import (
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestLoopSignalTable pins the loop signal of every status, pause reason
// and error code combination a supervisor branches on.
func TestLoopSignalTable(t *testing.T) {
	for _, c := range []struct {
		status, reason, code, want string
	}{
		{StatusPaused, PausePhaseComplete, "", SignalPhaseComplete},
		{StatusRunning, PausePhaseComplete, "", ""},
		{StatusCompleted, "", errcode.SpecRebaseRequired, SignalSpecComplete},
		{StatusCompleted, "", "", SignalSpecComplete},
		{"", "", errcode.GateIntegrityChecksum, SignalBlockedRuntime},
		{StatusFailed, "", errcode.StepProofMissing, SignalBlockedRuntime},
		{StatusPaused, "", errcode.StepProofMismatch, SignalBlockedRuntime},
		{"", "", errcode.StepProofConflict, SignalBlockedRuntime},
		{"", "", errcode.VerificationReceiptMissing, SignalBlockedRuntime},
		{"", "", errcode.VerificationReceiptInvalid, SignalBlockedRuntime},
		{"", "", errcode.Forbidden, SignalBlockedRuntime},
		{"", "", errcode.AutonomyWriteLockActive, SignalBlockedRuntime},
		{StatusPaused, "", errcode.SpecRebaseRequired, SignalFailed},
		{"", "", errcode.SpecRebaseRequired, SignalFailed},
		{StatusFailed, "", "", SignalFailed},
		{StatusPaused, PauseUser, "", SignalPausedNeedsAttention},
		{StatusPaused, "", errcode.Validation, SignalPausedNeedsAttention},
		{StatusRunning, "", "", ""},
		{StatusEnded, "", "", ""},
		{"", "", errcode.Validation, ""},
	} {
		if got := LoopSignal(c.status, c.reason, c.code); got != c.want {
			t.Errorf("LoopSignal(%q, %q, %q) = %q, want %q", c.status, c.reason, c.code, got, c.want)
		}
	}
}
