package autonomy

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// Check validates a report's own fields (before any state is read); a nil
// report (the first call) has none to check.
func (res *StepResult) Check() error {
	if res == nil {
		return nil
	}
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
	msgs = append(msgs, res.VerificationReceipt.check()...)
	if len(msgs) > 0 {
		return core.NewError(errcode.Validation, "Invalid last_step_result: "+strings.Join(msgs, "; ")+".",
			map[string]any{"field": "last_step_result", "errors": msgs})
	}
	return nil
}

// check normalizes a reported receipt's digests (trimmed, lower case) and
// lists what is wrong with its fields; a nil receipt has nothing wrong.
func (rc *Receipt) check() []string {
	if rc == nil {
		return nil
	}
	var msgs []string
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
	return msgs
}

// isSHA256 reports whether s is a sha256 digest in lowercase hex.
func isSHA256(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 64 && s == strings.ToLower(s)
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
	if err := in.Result.Check(); err != nil {
		return Outcome{}, err
	}
	s, err := Resolve(r, in.SessionID)
	if err != nil {
		return Outcome{}, err
	}
	if s.usedElsewhere(in.Result) {
		return replayProof(r, s, in.Result)
	}
	if s.Status != StatusRunning {
		return Outcome{Answer: stateAnswer(s)}, nil
	}
	return step(sp, j, r, s, in, now)
}

// usedElsewhere reports whether res carries a proof that is not the
// outstanding step's (one already consumed, or none ever issued).
func (s *Session) usedElsewhere(res *StepResult) bool {
	expected := ""
	if s.LastStepIssued != nil {
		expected = s.LastStepIssued.StepProof
	}
	return res != nil && res.StepProof != "" && res.StepProof != expected
}

// replayProof answers a report whose proof is not the outstanding step's:
// the same report as the one that consumed the proof gets that first
// answer again, with no second effect; another report STEP_PROOF_CONFLICT;
// a proof never consumed STEP_PROOF_MISMATCH.
func replayProof(r Records, s *Session, res *StepResult) (Outcome, error) {
	var pr ProofRecord
	ok, err := getJSON(r, proofKey(res.StepProof), &pr)
	switch {
	case err != nil:
		return Outcome{}, err
	case !ok:
		return Outcome{}, proofErr(errcode.StepProofMismatch, s, "step_proof does not match the currently issued step.")
	case pr.PayloadHash != res.payloadHash():
		return Outcome{}, proofErr(errcode.StepProofConflict, s, "step_proof was already used with a different report.").WithDetail("step_id", pr.StepID)
	}
	var o Outcome
	if err := json.Unmarshal(pr.Response, &o.Answer); err != nil {
		return Outcome{}, core.Internal(err)
	}
	return o, nil
}

// step runs Next's steps 2 to 6 on the running session s: the caller's
// context, the outstanding step's staleness and report, the structure
// check, the outcome, the next step.
func step(sp *specs.Spec, j specs.JournalWriter, r Records, s *Session, in NextInput, now time.Time) (Outcome, error) {
	if err := s.observe(in, now); err != nil {
		return Outcome{}, err
	}
	if last := s.LastStepIssued; last != nil && stepStale(s, last, now) {
		return finish(r, s, nil, now, pauseStep(r, s, PauseStepStale, now, fmt.Sprintf("Step %s was issued more than %d minutes ago: resume to get a fresh step.", last.StepID, s.Limits.StepStaleMinutes)))
	}
	if err := checkReport(r, s, in.Result, now); err != nil {
		return Outcome{}, err
	}
	if structureHash(sp) != s.SpecStructureHash {
		return failStructureChanged(r, s, now)
	}
	if err := consume(sp, j, r, s, in.Result, now); err != nil {
		return Outcome{}, err
	}
	return finish(r, s, in.Result, now, advance(sp, r, s, planOf(sp), now)) // planned after the outcome changed the spec
}

// observe takes the caller's context usage (INVALID_FORMAT out of 0–100)
// and, when it sent one, its heartbeat.
func (s *Session) observe(in NextInput, now time.Time) error {
	if err := s.setContext(in.ContextUsagePct, nil); err != nil {
		return err
	}
	if in.Heartbeat {
		s.Context.LastHeartbeatAt = stamp(now)
	}
	return nil
}

// stepStale reports whether the outstanding step last was issued more than
// step_stale_minutes before now.
func stepStale(s *Session, last *IssuedStep, now time.Time) bool {
	issued, _ := parseStamp(last.IssuedAt)
	return now.Sub(issued) > minutes(s.Limits.StepStaleMinutes)
}

// checkReport checks res against the outstanding step: with none, no
// report is expected (STEP_MISMATCH); with one, its report with the step's
// proof (STEP_RESULT_REQUIRED, STEP_PROOF_MISSING), then the report checks
// in order. Nothing is consumed on a refusal.
func checkReport(r Records, s *Session, res *StepResult, now time.Time) error {
	last := s.LastStepIssued
	switch {
	case last == nil && res == nil:
		return nil
	case last == nil:
		return core.NewError(errcode.StepMismatch, "No step is outstanding: ask for the next step without last_step_result.",
			map[string]any{"session_id": s.ID, "step_id": res.StepID})
	case res == nil:
		return core.NewError(errcode.StepResultRequired, fmt.Sprintf("Report the outcome of step %s (last_step_result) before asking for the next step.", last.StepID),
			map[string]any{"session_id": s.ID, "step_id": last.StepID, "step_type": last.Type, "state_version": s.StateVersion})
	case res.StepProof == "":
		return proofErr(errcode.StepProofMissing, s, fmt.Sprintf("step_proof is required for step %s.", last.StepID))
	}
	for _, check := range reportChecks {
		if err := check(r, s, res, now); err != nil {
			return err
		}
	}
	return nil
}

// reportChecks are the checks of a report of the outstanding step, in the
// order their refusals take precedence.
var reportChecks = []func(r Records, s *Session, res *StepResult, now time.Time) error{
	checkIdentity, checkReceipt, checkGateEvidence,
}

// failStructureChanged fails s because its spec's structure changed: the
// failure is stored and audited, and the call is refused with
// SPEC_REBASE_REQUIRED (Outcome.Refusal).
func failStructureChanged(r Records, s *Session, now time.Time) (Outcome, error) {
	s.Status, s.FailureReason = StatusFailed, FailureSpecStructureChanged
	if err := commit(r, s, now); err != nil {
		return Outcome{}, err
	}
	if err := audit(r, s, now, EventPause, "spec_structure_changed", nil, nil); err != nil {
		return Outcome{}, err
	}
	return Outcome{Answer: stateAnswer(s), Refusal: rebaseRequired(s)}, nil
}

// consume records the checked report res (none on a first call) and clears
// the outstanding step it reported.
func consume(sp *specs.Spec, j specs.JournalWriter, r Records, s *Session, res *StepResult, now time.Time) error {
	if res == nil {
		return nil
	}
	if err := record(sp, j, r, s, res, now); err != nil {
		return err
	}
	s.LastStepIssued = nil
	return nil
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

// checkIdentity refuses (STEP_MISMATCH, every mismatch listed) a report
// that does not name the outstanding step: its id, type, proof, the task
// of a task or verification step, the phase of a gate or feedback step,
// and a gate step's gate_attempt_id.
func checkIdentity(_ Records, s *Session, res *StepResult, _ time.Time) error {
	last := s.LastStepIssued
	var msgs []string
	for _, c := range []struct {
		wrong bool
		msg   string
	}{
		{res.StepID != last.StepID, fmt.Sprintf("step_id: expected %s, got %s", last.StepID, res.StepID)},
		{res.StepType != last.Type, fmt.Sprintf("step_type: expected %s, got %s", last.Type, res.StepType)},
		{carriesTask(last.Type) && res.TaskID != last.TaskID, fmt.Sprintf("task_id: expected %s, got %q", last.TaskID, res.TaskID)},
		{carriesPhase(last.Type) && res.PhaseID != last.PhaseID, fmt.Sprintf("phase_id: expected %s, got %q", last.PhaseID, res.PhaseID)},
		{last.Type == StepRunFidelityGate && res.GateAttemptID == "", "gate_attempt_id is required for run_fidelity_gate"},
		{res.StepProof != last.StepProof, "step_proof does not match"},
	} {
		if c.wrong {
			msgs = append(msgs, c.msg)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return core.NewError(errcode.StepMismatch, "The report does not match the issued step (its proof is not consumed): "+strings.Join(msgs, "; ")+".",
		map[string]any{"step_id": last.StepID, "step_type": last.Type, "task_id": last.TaskID, "phase_id": last.PhaseID, "errors": msgs})
}

// carriesTask reports whether steps of type typ name a task (or verify node).
func carriesTask(typ string) bool { return typ == StepImplementTask || typ == StepExecuteVerification }

// carriesPhase reports whether steps of type typ name a phase.
func carriesPhase(typ string) bool {
	return typ == StepRunFidelityGate || typ == StepAddressFidelityFeedback
}

// checkReceipt validates an execute_verification report: a success needs
// the receipt of this step's verify command with exit code 0, issued no
// earlier than the step and no later than 5 minutes from now
// (VERIFICATION_RECEIPT_MISSING, VERIFICATION_RECEIPT_INVALID).
func checkReceipt(_ Records, s *Session, res *StepResult, now time.Time) error {
	pending := s.PendingReceipt
	if res.StepType != StepExecuteVerification || pending == nil || pending.StepID != res.StepID {
		return nil // the verify node has no command: nothing to hash
	}
	rc := res.VerificationReceipt
	switch {
	case rc == nil && res.Outcome != OutcomeSuccess:
		return nil
	case rc == nil:
		return core.NewError(errcode.VerificationReceiptMissing, "An execute_verification success needs its verification_receipt.",
			map[string]any{"field": "verification_receipt", "step_id": res.StepID, "task_id": pending.TaskID, "expected_command_hash": pending.ExpectedCommandHash})
	}
	if msg := receiptFault(rc, pending, res, now); msg != "" {
		return core.NewError(errcode.VerificationReceiptInvalid, msg, map[string]any{"field": "verification_receipt", "step_id": res.StepID, "task_id": pending.TaskID})
	}
	return nil
}

// receiptFault is what is wrong with receipt rc of the report res of the
// pending verification step ("" when nothing): the first of another step,
// another command, issued before the step, issued beyond the 5 minute
// skew, a success with a nonzero exit code.
func receiptFault(rc *Receipt, pending *PendingReceipt, res *StepResult, now time.Time) string {
	issued, _ := parseStamp(rc.IssuedAt)
	stepIssued, _ := parseStamp(pending.IssuedAt)
	switch {
	case rc.StepID != res.StepID:
		return fmt.Sprintf("The receipt is for step %s, not %s.", rc.StepID, res.StepID)
	case rc.CommandHash != pending.ExpectedCommandHash:
		return "The receipt's command_hash is not the sha256 of this verify node's command: run the node's own command."
	case issued.Before(stepIssued.Truncate(time.Second)):
		return "The receipt was issued before its step."
	case issued.After(now.Add(5 * time.Minute)):
		return "The receipt's issued_at is in the future beyond the allowed 5 minute skew."
	case res.Outcome == OutcomeSuccess && rc.ExitCode != 0:
		return fmt.Sprintf("A success needs exit code 0; the receipt has %d: report outcome failure.", rc.ExitCode)
	}
	return ""
}

// checkGateEvidence validates a run_fidelity_gate success against the
// evidence review(fidelity-gate) stored for this step
// (INVALID_GATE_EVIDENCE, GATE_INTEGRITY_CHECKSUM).
func checkGateEvidence(r Records, s *Session, res *StepResult, _ time.Time) error {
	if res.StepType != StepRunFidelityGate || res.Outcome != OutcomeSuccess {
		return nil
	}
	e := s.PendingGateEvidence
	if msg := evidenceFault(e, res); msg != "" {
		return core.NewError(errcode.InvalidGateEvidence, msg, map[string]any{"field": "gate_attempt_id", "step_id": res.StepID, "phase_id": res.PhaseID})
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

// evidenceFault is why the pending gate evidence e does not back the gate
// report res ("" when it does): none, another attempt, another step or
// phase.
func evidenceFault(e *GateEvidence, res *StepResult) string {
	switch {
	case e == nil:
		return "No gate evidence for this step: run the fidelity gate for it first."
	case e.GateAttemptID != res.GateAttemptID:
		return fmt.Sprintf("Gate attempt %s is not the pending one.", res.GateAttemptID)
	case e.StepID != res.StepID || e.PhaseID != res.PhaseID:
		return "The gate evidence is bound to another step or phase."
	}
	return ""
}

// consumption is a checked report being applied in its transaction.
type consumption struct {
	sp   *specs.Spec
	j    specs.JournalWriter
	r    Records
	s    *Session
	res  *StepResult
	now  time.Time
	meta map[string]any // the step_consumed event's metadata
}

// recorders apply a report's effect by its step type.
var recorders = map[string]func(*consumption) error{
	StepImplementTask:           (*consumption).completeOnSuccess,
	StepExecuteVerification:     (*consumption).verification,
	StepRunFidelityGate:         (*consumption).gateOutcome,
	StepAddressFidelityFeedback: (*consumption).feedbackAddressed,
}

// record applies a checked report: spec changes in the same transaction
// (task completed, verification result recorded, verify node completed),
// counters, gates, a journal entry, and the step_consumed audit event.
func record(sp *specs.Spec, j specs.JournalWriter, r Records, s *Session, res *StepResult, now time.Time) error {
	c := &consumption{sp: sp, j: j, r: r, s: s, res: res, now: now, meta: map[string]any{"step_type": res.StepType, "outcome": res.Outcome}}
	c.countErrors()
	if apply := recorders[res.StepType]; apply != nil {
		if err := apply(c); err != nil {
			return err
		}
	}
	c.journal()
	if res.Note != "" {
		c.meta["note"] = res.Note
	}
	return audit(r, s, now, EventStepConsumed, "consume_step", s.LastStepIssued, c.meta)
}

// countErrors counts a failed task or verification step as a consecutive
// error and resets the count on a success; gate steps do not count.
func (c *consumption) countErrors() {
	if carriesPhase(c.res.StepType) {
		return
	}
	switch c.res.Outcome {
	case OutcomeFailure:
		c.s.Counters.ConsecutiveErrors++
	case OutcomeSuccess:
		c.s.Counters.ConsecutiveErrors = 0
	}
}

// completeOnSuccess completes the reported task or verify node in the spec
// when the step succeeded, counting it once per session.
func (c *consumption) completeOnSuccess() error {
	if c.res.Outcome != OutcomeSuccess {
		return nil
	}
	id := c.res.TaskID
	opts := specs.TransitionOptions{Agent: "autonomy:" + c.s.ID, Author: "autonomy", TakeOver: true, Note: c.res.Note}
	if _, err := specs.ApplyTransition(c.sp, c.j, specs.Complete, id, opts); err != nil {
		return err
	}
	if !slices.Contains(c.s.CompletedTaskIDs, id) {
		c.s.CompletedTaskIDs = append(c.s.CompletedTaskIDs, id)
		c.s.Counters.TasksCompleted++
	}
	return nil
}

// verification records an execute_verification report's result on its
// verify node, retires the pending receipt and completes the node on a
// success.
func (c *consumption) verification() error {
	if err := c.recordVerification(); err != nil {
		return err
	}
	c.s.PendingReceipt = nil
	return c.completeOnSuccess()
}

// recordVerification records the verify node's result: from the receipt
// when the step expected one (kept in the session), from the outcome when
// the node has no command (a skip records nothing).
func (c *consumption) recordVerification() error {
	res := c.res
	cmd := ""
	if n := c.sp.Node(res.TaskID); n != nil {
		cmd = n.MetaString("command")
	}
	if rc := res.VerificationReceipt; rc != nil && c.s.PendingReceipt != nil {
		return c.recordReceipt(*rc, cmd)
	}
	if cmd != "" || res.Outcome == OutcomeSkipped {
		return nil
	}
	_, err := specs.RecordVerification(c.sp, res.TaskID, specs.VerificationRecord{Result: resultText(res.Outcome == OutcomeSuccess), Notes: res.Note})
	return err
}

// recordReceipt keeps receipt rc as the verify node's latest and records
// the node's result: PASSED for a success with exit code 0, else FAILED.
func (c *consumption) recordReceipt(rc Receipt, cmd string) error {
	s, res := c.s, c.res
	if s.Receipts == nil {
		s.Receipts = map[string]Receipt{}
	}
	s.Receipts[res.TaskID] = rc
	code := rc.ExitCode
	if _, err := specs.RecordVerification(c.sp, res.TaskID, specs.VerificationRecord{Result: resultText(code == 0 && res.Outcome == OutcomeSuccess), Command: cmd, ExitCode: &code,
		Notes: fmt.Sprintf("autonomy session %s step %s: receipt output_digest %s", s.ID, res.StepID, rc.OutputDigest)}); err != nil {
		return err
	}
	c.meta["exit_code"], c.meta["command_hash"], c.meta["output_digest"] = code, rc.CommandHash, rc.OutputDigest
	return nil
}

// resultText is a verification result as the spec records it.
func resultText(passed bool) string {
	if passed {
		return "PASSED"
	}
	return "FAILED"
}

// gateOutcome applies a run_fidelity_gate report to its phase gate: the
// pending evidence's verdict (fail without a success and evidence) under
// the gate policy, audited; a manual policy waits for an acknowledgement
// instead, and a gate a maintainer waived while the step was out stays
// waived.
func (c *consumption) gateOutcome() error {
	s, res := c.s, c.res
	g := s.gate(res.PhaseID)
	e := s.PendingGateEvidence
	s.PendingGateEvidence = nil
	if g.Status == GateWaived {
		return nil
	}
	g.GateAttemptID, g.EvaluatedAt = res.GateAttemptID, stamp(c.now)
	g.Verdict = VerdictFail
	if res.Outcome == OutcomeSuccess && e != nil {
		g.Verdict = e.Verdict
	}
	c.meta["verdict"], c.meta["gate_attempt_id"] = g.Verdict, res.GateAttemptID
	c.applyPolicy(g)
	if s.PendingManualGateAck != nil {
		return nil
	}
	return audit(c.r, s, c.now, gateEvent(g.Status), "record_gate_outcome", s.LastStepIssued, map[string]any{"verdict": g.Verdict, "gate_attempt_id": res.GateAttemptID, "status": g.Status})
}

// applyPolicy settles gate g after its verdict: a manual policy's success
// waits for an acknowledgement, a verdict the policy passes passes the
// gate, anything else fails it and counts a fidelity review cycle.
func (c *consumption) applyPolicy(g *GateRecord) {
	s, res := c.s, c.res
	switch {
	case res.Outcome == OutcomeSuccess && s.GatePolicy == GateManual:
		s.PendingManualGateAck = &ManualGateAck{GateAttemptID: res.GateAttemptID, PhaseID: res.PhaseID, Verdict: g.Verdict, IssuedAt: stamp(c.now)}
	case passes(s.GatePolicy, g.Verdict):
		g.Status = GatePassed
	default:
		g.Status = GateFailed
		s.Counters.FidelityReviewCyclesInActivePhase++
	}
}

// gateEvent is the audit event of a gate that got status.
func gateEvent(status string) string {
	if status == GatePassed {
		return EventGatePassed
	}
	return EventGateFailed
}

// feedbackAddressed reopens the phase gate after addressed feedback.
func (c *consumption) feedbackAddressed() error {
	if c.res.Outcome == OutcomeSuccess {
		c.s.gate(c.res.PhaseID).Status = GatePending
		c.s.PendingGateEvidence = nil
	}
	return nil
}

// journal appends the report to the spec's journal (its note and the files
// it touched, which the audit event keeps too).
func (c *consumption) journal() {
	res := c.res
	content := fmt.Sprintf("Step %s (%s) reported %s.", res.StepID, res.StepType, res.Outcome)
	if res.Note != "" {
		content += "\n\nNote: " + res.Note
	}
	if len(res.FilesTouched) > 0 {
		content += "\n\nFiles touched: " + strings.Join(res.FilesTouched, ", ")
		c.meta["files_touched"] = res.FilesTouched
	}
	c.j.Append(specs.JournalEntry{Timestamp: specs.FormatTime(c.now), EntryType: "note", Title: fmt.Sprintf("Step %s: %s", res.StepType, res.Outcome),
		Content: content, Author: "autonomy", TaskID: res.TaskID,
		Metadata: map[string]any{"session_id": c.s.ID, "step_id": res.StepID, "step_type": res.StepType, "outcome": res.Outcome, "files_touched": nonNil(res.FilesTouched)}})
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
	if msg := heartbeatPause(s, now); msg != "" {
		return pauseStep(r, s, PauseHeartbeatStale, now, msg)
	}
	if reason, msg := limitPause(s); reason != "" {
		return pauseStep(r, s, reason, now, msg)
	}
	for i, p := range plan {
		if !s.gateCleared(p.ID) {
			s.activate(p.ID)
			return phaseStep(sp, r, s, p, now)
		}
		if s.stopsAfter(plan, i) {
			s.PhaseCompleteSignaled = append(s.PhaseCompleteSignaled, p.ID)
			return pauseStep(r, s, PausePhaseComplete, now, fmt.Sprintf("Phase %s complete. Stopping as configured; resume to start phase %s.", p.ID, plan[i+1].ID))
		}
	}
	return completeSpec(r, s, now)
}

// heartbeatPause is the pause message when s's heartbeat is stale at now
// ("" when it is not): none within heartbeat_grace_minutes of the start,
// or the last one more than heartbeat_stale_minutes ago.
func heartbeatPause(s *Session, now time.Time) string {
	if hb := s.Context.LastHeartbeatAt; hb != "" {
		if t, _ := parseStamp(hb); now.Sub(t) > minutes(s.Limits.HeartbeatStaleMinutes) {
			return "Session paused due to heartbeat staleness. Resume to continue."
		}
		return ""
	}
	if created, _ := parseStamp(s.CreatedAt); now.Sub(created) > minutes(s.Limits.HeartbeatGraceMinutes) {
		return "No heartbeat within the grace window: the session paused. Resume to continue."
	}
	return ""
}

// limitPause is the pause reason and message of the first limit s reached
// (reason "" when none): context usage, consecutive errors, tasks
// completed.
func limitPause(s *Session) (reason, msg string) {
	switch {
	case s.Context.ContextUsagePct >= s.Limits.ContextThresholdPct:
		return PauseContextLimit, fmt.Sprintf("Context usage at %d%% (threshold %d%%). Resume in a fresh context.", s.Context.ContextUsagePct, s.Limits.ContextThresholdPct)
	case s.Counters.ConsecutiveErrors >= s.Limits.MaxConsecutiveErrors:
		return PauseErrorThreshold, fmt.Sprintf("%d consecutive errors. Manual intervention required.", s.Counters.ConsecutiveErrors)
	case s.Counters.TasksCompleted >= s.Limits.MaxTasksPerSession:
		return PauseTaskLimit, fmt.Sprintf("Task limit (%d) reached. Start a new session to continue.", s.Limits.MaxTasksPerSession)
	}
	return "", ""
}

// gateCleared reports whether phase's gate passed or was waived.
func (s *Session) gateCleared(phase string) bool {
	g := s.PhaseGates[phase]
	return g != nil && (g.Status == GatePassed || g.Status == GateWaived)
}

// activate makes phase the active one; entering a phase restarts its
// fidelity review cycle count.
func (s *Session) activate(phase string) {
	if s.ActivePhaseID != phase {
		s.ActivePhaseID = phase
		s.Counters.FidelityReviewCyclesInActivePhase = 0
	}
}

// stopsAfter reports whether the session pauses with phase_complete after
// plan[i], a cleared phase: stop_on_phase_completion is on, a phase
// follows, and the pause was not issued for it before.
func (s *Session) stopsAfter(plan []phasePlan, i int) bool {
	return s.StopConditions.StopOnPhaseCompletion && i < len(plan)-1 && !slices.Contains(s.PhaseCompleteSignaled, plan[i].ID)
}

// phaseStep issues the next step of the active phase p: its next
// unblocked task (all blocked: pause blocked), then its next verify node
// still to prove, then, unless a manual gate review is pending, its gate.
func phaseStep(sp *specs.Spec, r Records, s *Session, p phasePlan, now time.Time) error {
	t, pending := nextTask(sp, p)
	if t != nil {
		s.LastTaskID = t.ID
		return issue(r, s, now, NextStep{Type: StepImplementTask, TaskID: t.ID, PhaseID: p.ID, TaskTitle: t.Title,
			Message: fmt.Sprintf("Implement task '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(t.Title, t.ID))})
	}
	if pending {
		return pauseStep(r, s, PauseBlocked, now, "All remaining tasks are blocked by dependencies. Resolve blockers to continue.")
	}
	if v := s.nextVerification(p); v != nil {
		return issue(r, s, now, NextStep{Type: StepExecuteVerification, TaskID: v.ID, PhaseID: p.ID, TaskTitle: v.Title, Command: v.MetaString("command"),
			Message: fmt.Sprintf("Execute verification '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(v.Title, v.ID))})
	}
	if ack := s.PendingManualGateAck; ack != nil && ack.PhaseID == p.ID {
		return pauseStep(r, s, PauseGateReviewRequired, now, fmt.Sprintf("Manual gate review required for phase %s. Verdict: %s. Acknowledge to continue.", p.ID, ack.Verdict))
	}
	return gateStep(r, s, p, now)
}

// nextTask is p's first task leaf that is pending or in progress and
// unblocked (nil when none), and whether any task leaf is not completed.
func nextTask(sp *specs.Spec, p phasePlan) (next *specs.Node, pending bool) {
	for _, t := range p.Tasks {
		if t.Status == specs.StatusCompleted {
			continue
		}
		pending = true
		if (t.Status == specs.StatusPending || t.Status == specs.StatusInProgress) && specs.IsUnblocked(sp, t.ID) {
			return t, true
		}
	}
	return nil, pending
}

// nextVerification is p's first verify leaf not yet proven (nil when all
// are).
func (s *Session) nextVerification(p phasePlan) *specs.Node {
	for _, v := range p.Verifies {
		if !s.proven(v) {
			return v
		}
	}
	return nil
}

// proven reports whether verify node v needs no further execution: it is
// completed and, when it has a command, the session holds the receipt of
// that command with exit code 0.
func (s *Session) proven(v *specs.Node) bool {
	if v.Status != specs.StatusCompleted {
		return false
	}
	cmd := v.MetaString("command")
	if cmd == "" {
		return true
	}
	rc, ok := s.Receipts[v.ID]
	return ok && rc.ExitCode == 0 && rc.CommandHash == SHA256Hex(cmd)
}

// gateStep issues p's gate step: run_fidelity_gate unless the gate failed;
// a failed gate gets address_fidelity_feedback while auto-retry is on and
// review cycles remain, else a pause (fidelity_cycle_limit, gate_failed).
func gateStep(r Records, s *Session, p phasePlan, now time.Time) error {
	g := s.gate(p.ID)
	if g.Status != GateFailed {
		return issue(r, s, now, NextStep{Type: StepRunFidelityGate, PhaseID: p.ID, GateAttemptID: newID("gate_"),
			Message: fmt.Sprintf("Run fidelity gate for phase '%s'. When reporting this step, use outcome: \"success\", \"failure\", or \"skipped\".", orID(p.Title, p.ID))})
	}
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
	typ, action, meta := issueEvent(s, st)
	return audit(r, s, now, typ, action, s.LastStepIssued, meta)
}

// issueEvent is the audit event of issuing st: step_issued, or pause and
// spec_complete for the steps that stop the session.
func issueEvent(s *Session, st NextStep) (typ, action string, meta map[string]any) {
	meta = map[string]any{"step_type": st.Type}
	if st.GateAttemptID != "" {
		meta["gate_attempt_id"] = st.GateAttemptID
	}
	switch st.Type {
	case StepPause:
		meta["reason"] = st.Reason
		return EventPause, "session_pause", meta
	case StepCompleteSpec:
		meta["tasks_completed"] = s.Counters.TasksCompleted
		return EventSpecComplete, "complete_spec", meta
	}
	return EventStepIssued, "issue_step", meta
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
		NextStep: s.outstandingStep(), RequiredPhaseGates: []string{}, SatisfiedGates: []string{}, MissingRequiredGates: []string{}}
	for _, id := range slices.Sorted(maps.Keys(s.RequiredPhaseGates)) {
		a.RequiredPhaseGates = append(a.RequiredPhaseGates, id)
		if s.gateCleared(id) {
			a.SatisfiedGates = append(a.SatisfiedGates, id)
		} else {
			a.MissingRequiredGates = append(a.MissingRequiredGates, id)
		}
	}
	a.LoopSignal = LoopSignal(s.Status, s.PauseReason, "")
	return a
}

// outstandingStep is the step the session's answer shows: the one this
// call issued, else the last one issued while it is still outstanding (as
// its cached answer showed it); nil when none is.
func (s *Session) outstandingStep() *NextStep {
	if s.nextStep != nil {
		return s.nextStep
	}
	if s.LastStepIssued == nil || s.LastIssuedResponse == nil {
		return nil
	}
	var prev StepAnswer
	if json.Unmarshal(s.LastIssuedResponse, &prev) != nil || prev.NextStep == nil || prev.NextStep.StepID != s.LastStepIssued.StepID {
		return nil
	}
	return prev.NextStep
}

// codeSignals are the loop signals of the error codes that stop a loop:
// the runtime refused a report or a write (blocked_runtime), the spec
// needs a rebase (failed).
var codeSignals = map[string]string{
	errcode.GateIntegrityChecksum:      SignalBlockedRuntime,
	errcode.StepProofMissing:           SignalBlockedRuntime,
	errcode.StepProofMismatch:          SignalBlockedRuntime,
	errcode.StepProofConflict:          SignalBlockedRuntime,
	errcode.VerificationReceiptMissing: SignalBlockedRuntime,
	errcode.VerificationReceiptInvalid: SignalBlockedRuntime,
	errcode.Forbidden:                  SignalBlockedRuntime,
	errcode.AutonomyWriteLockActive:    SignalBlockedRuntime,
	errcode.SpecRebaseRequired:         SignalFailed,
}

// statusSignals are the loop signals of the statuses that need a person.
var statusSignals = map[string]string{
	StatusFailed: SignalFailed,
	StatusPaused: SignalPausedNeedsAttention,
}

// LoopSignal maps a status, pause reason or error code to foundry's loop
// signal ("" while the loop should simply go on): a phase_complete pause
// and a completed spec first, then the error code, then the status.
func LoopSignal(status, pauseReason, code string) string {
	switch {
	case pauseReason == PausePhaseComplete && status == StatusPaused:
		return SignalPhaseComplete
	case status == StatusCompleted:
		return SignalSpecComplete
	}
	if signal, ok := codeSignals[code]; ok {
		return signal
	}
	return statusSignals[status]
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
	if err := outstandingGate(last, phaseID, stepID); err != nil {
		return GateAnswer{}, err
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

// outstandingGate refuses (INVALID_GATE_EVIDENCE, naming the outstanding
// step when there is one) unless last is the run_fidelity_gate step
// stepID of phase phaseID.
func outstandingGate(last *IssuedStep, phaseID, stepID string) error {
	if last != nil && last.Type == StepRunFidelityGate && last.StepID == stepID && last.PhaseID == phaseID {
		return nil
	}
	d := map[string]any{"field": "step_id", "received": stepID, "phase_id": phaseID}
	if last != nil {
		d["outstanding_step_id"], d["outstanding_step_type"], d["outstanding_phase_id"] = last.StepID, last.Type, last.PhaseID
	}
	return core.NewError(errcode.InvalidGateEvidence, "step_id and phase_id must name the session's outstanding run_fidelity_gate step.", d)
}
