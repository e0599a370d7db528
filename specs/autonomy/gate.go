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
	for _, t := range p.Tasks {
		if t.Status != specs.StatusCompleted {
			findings = append(findings, Finding{"task_incomplete", t.ID, fmt.Sprintf("task %s is %s, not completed", t.ID, t.Status)})
		}
	}
	for _, v := range p.Verifies {
		findings = append(findings, verifyFindings(s, v)...)
	}
	return verdictOf(findings), findings
}

// verdictOf is the verdict of findings: pass without any, warn when all
// are PARTIAL verification results, fail otherwise.
func verdictOf(findings []Finding) string {
	if len(findings) == 0 {
		return VerdictPass
	}
	for _, f := range findings {
		if f.Type != "verification_partial" {
			return VerdictFail
		}
	}
	return VerdictWarn
}

// verifyFindings are verify leaf v's findings, in order: not completed,
// its last result not PASSED, and, when it has a command, its receipt
// missing, for another command or with a nonzero exit code.
func verifyFindings(s *Session, v *specs.Node) []Finding {
	var out []Finding
	if v.Status != specs.StatusCompleted {
		out = append(out, Finding{"verification_incomplete", v.ID, fmt.Sprintf("verify node %s is %s, not completed", v.ID, v.Status)})
	}
	if f, ok := resultFinding(v); ok {
		out = append(out, f)
	}
	if f, ok := receiptFinding(s, v); ok {
		out = append(out, f)
	}
	return out
}

// resultFinding is the finding on v's last recorded result (none when it
// is PASSED).
func resultFinding(v *specs.Node) (Finding, bool) {
	switch last := lastResult(v); last {
	case "PASSED":
		return Finding{}, false
	case "PARTIAL":
		return Finding{"verification_partial", v.ID, fmt.Sprintf("verify node %s's last result is PARTIAL", v.ID)}, true
	case "":
		return Finding{"verification_unrecorded", v.ID, fmt.Sprintf("verify node %s has no recorded result", v.ID)}, true
	default:
		return Finding{"verification_failed", v.ID, fmt.Sprintf("verify node %s's last result is %s", v.ID, last)}, true
	}
}

// receiptFinding is the finding on the session's receipt of v's command
// (none when v has no command or the receipt proves it).
func receiptFinding(s *Session, v *specs.Node) (Finding, bool) {
	cmd := v.MetaString("command")
	if cmd == "" {
		return Finding{}, false
	}
	rc, ok := s.Receipts[v.ID]
	switch {
	case !ok:
		return Finding{"receipt_missing", v.ID, fmt.Sprintf("no verification receipt for %s in this session", v.ID)}, true
	case rc.CommandHash != SHA256Hex(cmd):
		return Finding{"receipt_command_mismatch", v.ID, fmt.Sprintf("the receipt of %s is for another command", v.ID)}, true
	case rc.ExitCode != 0:
		return Finding{"receipt_nonzero_exit", v.ID, fmt.Sprintf("the receipt of %s has exit code %d", v.ID, rc.ExitCode)}, true
	}
	return Finding{}, false
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
