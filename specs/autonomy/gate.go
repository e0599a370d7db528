package autonomy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/specd/specd/specs"
)

// Finding is one reason a gate did not pass.
type Finding struct {
	Type        string `json:"type"`
	NodeID      string `json:"node_id"`
	Description string `json:"description"`
}

// PhaseVerdict computes a phase gate's verdict from evidence alone, no
// model involved:
//
//   - every task leaf of the phase is completed;
//   - every verify leaf is completed, its last recorded verification result
//     is PASSED, and, when it has a command, the session holds its receipt
//     with exit code 0 whose command_hash is the sha256 of that command.
//
// The verdict is pass when every check holds, warn when the only findings
// are PARTIAL verification results, fail otherwise.
func PhaseVerdict(sp *specs.Spec, s *Session, phaseID string) (verdict string, findings []Finding) {
	findings = []Finding{}
	p, ok := phaseOf(planOf(sp), phaseID)
	if !ok {
		return VerdictFail, append(findings, Finding{"phase_missing", phaseID, "the phase is not in the spec"})
	}
	partialOnly := true
	add := func(f Finding) {
		if f.Type != "verification_partial" {
			partialOnly = false
		}
		findings = append(findings, f)
	}
	for _, t := range p.Tasks {
		if t.Status != specs.StatusCompleted {
			add(Finding{"task_incomplete", t.ID, fmt.Sprintf("task %s is %s, not completed", t.ID, t.Status)})
		}
	}
	for _, v := range p.Verifies {
		if v.Status != specs.StatusCompleted {
			add(Finding{"verification_incomplete", v.ID, fmt.Sprintf("verify node %s is %s, not completed", v.ID, v.Status)})
		}
		last := lastResult(v)
		switch last {
		case "PASSED":
		case "PARTIAL":
			add(Finding{"verification_partial", v.ID, fmt.Sprintf("verify node %s's last result is PARTIAL", v.ID)})
		case "":
			add(Finding{"verification_unrecorded", v.ID, fmt.Sprintf("verify node %s has no recorded result", v.ID)})
		default:
			add(Finding{"verification_failed", v.ID, fmt.Sprintf("verify node %s's last result is %s", v.ID, last)})
		}
		cmd := v.MetaString("command")
		if cmd == "" {
			continue
		}
		rc, ok := s.Receipts[v.ID]
		switch {
		case !ok:
			add(Finding{"receipt_missing", v.ID, fmt.Sprintf("no verification receipt for %s in this session", v.ID)})
		case rc.CommandHash != SHA256Hex(cmd):
			add(Finding{"receipt_command_mismatch", v.ID, fmt.Sprintf("the receipt of %s is for another command", v.ID)})
		case rc.ExitCode != 0:
			add(Finding{"receipt_nonzero_exit", v.ID, fmt.Sprintf("the receipt of %s has exit code %d", v.ID, rc.ExitCode)})
		}
	}
	switch {
	case len(findings) == 0:
		return VerdictPass, findings
	case partialOnly:
		return VerdictWarn, findings
	}
	return VerdictFail, findings
}

// lastResult is a verify node's last recorded result, upper case.
func lastResult(v *specs.Node) string {
	if m, ok := v.Metadata["last_result"].(map[string]any); ok {
		r, _ := m["result"].(string)
		return strings.ToUpper(r)
	}
	r, _ := v.Metadata["last_result"].(string)
	return strings.ToUpper(r)
}

// passes applies policy to verdict: strict passes pass only, lenient pass
// and warn, manual nothing (a human acknowledges).
func passes(policy, verdict string) bool {
	switch policy {
	case GateLenient:
		return verdict == VerdictPass || verdict == VerdictWarn
	case GateManual:
		return false
	}
	return verdict == VerdictPass
}

// checksum is the evidence's HMAC-SHA256 (hex) under key over
// gate_attempt_id, step_id, phase_id and verdict.
func checksum(key []byte, e GateEvidence) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(e.GateAttemptID + "\x00" + e.StepID + "\x00" + e.PhaseID + "\x00" + e.Verdict))
	return hex.EncodeToString(m.Sum(nil))
}

func checksumOK(key []byte, e GateEvidence) bool {
	want, err := hex.DecodeString(checksum(key, e))
	got, err2 := hex.DecodeString(e.IntegrityChecksum)
	return err == nil && err2 == nil && hmac.Equal(want, got)
}
