package autonomy

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// NextInput is session-step next's (and report's) parameters.
type NextInput struct {
	SessionID       string
	Result          *StepResult // the last issued step's report; nil on the first call
	ContextUsagePct *int
	Heartbeat       bool
}

// Outcome is a step call's result: the answer, and a refusal that is
// stored with the state change it caused (SPEC_REBASE_REQUIRED fails the
// session and refuses the call; the failure must be stored).
type Outcome struct {
	Answer  StepAnswer
	Refusal *core.Error
}

// Check validates a report's own fields (before any state is read).
func (res *StepResult) Check() error {
	var msgs []string
	if res.StepID == "" {
		msgs = append(msgs, "step_id is required")
	}
	if !slices.Contains(StepTypes, res.StepType) {
		msgs = append(msgs, fmt.Sprintf("step_type %q must be one of %s", res.StepType, strings.Join(StepTypes, ", ")))
	}
	if res.Outcome == "" {
		res.Outcome = OutcomeSuccess
	}
	if !slices.Contains(Outcomes, res.Outcome) {
		msgs = append(msgs, fmt.Sprintf("outcome %q must be one of success, failure, skipped", res.Outcome))
	}
	if rc := res.VerificationReceipt; rc != nil {
		rc.CommandHash, rc.OutputDigest = strings.ToLower(strings.TrimSpace(rc.CommandHash)), strings.ToLower(strings.TrimSpace(rc.OutputDigest))
		if !isSHA256(rc.CommandHash) || !isSHA256(rc.OutputDigest) {
			msgs = append(msgs, "verification_receipt.command_hash and output_digest must be 64 lowercase hex digits (sha256)")
		}
		if _, ok := parseStamp(rc.IssuedAt); !ok {
			msgs = append(msgs, "verification_receipt.issued_at must be an RFC 3339 timestamp with a zone")
		}
		if strings.TrimSpace(rc.StepID) == "" {
			msgs = append(msgs, "verification_receipt.step_id is required")
		}
	}
	if len(msgs) > 0 {
		return core.NewError(errcode.Validation, "Invalid last_step_result: "+strings.Join(msgs, "; ")+".",
			map[string]any{"field": "last_step_result", "errors": msgs})
	}
	return nil
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// payloadHash is the sha256 of the report's canonical JSON (fixed field
// order, empty fields left out).
func (res *StepResult) payloadHash() string {
	raw, _ := json.Marshal(res)
	return SHA256Hex(string(raw))
}

// Next is session-step next (report is next with the report's fields): it
// checks and consumes the report of the last issued step, records its
// outcome (completing the task or verify node in the spec, in this same
// transaction), and issues the next step in foundry's order:
//
//  0. a report whose proof was already used gets the first answer again
//     (same payload) or STEP_PROOF_CONFLICT; an unknown proof STEP_PROOF_MISMATCH;
//  1. a session that is not running answers its state, consuming nothing;
//  2. a step outstanding needs its report (STEP_RESULT_REQUIRED), with its
//     proof (STEP_PROOF_MISSING), its identity (STEP_MISMATCH), a receipt for
//     a verification success (VERIFICATION_RECEIPT_MISSING/INVALID) and
//     valid gate evidence for a gate (INVALID_GATE_EVIDENCE,
//     GATE_INTEGRITY_CHECKSUM); a step issued step_stale_minutes ago pauses
//     the session (step_stale) instead;
//  3. a changed spec structure fails the session (SPEC_REBASE_REQUIRED);
//  4. the outcome is recorded;
//  5. pause guards: heartbeat stale, context limit, error threshold, task
//     limit, fidelity-cycle limit;
//  6. the next step: in the first phase whose gate has not passed (or been
//     waived), its next unblocked task (implement_task; all blocked: pause
//     blocked), then its verify nodes without a passing receipt
//     (execute_verification), then its gate (run_fidelity_gate); a failed
//     gate gets address_fidelity_feedback while retries remain, else a
//     pause; a passed gate with stop_on_phase_completion pauses once with
//     phase_complete before the next phase; no phase left: complete_spec.
//
// Errors abort the transaction (nothing is stored); Outcome.Refusal is
// stored with the state and then refuses the call.
func Next(sp *specs.Spec, j specs.JournalWriter, r Records, in NextInput, now time.Time) (Outcome, error) {
	if in.Result != nil {
		if err := in.Result.Check(); err != nil {
			return Outcome{}, err
		}
	}
	s, err := Resolve(r, in.SessionID)
	if err != nil {
		return Outcome{}, err
	}
	res := in.Result
	expected := ""
	if s.LastStepIssued != nil {
		expected = s.LastStepIssued.StepProof
	}
	if res != nil && res.StepProof != "" && res.StepProof != expected {
		var pr ProofRecord
		ok, err := getJSON(r, proofKey(res.StepProof), &pr)
		if err != nil {
			return Outcome{}, err
		}
		if !ok {
			return Outcome{}, proofErr(errcode.StepProofMismatch, s, "step_proof does not match the currently issued step.")
		}
		if pr.PayloadHash != res.payloadHash() {
			return Outcome{}, proofErr(errcode.StepProofConflict, s, "step_proof was already used with a different report.").WithDetail("step_id", pr.StepID)
		}
		var o Outcome
		if err := json.Unmarshal(pr.Response, &o.Answer); err != nil {
			return Outcome{}, core.Internal(err)
		}
		return o, nil
	}
	if s.Status != StatusRunning {
		return Outcome{Answer: stateAnswer(s)}, nil
	}
	if err := s.setContext(in.ContextUsagePct, nil); err != nil {
		return Outcome{}, err
	}
	if in.Heartbeat {
		s.Context.LastHeartbeatAt = stamp(now)
	}
	last := s.LastStepIssued
	if last != nil {
		issued, _ := parseStamp(last.IssuedAt)
		if now.Sub(issued) > minutes(s.Limits.StepStaleMinutes) {
			return finish(r, s, nil, now, pauseStep(r, s, PauseStepStale, now, fmt.Sprintf("Step %s was issued more than %d minutes ago: resume to get a fresh step.", last.StepID, s.Limits.StepStaleMinutes)))
		}
		if res == nil {
			return Outcome{}, core.NewError(errcode.StepResultRequired, fmt.Sprintf("Report the outcome of step %s (last_step_result) before asking for the next step.", last.StepID),
				map[string]any{"session_id": s.ID, "step_id": last.StepID, "step_type": last.Type, "state_version": s.StateVersion})
		}
		if res.StepProof == "" {
			return Outcome{}, proofErr(errcode.StepProofMissing, s, fmt.Sprintf("step_proof is required for step %s.", last.StepID))
		}
		if err := checkIdentity(last, res); err != nil {
			return Outcome{}, err
		}
		if err := checkReceipt(s, res, now); err != nil {
			return Outcome{}, err
		}
		if err := checkGateEvidence(r, s, res); err != nil {
			return Outcome{}, err
		}
	} else if res != nil {
		return Outcome{}, core.NewError(errcode.StepMismatch, "No step is outstanding: ask for the next step without last_step_result.",
			map[string]any{"session_id": s.ID, "step_id": res.StepID})
	}
	if structureHash(sp) != s.SpecStructureHash {
		s.Status, s.FailureReason = StatusFailed, FailureSpecStructureChanged
		if err := commit(r, s, now); err != nil {
			return Outcome{}, err
		}
		if err := audit(r, s, now, EventPause, "spec_structure_changed", nil, nil); err != nil {
			return Outcome{}, err
		}
		return Outcome{Answer: stateAnswer(s), Refusal: rebaseRequired(s)}, nil
	}
	if res != nil {
		if err := record(sp, j, r, s, res, now); err != nil {
			return Outcome{}, err
		}
		s.LastStepIssued = nil
	}
	return finish(r, s, res, now, advance(sp, r, s, planOf(sp), now)) // planned after the outcome changed the spec
}

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

func proofErr(code string, s *Session, msg string) *core.Error {
	return core.NewError(code, msg, map[string]any{"session_id": s.ID, "state_version": s.StateVersion})
}

// finish caches the answer (replay), stores the consumed proof with it,
// and stores the session.
func finish(r Records, s *Session, res *StepResult, now time.Time, err error) (Outcome, error) {
	if err != nil {
		return Outcome{}, err
	}
	s.UpdatedAt = stamp(now)
	s.StateVersion++
	ans := stateAnswer(s)
	raw, err := json.Marshal(ans)
	if err != nil {
		return Outcome{}, core.Internal(err)
	}
	s.LastIssuedResponse = raw
	if res != nil {
		if err := putJSON(r, proofKey(res.StepProof), ProofRecord{StepProof: res.StepProof, StepID: res.StepID, PayloadHash: res.payloadHash(), ConsumedAt: stamp(now), Response: raw}); err != nil {
			return Outcome{}, err
		}
	}
	return Outcome{Answer: ans}, save(r, s)
}

func checkIdentity(last *IssuedStep, res *StepResult) error {
	var msgs []string
	if res.StepID != last.StepID {
		msgs = append(msgs, fmt.Sprintf("step_id: expected %s, got %s", last.StepID, res.StepID))
	}
	if res.StepType != last.Type {
		msgs = append(msgs, fmt.Sprintf("step_type: expected %s, got %s", last.Type, res.StepType))
	}
	if (last.Type == StepImplementTask || last.Type == StepExecuteVerification) && res.TaskID != last.TaskID {
		msgs = append(msgs, fmt.Sprintf("task_id: expected %s, got %q", last.TaskID, res.TaskID))
	}
	if (last.Type == StepRunFidelityGate || last.Type == StepAddressFidelityFeedback) && res.PhaseID != last.PhaseID {
		msgs = append(msgs, fmt.Sprintf("phase_id: expected %s, got %q", last.PhaseID, res.PhaseID))
	}
	if last.Type == StepRunFidelityGate && res.GateAttemptID == "" {
		msgs = append(msgs, "gate_attempt_id is required for run_fidelity_gate")
	}
	if res.StepProof != last.StepProof {
		msgs = append(msgs, "step_proof does not match")
	}
	if len(msgs) == 0 {
		return nil
	}
	return core.NewError(errcode.StepMismatch, "The report does not match the issued step (its proof is not consumed): "+strings.Join(msgs, "; ")+".",
		map[string]any{"step_id": last.StepID, "step_type": last.Type, "task_id": last.TaskID, "phase_id": last.PhaseID, "errors": msgs})
}

// checkReceipt validates an execute_verification report: a success needs
// the receipt of this step's verify command with exit code 0, issued no
// earlier than the step and no later than 5 minutes from now.
func checkReceipt(s *Session, res *StepResult, now time.Time) error {
	if res.StepType != StepExecuteVerification {
		return nil
	}
	pending := s.PendingReceipt
	rc := res.VerificationReceipt
	if pending == nil || pending.StepID != res.StepID {
		return nil // the verify node has no command: nothing to hash
	}
	if rc == nil {
		if res.Outcome != OutcomeSuccess {
			return nil
		}
		return core.NewError(errcode.VerificationReceiptMissing, "An execute_verification success needs its verification_receipt.",
			map[string]any{"field": "verification_receipt", "step_id": res.StepID, "task_id": pending.TaskID, "expected_command_hash": pending.ExpectedCommandHash})
	}
	bad := func(msg string) error {
		return core.NewError(errcode.VerificationReceiptInvalid, msg, map[string]any{"field": "verification_receipt", "step_id": res.StepID, "task_id": pending.TaskID})
	}
	issued, _ := parseStamp(rc.IssuedAt)
	stepIssued, _ := parseStamp(pending.IssuedAt)
	switch {
	case rc.StepID != res.StepID:
		return bad(fmt.Sprintf("The receipt is for step %s, not %s.", rc.StepID, res.StepID))
	case rc.CommandHash != pending.ExpectedCommandHash:
		return bad("The receipt's command_hash is not the sha256 of this verify node's command: run the node's own command.")
	case issued.Before(stepIssued.Truncate(time.Second)):
		return bad("The receipt was issued before its step.")
	case issued.After(now.Add(5 * time.Minute)):
		return bad("The receipt's issued_at is in the future beyond the allowed 5 minute skew.")
	case res.Outcome == OutcomeSuccess && rc.ExitCode != 0:
		return bad(fmt.Sprintf("A success needs exit code 0; the receipt has %d: report outcome failure.", rc.ExitCode))
	}
	return nil
}

// checkGateEvidence validates a run_fidelity_gate success against the
// evidence review(fidelity-gate) stored for this step.
func checkGateEvidence(r Records, s *Session, res *StepResult) error {
	if res.StepType != StepRunFidelityGate || res.Outcome != OutcomeSuccess {
		return nil
	}
	e := s.PendingGateEvidence
	bad := func(msg string) error {
		return core.NewError(errcode.InvalidGateEvidence, msg, map[string]any{"field": "gate_attempt_id", "step_id": res.StepID, "phase_id": res.PhaseID})
	}
	switch {
	case e == nil:
		return bad("No gate evidence for this step: run the fidelity gate for it first.")
	case e.GateAttemptID != res.GateAttemptID:
		return bad(fmt.Sprintf("Gate attempt %s is not the pending one.", res.GateAttemptID))
	case e.StepID != res.StepID || e.PhaseID != res.PhaseID:
		return bad("The gate evidence is bound to another step or phase.")
	}
	key, err := secret(r)
	if err != nil {
		return err
	}
	if !checksumOK(key, *e) {
		return core.NewError(errcode.GateIntegrityChecksum, "The gate evidence's integrity checksum does not verify.",
			map[string]any{"gate_attempt_id": e.GateAttemptID, "phase_id": e.PhaseID})
	}
	return nil
}

// record applies a checked report: spec changes in the same transaction
// (task completed, verification result recorded, verify node completed),
// counters, gates, a journal entry, and the step_consumed audit event.
func record(sp *specs.Spec, j specs.JournalWriter, r Records, s *Session, res *StepResult, now time.Time) error {
	last := s.LastStepIssued
	gateStep := res.StepType == StepRunFidelityGate || res.StepType == StepAddressFidelityFeedback
	if !gateStep {
		switch res.Outcome {
		case OutcomeFailure:
			s.Counters.ConsecutiveErrors++
		case OutcomeSuccess:
			s.Counters.ConsecutiveErrors = 0
		}
	}
	opts := specs.TransitionOptions{Agent: "autonomy:" + s.ID, Author: "autonomy", TakeOver: true, Note: res.Note}
	done := func(id string) error {
		tv, err := specs.ApplyTransition(sp, j, specs.Complete, id, opts)
		if err != nil {
			return err
		}
		_ = tv
		if !slices.Contains(s.CompletedTaskIDs, id) {
			s.CompletedTaskIDs = append(s.CompletedTaskIDs, id)
			s.Counters.TasksCompleted++
		}
		return nil
	}
	meta := map[string]any{"step_type": res.StepType, "outcome": res.Outcome}
	switch res.StepType {
	case StepImplementTask:
		if res.Outcome == OutcomeSuccess {
			if err := done(res.TaskID); err != nil {
				return err
			}
		}
	case StepExecuteVerification:
		n := sp.Node(res.TaskID)
		cmd := ""
		if n != nil {
			cmd = n.MetaString("command")
		}
		if rc := res.VerificationReceipt; rc != nil && s.PendingReceipt != nil {
			if s.Receipts == nil {
				s.Receipts = map[string]Receipt{}
			}
			s.Receipts[res.TaskID] = *rc
			code := rc.ExitCode
			result := "PASSED"
			if code != 0 || res.Outcome != OutcomeSuccess {
				result = "FAILED"
			}
			if _, err := specs.RecordVerification(sp, res.TaskID, specs.VerificationRecord{Result: result, Command: cmd, ExitCode: &code,
				Notes: fmt.Sprintf("autonomy session %s step %s: receipt output_digest %s", s.ID, res.StepID, rc.OutputDigest)}); err != nil {
				return err
			}
			meta["exit_code"], meta["command_hash"], meta["output_digest"] = code, rc.CommandHash, rc.OutputDigest
		} else if cmd == "" && res.Outcome != OutcomeSkipped {
			result := "PASSED"
			if res.Outcome != OutcomeSuccess {
				result = "FAILED"
			}
			if _, err := specs.RecordVerification(sp, res.TaskID, specs.VerificationRecord{Result: result, Notes: res.Note}); err != nil {
				return err
			}
		}
		s.PendingReceipt = nil
		if res.Outcome == OutcomeSuccess {
			if err := done(res.TaskID); err != nil {
				return err
			}
		}
	case StepRunFidelityGate:
		g := s.gate(res.PhaseID)
		if g.Status == GateWaived { // a maintainer waived it while the step was out
			s.PendingGateEvidence = nil
			break
		}
		g.GateAttemptID, g.EvaluatedAt = res.GateAttemptID, stamp(now)
		e := s.PendingGateEvidence
		s.PendingGateEvidence = nil
		verdict := VerdictFail
		if res.Outcome == OutcomeSuccess && e != nil {
			verdict = e.Verdict
		}
		g.Verdict = verdict
		meta["verdict"], meta["gate_attempt_id"] = verdict, res.GateAttemptID
		switch {
		case res.Outcome == OutcomeSuccess && s.GatePolicy == GateManual:
			s.PendingManualGateAck = &ManualGateAck{GateAttemptID: res.GateAttemptID, PhaseID: res.PhaseID, Verdict: verdict, IssuedAt: stamp(now)}
		case passes(s.GatePolicy, verdict):
			g.Status = GatePassed
		default:
			g.Status = GateFailed
			s.Counters.FidelityReviewCyclesInActivePhase++
		}
		if s.PendingManualGateAck == nil {
			typ := EventGateFailed
			if g.Status == GatePassed {
				typ = EventGatePassed
			}
			if err := audit(r, s, now, typ, "record_gate_outcome", last, map[string]any{"verdict": verdict, "gate_attempt_id": res.GateAttemptID, "status": g.Status}); err != nil {
				return err
			}
		}
	case StepAddressFidelityFeedback:
		if res.Outcome == OutcomeSuccess {
			s.gate(res.PhaseID).Status = GatePending
			s.PendingGateEvidence = nil
		}
	}
	content := fmt.Sprintf("Step %s (%s) reported %s.", res.StepID, res.StepType, res.Outcome)
	if res.Note != "" {
		content += "\n\nNote: " + res.Note
	}
	if len(res.FilesTouched) > 0 {
		content += "\n\nFiles touched: " + strings.Join(res.FilesTouched, ", ")
		meta["files_touched"] = res.FilesTouched
	}
	j.Append(specs.JournalEntry{Timestamp: specs.FormatTime(now), EntryType: "note", Title: fmt.Sprintf("Step %s: %s", res.StepType, res.Outcome),
		Content: content, Author: "autonomy", TaskID: res.TaskID,
		Metadata: map[string]any{"session_id": s.ID, "step_id": res.StepID, "step_type": res.StepType, "outcome": res.Outcome, "files_touched": nonNil(res.FilesTouched)}})
	if res.Note != "" {
		meta["note"] = res.Note
	}
	return audit(r, s, now, EventStepConsumed, "consume_step", last, meta)
}

func nonNil(s []string) []any {
	out := make([]any, 0, len(s))
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

// advance runs the pause guards and issues the next step.
func advance(sp *specs.Spec, r Records, s *Session, plan []phasePlan, now time.Time) error {
	hb := s.Context.LastHeartbeatAt
	if hb == "" {
		created, _ := parseStamp(s.CreatedAt)
		if now.Sub(created) > minutes(s.Limits.HeartbeatGraceMinutes) {
			return pauseStep(r, s, PauseHeartbeatStale, now, "No heartbeat within the grace window: the session paused. Resume to continue.")
		}
	} else if t, _ := parseStamp(hb); now.Sub(t) > minutes(s.Limits.HeartbeatStaleMinutes) {
		return pauseStep(r, s, PauseHeartbeatStale, now, "Session paused due to heartbeat staleness. Resume to continue.")
	}
	switch {
	case s.Context.ContextUsagePct >= s.Limits.ContextThresholdPct:
		return pauseStep(r, s, PauseContextLimit, now, fmt.Sprintf("Context usage at %d%% (threshold %d%%). Resume in a fresh context.", s.Context.ContextUsagePct, s.Limits.ContextThresholdPct))
	case s.Counters.ConsecutiveErrors >= s.Limits.MaxConsecutiveErrors:
		return pauseStep(r, s, PauseErrorThreshold, now, fmt.Sprintf("%d consecutive errors. Manual intervention required.", s.Counters.ConsecutiveErrors))
	case s.Counters.TasksCompleted >= s.Limits.MaxTasksPerSession:
		return pauseStep(r, s, PauseTaskLimit, now, fmt.Sprintf("Task limit (%d) reached. Start a new session to continue.", s.Limits.MaxTasksPerSession))
	}
	for i, p := range plan {
		g := s.PhaseGates[p.ID]
		if g != nil && (g.Status == GatePassed || g.Status == GateWaived) {
			if s.StopConditions.StopOnPhaseCompletion && i < len(plan)-1 && !slices.Contains(s.PhaseCompleteSignaled, p.ID) {
				s.PhaseCompleteSignaled = append(s.PhaseCompleteSignaled, p.ID)
				return pauseStep(r, s, PausePhaseComplete, now, fmt.Sprintf("Phase %s complete. Stopping as configured; resume to start phase %s.", p.ID, plan[i+1].ID))
			}
			continue
		}
		if s.ActivePhaseID != p.ID {
			s.ActivePhaseID = p.ID
			s.Counters.FidelityReviewCyclesInActivePhase = 0
		}
		return phaseStep(sp, r, s, p, now)
	}
	return completeSpec(r, s, now)
}

// phaseStep issues the next step of the active phase p.
func phaseStep(sp *specs.Spec, r Records, s *Session, p phasePlan, now time.Time) error {
	pending := 0
	for _, t := range p.Tasks {
		if t.Status == specs.StatusCompleted {
			continue
		}
		pending++
		if (t.Status == specs.StatusPending || t.Status == specs.StatusInProgress) && specs.IsUnblocked(sp, t.ID) {
			s.LastTaskID = t.ID
			return issue(r, s, now, NextStep{Type: StepImplementTask, TaskID: t.ID, PhaseID: p.ID, TaskTitle: t.Title,
				Message: fmt.Sprintf("Implement task '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(t.Title, t.ID))})
		}
	}
	if pending > 0 {
		return pauseStep(r, s, PauseBlocked, now, "All remaining tasks are blocked by dependencies. Resolve blockers to continue.")
	}
	for _, v := range p.Verifies {
		cmd := v.MetaString("command")
		if cmd != "" {
			if rc, ok := s.Receipts[v.ID]; ok && rc.ExitCode == 0 && rc.CommandHash == SHA256Hex(cmd) && v.Status == specs.StatusCompleted {
				continue
			}
		} else if v.Status == specs.StatusCompleted {
			continue
		}
		st := NextStep{Type: StepExecuteVerification, TaskID: v.ID, PhaseID: p.ID, TaskTitle: v.Title, Command: cmd,
			Message: fmt.Sprintf("Execute verification '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(v.Title, v.ID))}
		return issue(r, s, now, st)
	}
	if ack := s.PendingManualGateAck; ack != nil && ack.PhaseID == p.ID {
		return pauseStep(r, s, PauseGateReviewRequired, now, fmt.Sprintf("Manual gate review required for phase %s. Verdict: %s. Acknowledge to continue.", p.ID, ack.Verdict))
	}
	g := s.gate(p.ID)
	if g.Status == GateFailed {
		max := s.Limits.MaxFidelityReviewCyclesPerPhase
		switch {
		case s.Counters.FidelityReviewCyclesInActivePhase >= max:
			return pauseStep(r, s, PauseFidelityCycleLimit, now, fmt.Sprintf("Max fidelity review cycles (%d) reached in phase %s. Manual review required.", max, p.ID))
		case s.StopConditions.AutoRetryFidelityGate:
			return issue(r, s, now, NextStep{Type: StepAddressFidelityFeedback, PhaseID: p.ID, GateAttemptID: g.GateAttemptID,
				Message: fmt.Sprintf("Address fidelity feedback for phase %s. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", p.ID)})
		}
		return pauseStep(r, s, PauseGateFailed, now, fmt.Sprintf("Fidelity gate failed for phase %s. Verdict: %s. Manual review required.", p.ID, g.Verdict))
	}
	return issue(r, s, now, NextStep{Type: StepRunFidelityGate, PhaseID: p.ID, GateAttemptID: newID("gate_"),
		Message: fmt.Sprintf("Run fidelity gate for phase '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(p.Title, p.ID))})
}

func orID(title, id string) string {
	if title != "" {
		return title
	}
	return id
}

// issue makes st the outstanding step: a new step id and one-time proof,
// the pending receipt of a verification, audited.
func issue(r Records, s *Session, now time.Time, st NextStep) error {
	st.StepID, st.StepProof = newID("step_"), newProof()
	s.LastStepIssued = &IssuedStep{StepID: st.StepID, Type: st.Type, TaskID: st.TaskID, PhaseID: st.PhaseID, GateAttemptID: st.GateAttemptID, IssuedAt: stamp(now), StepProof: st.StepProof}
	s.nextStep = &st
	if st.Type == StepExecuteVerification && st.Command != "" {
		s.PendingReceipt = &PendingReceipt{StepID: st.StepID, TaskID: st.TaskID, ExpectedCommandHash: SHA256Hex(st.Command), IssuedAt: stamp(now)}
	}
	if st.Type == StepRunFidelityGate {
		s.gate(st.PhaseID).GateAttemptID = st.GateAttemptID
	}
	meta := map[string]any{"step_type": st.Type}
	if st.GateAttemptID != "" {
		meta["gate_attempt_id"] = st.GateAttemptID
	}
	typ, action := EventStepIssued, "issue_step"
	switch st.Type {
	case StepPause:
		typ, action, meta["reason"] = EventPause, "session_pause", st.Reason
	case StepCompleteSpec:
		typ, action, meta["tasks_completed"] = EventSpecComplete, "complete_spec", s.Counters.TasksCompleted
	}
	return audit(r, s, now, typ, action, s.LastStepIssued, meta)
}

func pauseStep(r Records, s *Session, reason string, now time.Time, msg string) error {
	s.Status, s.PauseReason, s.PausedAt = StatusPaused, reason, stamp(now)
	return issue(r, s, now, NextStep{Type: StepPause, Reason: reason, Message: msg})
}

func completeSpec(r Records, s *Session, now time.Time) error {
	s.Status = StatusCompleted
	return issue(r, s, now, NextStep{Type: StepCompleteSpec, Message: fmt.Sprintf("Spec %s execution completed. Total tasks: %d", s.SpecID, s.Counters.TasksCompleted)})
}

// stateAnswer is the session's step answer: the step it issued last (when
// still outstanding), the gate lists and the loop signal.
func stateAnswer(s *Session) StepAnswer {
	a := StepAnswer{SessionID: s.ID, SpecID: s.SpecID, Status: s.Status, PauseReason: s.PauseReason, StateVersion: s.StateVersion,
		RequiredPhaseGates: []string{}, SatisfiedGates: []string{}, MissingRequiredGates: []string{}}
	if s.nextStep != nil {
		a.NextStep = s.nextStep
	} else if s.LastStepIssued != nil && s.LastIssuedResponse != nil {
		var prev StepAnswer
		if json.Unmarshal(s.LastIssuedResponse, &prev) == nil && prev.NextStep != nil && prev.NextStep.StepID == s.LastStepIssued.StepID {
			a.NextStep = prev.NextStep
		}
	}
	var phases []string
	for id := range s.RequiredPhaseGates {
		phases = append(phases, id)
	}
	sort.Strings(phases)
	for _, id := range phases {
		a.RequiredPhaseGates = append(a.RequiredPhaseGates, id)
		if g := s.PhaseGates[id]; g != nil && (g.Status == GatePassed || g.Status == GateWaived) {
			a.SatisfiedGates = append(a.SatisfiedGates, id)
		} else {
			a.MissingRequiredGates = append(a.MissingRequiredGates, id)
		}
	}
	a.LoopSignal = LoopSignal(s.Status, s.PauseReason, "")
	return a
}

// LoopSignal maps a status, pause reason or error code to foundry's loop
// signal ("" while the loop should simply go on).
func LoopSignal(status, pauseReason, code string) string {
	switch {
	case pauseReason == PausePhaseComplete && status == StatusPaused:
		return SignalPhaseComplete
	case status == StatusCompleted:
		return SignalSpecComplete
	}
	switch code {
	case errcode.GateIntegrityChecksum, errcode.StepProofMissing, errcode.StepProofMismatch,
		errcode.StepProofConflict, errcode.VerificationReceiptMissing, errcode.VerificationReceiptInvalid, errcode.Forbidden,
		errcode.AutonomyWriteLockActive:
		return SignalBlockedRuntime
	case errcode.SpecRebaseRequired:
		return SignalFailed
	}
	switch status {
	case StatusFailed:
		return SignalFailed
	case StatusPaused:
		return SignalPausedNeedsAttention
	}
	return ""
}

// Replay answers the last issued step again (safe retry after a lost
// answer); nothing is consumed. NOT_FOUND when no step was issued.
func Replay(r Records, sessionID string) (StepAnswer, error) {
	s, err := Resolve(r, sessionID)
	if err != nil {
		return StepAnswer{}, err
	}
	if s.LastIssuedResponse == nil {
		return StepAnswer{}, core.NewError(errcode.NotFound, "No step has been issued yet: ask for the next step.", map[string]any{"session_id": s.ID})
	}
	var a StepAnswer
	if err := json.Unmarshal(s.LastIssuedResponse, &a); err != nil {
		return a, core.Internal(err)
	}
	return a, nil
}

// GateAnswer is review(fidelity-gate)'s answer.
type GateAnswer struct {
	SpecID            string    `json:"spec_id"`
	SessionID         string    `json:"session_id"`
	PhaseID           string    `json:"phase_id"`
	StepID            string    `json:"step_id"`
	GateAttemptID     string    `json:"gate_attempt_id"`
	Verdict           string    `json:"verdict"`
	GatePolicy        string    `json:"gate_policy"`
	GatePassedPreview bool      `json:"gate_passed_preview"`
	Findings          []Finding `json:"findings"`
	IntegrityChecksum string    `json:"integrity_checksum"`
}

// FidelityGate computes the verdict of the outstanding run_fidelity_gate
// step's phase from evidence (PhaseVerdict) and stores it as the step's
// pending gate evidence, with its HMAC integrity checksum; the step's
// report then applies the gate policy. Running it again replaces the
// evidence. INVALID_GATE_EVIDENCE when step_id is not the outstanding gate
// step of phase_id.
func FidelityGate(sp *specs.Spec, r Records, sessionID, phaseID, stepID string, now time.Time) (GateAnswer, error) {
	s, err := LoadSession(r, sessionID)
	if err != nil {
		return GateAnswer{}, err
	}
	last := s.LastStepIssued
	if last == nil || last.Type != StepRunFidelityGate || last.StepID != stepID || last.PhaseID != phaseID {
		d := map[string]any{"field": "step_id", "received": stepID, "phase_id": phaseID}
		if last != nil {
			d["outstanding_step_id"], d["outstanding_step_type"], d["outstanding_phase_id"] = last.StepID, last.Type, last.PhaseID
		}
		return GateAnswer{}, core.NewError(errcode.InvalidGateEvidence, "step_id and phase_id must name the session's outstanding run_fidelity_gate step.", d)
	}
	verdict, findings := PhaseVerdict(sp, s, phaseID)
	key, err := secret(r)
	if err != nil {
		return GateAnswer{}, err
	}
	e := GateEvidence{GateAttemptID: last.GateAttemptID, StepID: stepID, PhaseID: phaseID, Verdict: verdict, IssuedAt: stamp(now)}
	e.IntegrityChecksum = checksum(key, e)
	s.PendingGateEvidence = &e
	if err := commit(r, s, now); err != nil {
		return GateAnswer{}, err
	}
	return GateAnswer{SpecID: s.SpecID, SessionID: s.ID, PhaseID: phaseID, StepID: stepID, GateAttemptID: e.GateAttemptID, Verdict: verdict,
		GatePolicy: s.GatePolicy, GatePassedPreview: passes(s.GatePolicy, verdict), Findings: findings, IntegrityChecksum: e.IntegrityChecksum}, nil
}
