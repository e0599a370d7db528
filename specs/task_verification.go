package specs

import (
	"strings"

	"github.com/specd/specd/core"
	"unicode/utf8"

	"github.com/specd/specd/core/errcode"
)

// Verification results are recorded on verify nodes (spec-model, "Verify
// metadata"): metadata.verification_history keeps the newest
// MaxVerificationHistory records, oldest first, and metadata.last_result
// the newest result. Recording a result is not a transition: the node's
// status does not change (complete the verify node with Complete).

// Caps of verification records.
const (
	MaxVerificationHistory = 10
	MaxVerificationOutput  = 10_000 // characters
)

// VerificationRecord is one verification result. Result is PASSED, FAILED
// or PARTIAL (case-insensitive on input, stored upper case). Command
// defaults to the node's metadata.command. ExitCode, TimedOut and
// DurationMS are set by executed verifications only.
type VerificationRecord struct {
	Result     string
	Command    string
	Output     string
	Issues     string
	Notes      string
	ExitCode   *int
	TimedOut   bool
	DurationMS *float64
}

// VerifyNode is the verify node id of s, the node verification add and
// execute act on. Errors: TASK_NOT_FOUND (field verify_id; the root
// included), VALIDATION_ERROR (field verify_id) when id is another kind of
// node, naming the spec's verify nodes (details.verify_ids and fuzzy
// matches, those of id's phase first).
func VerifyNode(s *Spec, id string) (*Node, error) {
	n := s.Node(id)
	if n == nil || id == RootID {
		return nil, taskNotFound(s, "verify_id", id)
	}
	if n.Type != TypeVerify {
		ids := verifyIDsNear(s, n)
		e := newErr(errcode.Validation, "verify_id", "%s is a %s, not a verify node", id, n.Type).WithDetail("received", id).WithDetail("verify_ids", ids)
		if len(ids) > 0 {
			e.Recovery = &core.Recovery{FuzzyMatches: ids[:min(len(ids), 5)]}
		}
		return nil, e
	}
	return n, nil
}

// verifyIDsNear lists the verify nodes of s, those of n's phase first,
// then the others (each group in id order, SortIDs): the nodes a result meant for n
// belongs on.
func verifyIDsNear(s *Spec, n *Node) []string {
	phase := outermostPhase(s, n)
	var near, far []string
	for _, id := range s.IDs() {
		v := s.Node(id)
		if v == nil || v.Type != TypeVerify {
			continue
		}
		if phase != "" && inLineage(s, v, phase) {
			near = append(near, id)
		} else {
			far = append(far, id)
		}
	}
	SortIDs(near)
	SortIDs(far)
	return append(orEmpty(near), far...)
}

// outermostPhase is the id of the farthest phase among n and its
// ancestors ("" when none).
func outermostPhase(s *Spec, n *Node) string {
	phase := ""
	for a := range lineage(s, n) {
		if a.Type == TypePhase {
			phase = a.ID
		}
	}
	return phase
}

// inLineage reports whether id is n or one of its ancestors.
func inLineage(s *Spec, n *Node, id string) bool {
	for a := range lineage(s, n) {
		if a.ID == id {
			return true
		}
	}
	return false
}

// RecordVerification appends r to the verification history of the verify
// node id (timestamp = now; output truncated to MaxVerificationOutput
// characters, keeping its end, with output_truncated set), keeps the newest
// MaxVerificationHistory records, sets last_result and returns the stored
// record (a JSON-compatible map).
//
// Errors: TASK_NOT_FOUND (field verify_id), VALIDATION_ERROR (not a verify
// node), INVALID_FORMAT (result).
func RecordVerification(s *Spec, id string, r VerificationRecord) (rec map[string]any, err error) {
	defer s.mutate(&err)()
	n, err := VerifyNode(s, id)
	if err != nil {
		return nil, err
	}
	result, err := verificationResult(r.Result)
	if err != nil {
		return nil, err
	}
	rec = r.stored(result, n.MetaString("command"), s.nowString())
	e := s.Edit(id)
	old, _ := e.Metadata["verification_history"].([]any)
	hist := append(cloneValue(old).([]any), rec)
	e.SetMeta("verification_history", hist[max(0, len(hist)-MaxVerificationHistory):])
	e.SetMeta("last_result", result)
	s.touch()
	return cloneMap(rec), nil
}

// verificationResult is result trimmed and upper case; INVALID_FORMAT when
// it is not one of VerificationResults.
func verificationResult(result string) (string, error) {
	up := strings.ToUpper(strings.TrimSpace(result))
	if !containsString(VerificationResults, up) {
		return "", newErr(errcode.InvalidFormat, "result", "result must be one of %s", strings.Join(VerificationResults, ", ")).
			WithDetail("received", truncateForDetails(result)).WithDetail("allowed", VerificationResults)
	}
	return up, nil
}

// stored is r as the history keeps it, with result, timestamp now and the
// node's command when r names none: the output cut to
// MaxVerificationOutput characters (output_truncated set when cut) and the
// execution fields only when set.
func (r VerificationRecord) stored(result, nodeCommand, now string) map[string]any {
	cmd := r.Command
	if cmd == "" {
		cmd = nodeCommand
	}
	out, truncated := TruncateTail(r.Output, MaxVerificationOutput)
	rec := map[string]any{"result": result, "timestamp": now, "command": cmd, "output": out,
		"issues": r.Issues, "notes": r.Notes}
	if truncated {
		rec["output_truncated"] = true
	}
	r.addExecution(rec)
	return rec
}

// addExecution adds to rec the exit code, time-out and duration of an
// executed verification, each when set.
func (r VerificationRecord) addExecution(rec map[string]any) {
	if r.ExitCode != nil {
		rec["exit_code"] = float64(*r.ExitCode)
	}
	if r.TimedOut {
		rec["timed_out"] = true
	}
	if r.DurationMS != nil {
		rec["duration_ms"] = *r.DurationMS
	}
}

// TruncateTail returns s cut to at most max characters, keeping its end
// (where test runners print their summaries) behind the marker
// TruncationMarker; the result is valid UTF-8 and at most max characters.
// It reports whether anything was dropped.
func TruncateTail(s string, max int) (string, bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, false
	}
	r := []rune(s)
	keep := max - utf8.RuneCountInString(TruncationMarker)
	if keep <= 0 {
		return string(r[n-max:]), true
	}
	return TruncationMarker + string(r[n-keep:]), true
}

// TruncationMarker starts an output whose beginning was cut.
const TruncationMarker = "…[earlier output truncated]…\n"
