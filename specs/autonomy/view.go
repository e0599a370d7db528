package autonomy

import (
	"slices"
	"time"

	"github.com/specd/specd/specs"
)

// PhaseProgress is the active phase's progress.
type PhaseProgress struct {
	PhaseID        string `json:"phase_id"`
	PhaseTitle     string `json:"phase_title,omitempty"`
	TotalTasks     int    `json:"total_tasks"`
	CompletedTasks int    `json:"completed_tasks"`
	BlockedTasks   int    `json:"blocked_tasks"`
	RemainingTasks int    `json:"remaining_tasks"`
	CompletionPct  int    `json:"completion_pct"`
}

// SessionView is session start/status/pause/resume/end's answer
// (foundry's SessionResponseData).
type SessionView struct {
	SessionID            string                 `json:"session_id"`
	SpecID               string                 `json:"spec_id"`
	Status               string                 `json:"status"`
	EffectiveStatus      string                 `json:"effective_status,omitempty"`
	StaleReason          string                 `json:"stale_reason,omitempty"`
	PauseReason          string                 `json:"pause_reason,omitempty"`
	FailureReason        string                 `json:"failure_reason,omitempty"`
	Counters             Counters               `json:"counters"`
	Limits               Limits                 `json:"limits"`
	StopConditions       StopConditions         `json:"stop_conditions"`
	WriteLockEnforced    bool                   `json:"write_lock_enforced"`
	GatePolicy           string                 `json:"gate_policy"`
	ActivePhaseID        string                 `json:"active_phase_id,omitempty"`
	LastHeartbeatAt      string                 `json:"last_heartbeat_at,omitempty"`
	ContextUsagePct      int                    `json:"context_usage_pct"`
	LastStepID           string                 `json:"last_step_id,omitempty"`
	LastStepType         string                 `json:"last_step_type,omitempty"`
	CurrentTaskID        string                 `json:"current_task_id,omitempty"`
	ActivePhaseProgress  *PhaseProgress         `json:"active_phase_progress,omitempty"`
	PhaseGates           map[string]*GateRecord `json:"phase_gates"`
	PendingManualGateAck *ManualGateAck         `json:"pending_manual_gate_ack,omitempty"`
	CompletedTaskIDs     []string               `json:"completed_task_ids"`
	SessionSignal        string                 `json:"session_signal,omitempty"`
	StateVersion         int                    `json:"state_version"`
	IdempotencyKey       string                 `json:"idempotency_key,omitempty"`
	StartedBy            string                 `json:"started_by,omitempty"`   // the starting caller's holder identity
	OwnerKeyID           string                 `json:"owner_key_id,omitempty"` // the key that drives the session (none: not bound)
	CreatedAt            string                 `json:"created_at"`
	UpdatedAt            string                 `json:"updated_at"`
	RebaseResult         *RebaseResult          `json:"rebase_result,omitempty"`
}

// View is s as status answers it at now (sp, when given, adds the active
// phase's progress). effective_status is paused when a running session's
// step or heartbeat has gone stale (the next step call pauses it).
func View(sp *specs.Spec, s *Session, now time.Time) SessionView {
	v := SessionView{SessionID: s.ID, SpecID: s.SpecID, Status: s.Status, PauseReason: s.PauseReason, FailureReason: s.FailureReason,
		Counters: s.Counters, Limits: s.Limits, StopConditions: s.StopConditions, WriteLockEnforced: s.WriteLockEnforced, GatePolicy: s.GatePolicy,
		ActivePhaseID: s.ActivePhaseID, LastHeartbeatAt: s.Context.LastHeartbeatAt, ContextUsagePct: s.Context.ContextUsagePct,
		PhaseGates: s.PhaseGates, PendingManualGateAck: s.PendingManualGateAck, CompletedTaskIDs: s.CompletedTaskIDs,
		StateVersion: s.StateVersion, IdempotencyKey: s.IdempotencyKey, StartedBy: s.StartedBy, OwnerKeyID: s.OwnerKeyID, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		SessionSignal: LoopSignal(s.Status, s.PauseReason, ""), ActivePhaseProgress: activeProgress(sp, s.ActivePhaseID)}
	if v.PhaseGates == nil {
		v.PhaseGates = map[string]*GateRecord{}
	}
	if v.CompletedTaskIDs == nil {
		v.CompletedTaskIDs = []string{}
	}
	if st := s.LastStepIssued; st != nil {
		v.LastStepID, v.LastStepType, v.CurrentTaskID = st.StepID, st.Type, st.TaskID
	}
	if reason := staleness(s, now); reason != "" {
		v.EffectiveStatus, v.StaleReason = StatusPaused, reason
	}
	return v
}

// activeProgress is the progress of sp's phase active (nil without a spec,
// an active phase, or when the phase left the spec).
func activeProgress(sp *specs.Spec, active string) *PhaseProgress {
	if sp == nil || active == "" {
		return nil
	}
	p, ok := phaseOf(planOf(sp), active)
	if !ok {
		return nil
	}
	return progressOf(p)
}

// progressOf counts p's work leaves (tasks and verify nodes) by status.
func progressOf(p phasePlan) *PhaseProgress {
	pp := &PhaseProgress{PhaseID: p.ID, PhaseTitle: p.Title}
	for _, n := range slices.Concat(p.Tasks, p.Verifies) {
		pp.TotalTasks++
		switch n.Status {
		case specs.StatusCompleted:
			pp.CompletedTasks++
		case specs.StatusBlocked:
			pp.BlockedTasks++
		}
	}
	pp.RemainingTasks = pp.TotalTasks - pp.CompletedTasks
	if pp.TotalTasks > 0 {
		pp.CompletionPct = pp.CompletedTasks * 100 / pp.TotalTasks
	}
	return pp
}

// staleness is why a running session counts as paused at now: its step
// (step_stale) or its heartbeat (heartbeat_stale; none yet: within the
// grace after the start) went stale; "" if not.
func staleness(s *Session, now time.Time) string {
	if s.Status != StatusRunning {
		return ""
	}
	if st := s.LastStepIssued; st != nil && expired(st.IssuedAt, now, minutes(s.Limits.StepStaleMinutes)) {
		return PauseStepStale
	}
	since, limit := s.Context.LastHeartbeatAt, minutes(s.Limits.HeartbeatStaleMinutes)
	if since == "" {
		since, limit = s.CreatedAt, minutes(s.Limits.HeartbeatGraceMinutes)
	}
	if expired(since, now, limit) {
		return PauseHeartbeatStale
	}
	return ""
}

// expired reports whether the stamp at is a valid time more than limit
// before now.
func expired(at string, now time.Time, limit time.Duration) bool {
	t, ok := parseStamp(at)
	return ok && now.Sub(t) > limit
}
