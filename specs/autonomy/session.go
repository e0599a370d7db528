package autonomy

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// StartInput is session start's parameters; nil and zero fields take
// foundry's defaults (DefaultLimits, gate_policy strict, auto-retry on,
// stop_on_phase_completion off, write lock enforced).
type StartInput struct {
	IdempotencyKey        string
	Force                 bool
	GatePolicy            string
	Limits                Limits
	StopOnPhaseCompletion *bool
	AutoRetryFidelityGate *bool
	EnforceWriteLock      *bool
	// StartedBy is the caller's holder identity (recorded on the session
	// and as the start's actor); OwnerKeyID its API key id ("" without
	// keys), the key the session is driven under (Session.DrivableBy).
	StartedBy  string
	OwnerKeyID string
}

func invalid(field, format string, args ...any) *core.Error {
	return core.NewError(errcode.InvalidFormat, fmt.Sprintf(format, args...), map[string]any{"field": field})
}

// limitField is one limit of StartInput: where it is, its default and
// its bounds.
type limitField struct {
	v        *int
	def      int
	name     string
	min, max int
}

// fill gives an unset (zero) limit its default and refuses one out of its
// bounds (INVALID_FORMAT).
func (f limitField) fill() error {
	if *f.v == 0 {
		*f.v = f.def
	}
	if *f.v < f.min || *f.v > f.max {
		return invalid(f.name, "%s must be between %d and %d.", f.name, f.min, f.max).WithDetail("received", *f.v)
	}
	return nil
}

// resolve fills in's defaults and checks it: every limit within its
// bounds, the heartbeat grace shorter than the staleness, a known gate
// policy (INVALID_FORMAT). It returns the session's limits.
func (in *StartInput) resolve() (Limits, error) {
	l := in.Limits
	d := DefaultLimits
	for _, f := range []limitField{
		{&l.MaxTasksPerSession, d.MaxTasksPerSession, "max_tasks_per_session", 1, 10000},
		{&l.MaxConsecutiveErrors, d.MaxConsecutiveErrors, "max_consecutive_errors", 1, 1000},
		{&l.ContextThresholdPct, d.ContextThresholdPct, "context_threshold_pct", 1, 100},
		{&l.HeartbeatStaleMinutes, d.HeartbeatStaleMinutes, "heartbeat_stale_minutes", 1, 10080},
		{&l.HeartbeatGraceMinutes, d.HeartbeatGraceMinutes, "heartbeat_grace_minutes", 1, 10080},
		{&l.StepStaleMinutes, d.StepStaleMinutes, "step_stale_minutes", 1, 10080},
		{&l.MaxFidelityReviewCyclesPerPhase, d.MaxFidelityReviewCyclesPerPhase, "max_fidelity_review_cycles_per_phase", 1, 100},
	} {
		if err := f.fill(); err != nil {
			return l, err
		}
	}
	if l.HeartbeatGraceMinutes >= l.HeartbeatStaleMinutes {
		return l, invalid("heartbeat_grace_minutes", "heartbeat_grace_minutes (%d) must be less than heartbeat_stale_minutes (%d).", l.HeartbeatGraceMinutes, l.HeartbeatStaleMinutes)
	}
	if in.GatePolicy == "" {
		in.GatePolicy = GateStrict
	}
	if !slices.Contains(GatePolicies, in.GatePolicy) {
		return l, invalid("gate_policy", "gate_policy must be one of strict, lenient, manual.").WithDetail("received", in.GatePolicy).WithDetail("allowed", GatePolicies)
	}
	return l, nil
}

// Start opens a session on sp: one non-terminal session per spec
// (SPEC_SESSION_EXISTS, details.existing_session_id), unless the
// idempotency key matches the existing session's (then that session is
// returned, reused=true) or force ends it first. Every phase requires a
// fidelity gate. The start is audited.
func Start(sp *specs.Spec, r Records, in StartInput, now time.Time) (s *Session, reused bool, err error) {
	limits, err := in.resolve()
	if err != nil {
		return nil, false, err
	}
	cur, err := ActiveSession(r)
	if err != nil {
		return nil, false, err
	}
	if cur != nil {
		reuse, err := settleExisting(sp, r, cur, in, now)
		if err != nil {
			return nil, false, err
		}
		if reuse {
			return cur, true, nil
		}
	}
	s = newSession(sp, in, limits, now)
	if err := commit(r, s, now); err != nil {
		return nil, false, err
	}
	return s, false, auditAs(r, s, now, in.StartedBy, EventStart, "session_start", nil, map[string]any{
		"gate_policy": s.GatePolicy, "idempotency_key": s.IdempotencyKey, "stop_on_phase_completion": s.StopConditions.StopOnPhaseCompletion})
}

// settleExisting decides what the spec's non-terminal session cur means
// for a start: the same idempotency key reuses it (true), force ends it
// (audited as force_replaced), else SPEC_SESSION_EXISTS.
func settleExisting(sp *specs.Spec, r Records, cur *Session, in StartInput, now time.Time) (reuse bool, err error) {
	switch {
	case in.IdempotencyKey != "" && cur.IdempotencyKey == in.IdempotencyKey:
		return true, nil
	case in.Force:
		cur.Status = StatusEnded
		if err := commit(r, cur, now); err != nil {
			return false, err
		}
		return false, auditAs(r, cur, now, in.StartedBy, EventEnd, "force_replaced", nil, map[string]any{"reason": "force_replaced"})
	}
	return false, core.NewError(errcode.SpecSessionExists, fmt.Sprintf("Spec %s already has an active autonomy session (%s).", sp.Header.SpecID, cur.ID),
		map[string]any{"spec_id": sp.Header.SpecID, "existing_session_id": cur.ID, "existing_status": cur.Status})
}

// newSession is a running session on sp with in's options (resolved
// limits) and a required fidelity gate per phase.
func newSession(sp *specs.Spec, in StartInput, limits Limits, now time.Time) *Session {
	s := &Session{ID: newID("sess_"), SpecID: sp.Header.SpecID, IdempotencyKey: in.IdempotencyKey, StartedBy: in.StartedBy, OwnerKeyID: in.OwnerKeyID,
		SpecStructureHash: structureHash(sp),
		Status:            StatusRunning, CreatedAt: stamp(now), Limits: limits, GatePolicy: in.GatePolicy,
		StopConditions:    StopConditions{AutoRetryFidelityGate: true},
		WriteLockEnforced: true, PhaseGates: map[string]*GateRecord{}, RequiredPhaseGates: requiredGates(planOf(sp)), CompletedTaskIDs: []string{}}
	override(&s.StopConditions.StopOnPhaseCompletion, in.StopOnPhaseCompletion)
	override(&s.StopConditions.AutoRetryFidelityGate, in.AutoRetryFidelityGate)
	override(&s.WriteLockEnforced, in.EnforceWriteLock)
	return s
}

// override sets *dst to *v when v is given.
func override(dst, v *bool) {
	if v != nil {
		*dst = *v
	}
}

// requiredGates is the gates a session on plan requires: a fidelity gate
// per phase.
func requiredGates(plan []phasePlan) map[string][]string {
	gates := map[string][]string{}
	for _, p := range plan {
		gates[p.ID] = []string{"fidelity"}
	}
	return gates
}

// commit stamps and stores s (state_version + 1).
func commit(r Records, s *Session, now time.Time) error {
	s.UpdatedAt = stamp(now)
	s.StateVersion++
	return save(r, s)
}

func transitionErr(s *Session, target, why string) *core.Error {
	return core.NewError(errcode.InvalidStateTransition, fmt.Sprintf("Invalid state transition: %s -> %s (%s).", s.Status, target, why),
		map[string]any{"session_id": s.ID, "current_status": s.Status, "target_status": target, "reason": why})
}

// Pause pauses a running session (reason: a pause reason, default user).
// INVALID_STATE_TRANSITION, INVALID_FORMAT.
func Pause(r Records, s *Session, reason string, now time.Time) error {
	if reason == "" {
		reason = PauseUser
	}
	if !slices.Contains(PauseReasons, reason) {
		return invalid("reason", "reason must be a pause reason.").WithDetail("received", reason).WithDetail("allowed", PauseReasons)
	}
	if s.Status != StatusRunning {
		return transitionErr(s, StatusPaused, "only a running session can be paused")
	}
	s.Status, s.PauseReason, s.PausedAt = StatusPaused, reason, stamp(now)
	if err := commit(r, s, now); err != nil {
		return err
	}
	return audit(r, s, now, EventPause, "session_pause", nil, map[string]any{"reason": reason})
}

// ResumeInput is resume's parameters.
type ResumeInput struct {
	AcknowledgeGateReview     bool
	AcknowledgedGateAttemptID string
	Force                     bool
}

// Resume moves a paused session (or, with force, a failed one whose spec
// structure is unchanged) back to running. A pending manual gate needs
// its acknowledgement (MANUAL_GATE_ACK_REQUIRED, INVALID_GATE_ACK), which
// is recorded: the phase gate passes as acknowledged, audited. An issued
// pause step is consumed by the resume.
func Resume(sp *specs.Spec, r Records, s *Session, in ResumeInput, now time.Time) error {
	if err := resumable(sp, s, in.Force); err != nil {
		return err
	}
	if err := acknowledgeGate(r, s, in, now); err != nil {
		return err
	}
	from := s.Status
	s.Status, s.PauseReason, s.PausedAt, s.FailureReason = StatusRunning, "", "", ""
	if s.LastStepIssued != nil && s.LastStepIssued.Type == StepPause {
		s.LastStepIssued, s.LastIssuedResponse = nil, nil
	}
	if err := commit(r, s, now); err != nil {
		return err
	}
	return audit(r, s, now, EventResume, "session_resume", nil, map[string]any{"from": from, "force": in.Force})
}

// resumable refuses to resume s unless it is paused, or failed with force
// and an unchanged spec structure (INVALID_STATE_TRANSITION,
// SPEC_REBASE_REQUIRED).
func resumable(sp *specs.Spec, s *Session, force bool) error {
	switch {
	case s.Status == StatusPaused:
		return nil
	case s.Status != StatusFailed:
		return transitionErr(s, StatusRunning, "only a paused or failed session can be resumed")
	case !force:
		return transitionErr(s, StatusRunning, "use force=true to resume a failed session")
	case structureHash(sp) != s.SpecStructureHash:
		return rebaseRequired(s)
	}
	return nil
}

// acknowledgeGate passes the gate of a pending manual gate review with
// the resume's acknowledgement of its attempt (audited); without a pending
// review there is nothing to do. MANUAL_GATE_ACK_REQUIRED, INVALID_GATE_ACK.
func acknowledgeGate(r Records, s *Session, in ResumeInput, now time.Time) error {
	ack := s.PendingManualGateAck
	switch {
	case ack == nil:
		return nil
	case !in.AcknowledgeGateReview:
		return core.NewError(errcode.ManualGateAckRequired, fmt.Sprintf("Phase %s's gate needs a manual review acknowledgement before resuming.", ack.PhaseID),
			map[string]any{"session_id": s.ID, "gate_attempt_id": ack.GateAttemptID, "phase_id": ack.PhaseID, "verdict": ack.Verdict})
	case in.AcknowledgedGateAttemptID != ack.GateAttemptID:
		return core.NewError(errcode.InvalidGateAck, "acknowledged_gate_attempt_id does not name the pending gate attempt.",
			map[string]any{"field": "acknowledged_gate_attempt_id", "expected": ack.GateAttemptID, "provided": in.AcknowledgedGateAttemptID})
	}
	g := s.gate(ack.PhaseID)
	g.Status, g.Verdict, g.GateAttemptID, g.AcknowledgedAt, g.EvaluatedAt = GatePassed, ack.Verdict, ack.GateAttemptID, stamp(now), stamp(now)
	s.PendingManualGateAck = nil
	return audit(r, s, now, EventGatePassed, "manual_gate_ack", nil, map[string]any{"phase_id": ack.PhaseID, "gate_attempt_id": ack.GateAttemptID, "verdict": ack.Verdict})
}

func validReason(code string) error {
	if !slices.Contains(ReasonCodes, code) {
		if code == "" {
			return core.NewError(errcode.MissingRequired, "reason_code is required.", map[string]any{"field": "reason_code", "allowed": ReasonCodes})
		}
		return invalid("reason_code", "reason_code must be one of %v.", ReasonCodes).WithDetail("received", code).WithDetail("allowed", ReasonCodes)
	}
	return nil
}

// End ends a non-terminal session with a reason code; actor, the caller's
// holder identity, is the event's actor. INVALID_STATE_TRANSITION.
func End(r Records, s *Session, reasonCode, detail, actor string, now time.Time) error {
	if err := validReason(reasonCode); err != nil {
		return err
	}
	if Terminal(s.Status) {
		return transitionErr(s, StatusEnded, "the session is already "+s.Status)
	}
	from := s.Status
	s.Status = StatusEnded
	if err := commit(r, s, now); err != nil {
		return err
	}
	return auditAs(r, s, now, actor, EventEnd, "session_end", nil, map[string]any{"reason_code": reasonCode, "reason_detail": detail, "from": from})
}

// Reset deletes a failed session (foundry's escape hatch for a session
// that cannot go on); the audit ledger keeps its history, and the reset
// event names actor, the caller's holder identity.
func Reset(r Records, s *Session, reasonCode, detail, actor string, now time.Time) error {
	if err := validReason(reasonCode); err != nil {
		return err
	}
	if s.Status != StatusFailed {
		return transitionErr(s, "deleted", "only failed sessions can be reset")
	}
	if err := r.Delete(sessionKey(s.ID)); err != nil {
		return err
	}
	if string(r.Get(keyActive)) == s.ID {
		if err := r.Delete(keyActive); err != nil {
			return err
		}
	}
	return auditAs(r, s, now, actor, EventReset, "session_reset", nil, map[string]any{"reason_code": reasonCode, "reason_detail": detail})
}

// Heartbeat records the caller's heartbeat and context usage.
func Heartbeat(r Records, s *Session, pct, tokens *int, now time.Time) error {
	if Terminal(s.Status) {
		return transitionErr(s, s.Status, "a "+s.Status+" session takes no heartbeat")
	}
	if err := s.setContext(pct, tokens); err != nil {
		return err
	}
	s.Context.LastHeartbeatAt = stamp(now)
	return commit(r, s, now)
}

func (s *Session) setContext(pct, tokens *int) error {
	if pct != nil {
		if *pct < 0 || *pct > 100 {
			return invalid("context_usage_pct", "context_usage_pct must be between 0 and 100.").WithDetail("received", *pct)
		}
		s.Context.ContextUsagePct = *pct
	}
	if tokens != nil {
		if *tokens < 0 {
			return invalid("estimated_tokens_used", "estimated_tokens_used must not be negative.").WithDetail("received", *tokens)
		}
		s.Context.EstimatedTokensUsed = tokens
	}
	return nil
}

// RebaseResult is what a rebase changed.
type RebaseResult struct {
	Result                string   `json:"result"` // no_change | success | completed_tasks_removed
	AddedTasks            []string `json:"added_tasks"`
	RemovedTasks          []string `json:"removed_tasks"`
	CompletedTasksRemoved int      `json:"completed_tasks_removed"`
}

func rebaseRequired(s *Session) *core.Error {
	return core.NewError(errcode.SpecRebaseRequired, fmt.Sprintf("Spec %s's structure changed since session %s planned it.", s.SpecID, s.ID),
		map[string]any{"session_id": s.ID, "spec_id": s.SpecID})
}

// Rebase re-plans a paused or failed session on the spec as it is now:
// completed tasks that left the spec are dropped (only with force when
// any), gates of removed phases go, an issued step whose node left the
// spec is withdrawn, and a session failed for the structure change
// becomes paused (resume continues it).
func Rebase(sp *specs.Spec, r Records, s *Session, force bool, now time.Time) (RebaseResult, error) {
	res := RebaseResult{Result: "no_change", AddedTasks: []string{}, RemovedTasks: []string{}}
	if s.Status != StatusPaused && s.Status != StatusFailed {
		return res, transitionErr(s, s.Status, "only a paused or failed session can be rebased")
	}
	hash := structureHash(sp)
	if hash == s.SpecStructureHash && s.Status != StatusFailed {
		return res, nil
	}
	plan := planOf(sp)
	ids := taskIDs(plan)
	kept, removed := splitCompleted(s.CompletedTaskIDs, ids)
	res.RemovedTasks = append(res.RemovedTasks, removed...)
	if len(removed) > 0 && !force {
		return res, core.NewError(errcode.SpecRebaseRequired, "Completed tasks of this session left the spec; rebase with force=true to drop them.",
			map[string]any{"session_id": s.ID, "removed_completed_tasks": res.RemovedTasks})
	}
	res.AddedTasks = append(res.AddedTasks, addedTasks(ids, s.CompletedTaskIDs)...)
	res.CompletedTasksRemoved = len(removed)
	res.Result = "success"
	if len(removed) > 0 {
		res.Result = "completed_tasks_removed"
	}
	s.rebaseOnto(plan, ids, kept, hash, now)
	if err := commit(r, s, now); err != nil {
		return res, err
	}
	return res, audit(r, s, now, EventRebase, "session_rebase", nil, map[string]any{"result": res.Result, "removed_tasks": res.RemovedTasks, "added_tasks": res.AddedTasks})
}

// splitCompleted splits completed task ids into those still in the spec
// (ids) and those that left it, in their order.
func splitCompleted(completed []string, ids map[string]bool) (kept, removed []string) {
	for _, id := range completed {
		if ids[id] {
			kept = append(kept, id)
		} else {
			removed = append(removed, id)
		}
	}
	return kept, removed
}

// addedTasks is the spec's task ids (ids) the session has not completed,
// sorted.
func addedTasks(ids map[string]bool, completed []string) []string {
	var added []string
	for id := range ids {
		if !slices.Contains(completed, id) {
			added = append(added, id)
		}
	}
	sort.Strings(added)
	return added
}

// rebaseOnto re-plans s on plan (work leaf ids ids, structure hash hash):
// it keeps the completed tasks kept, drops the gates of phases that left,
// requires a gate per phase, withdraws an issued step whose task or phase
// left, and turns a failed session into a paused one.
func (s *Session) rebaseOnto(plan []phasePlan, ids map[string]bool, kept []string, hash string, now time.Time) {
	s.CompletedTaskIDs = append([]string{}, kept...)
	for pid := range s.PhaseGates {
		if !hasPhase(plan, pid) {
			delete(s.PhaseGates, pid)
		}
	}
	s.RequiredPhaseGates = requiredGates(plan)
	if st := s.LastStepIssued; st != nil && st.leftPlan(plan, ids) {
		s.LastStepIssued, s.LastIssuedResponse, s.PendingReceipt, s.PendingGateEvidence = nil, nil, nil, nil
	}
	s.SpecStructureHash = hash
	if s.Status == StatusFailed {
		s.Status, s.FailureReason, s.PauseReason, s.PausedAt = StatusPaused, "", PauseUser, stamp(now)
	}
}

// leftPlan reports whether the task or phase step st names is no longer
// in plan (work leaf ids ids).
func (st *IssuedStep) leftPlan(plan []phasePlan, ids map[string]bool) bool {
	return st.TaskID != "" && !ids[st.TaskID] || st.PhaseID != "" && !hasPhase(plan, st.PhaseID)
}

func hasPhase(plan []phasePlan, id string) bool { _, ok := phaseOf(plan, id); return ok }

// gate returns phase's gate record, made pending when absent.
func (s *Session) gate(phase string) *GateRecord {
	if s.PhaseGates == nil {
		s.PhaseGates = map[string]*GateRecord{}
	}
	g := s.PhaseGates[phase]
	if g == nil {
		g = &GateRecord{Required: true, Status: GatePending}
		s.PhaseGates[phase] = g
	}
	return g
}

// GateWaiver waives phase's gate (maintainer only and off unless enabled:
// the tool layer checks both) of a session that has not ended. actor, the
// caller's holder identity, is recorded as the gate's waived_by and as the
// audit event's actor. GATE_NOT_FOUND, GATE_ALREADY_PASSED,
// GATE_ALREADY_WAIVED, INVALID_FORMAT, INVALID_STATE_TRANSITION.
func GateWaiver(r Records, s *Session, phaseID, reasonCode, detail, role, actor string, now time.Time) (*GateRecord, error) {
	if err := validReason(reasonCode); err != nil {
		return nil, err
	}
	if Terminal(s.Status) {
		return nil, transitionErr(s, s.Status, "a "+s.Status+" session's gates are final")
	}
	g, err := s.waivable(phaseID)
	if err != nil {
		return nil, err
	}
	g.Status, g.WaiverReasonCode, g.WaiverReasonDetail, g.WaivedAt, g.WaivedByRole, g.WaivedBy = GateWaived, reasonCode, detail, stamp(now), role, actor
	s.dropPendingGate(phaseID)
	if err := commit(r, s, now); err != nil {
		return nil, err
	}
	return g, auditAs(r, s, now, actor, EventGateWaived, "gate_waiver", nil, map[string]any{"phase_id": phaseID, "reason_code": reasonCode, "reason_detail": detail, "role": role})
}

// waivable is phaseID's gate record when it may be waived: it exists
// (GATE_NOT_FOUND, with the known phase gates) and has neither passed
// (GATE_ALREADY_PASSED) nor been waived (GATE_ALREADY_WAIVED).
func (s *Session) waivable(phaseID string) (*GateRecord, error) {
	g := s.PhaseGates[phaseID]
	if g == nil {
		return nil, core.NewError(errcode.GateNotFound, fmt.Sprintf("Session %s has no gate record for phase %s.", s.ID, phaseID),
			map[string]any{"field": "phase_id", "received": phaseID, "known_phase_gates": slices.Sorted(maps.Keys(s.PhaseGates))})
	}
	switch g.Status {
	case GatePassed:
		return nil, core.NewError(errcode.GateAlreadyPassed, fmt.Sprintf("Phase %s's gate already passed.", phaseID), map[string]any{"phase_id": phaseID, "current_status": g.Status})
	case GateWaived:
		return nil, core.NewError(errcode.GateAlreadyWaived, fmt.Sprintf("Phase %s's gate is already waived.", phaseID), map[string]any{"phase_id": phaseID, "current_status": g.Status})
	}
	return g, nil
}

// dropPendingGate forgets the gate evidence and the manual review pending
// for phaseID's gate.
func (s *Session) dropPendingGate(phaseID string) {
	if e := s.PendingGateEvidence; e != nil && e.PhaseID == phaseID {
		s.PendingGateEvidence = nil
	}
	if ack := s.PendingManualGateAck; ack != nil && ack.PhaseID == phaseID {
		s.PendingManualGateAck = nil
	}
}

// WriteLock reports the session holding the spec's write lock: its active
// session, when it enforces the lock. Nil when the spec is unlocked.
func WriteLock(r Records) (*Session, error) {
	s, err := ActiveSession(r)
	if err != nil || s == nil || !s.WriteLockEnforced {
		return nil, err
	}
	return s, nil
}

// RecordBypass audits a write-lock bypass (in the bypassing mutation's
// transaction) by actor, the caller's holder identity.
func RecordBypass(r Records, s *Session, action, reason, actor string, now time.Time) error {
	return auditAs(r, s, now, actor, EventBypass, "write_lock_bypass", nil, map[string]any{"action": action, "bypass_reason": reason})
}
