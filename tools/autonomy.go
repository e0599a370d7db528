package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/autonomy"
)

// The MCP face of autonomy sessions (README "Autonomous runs"; foundry-mcp v0.16's names):
// task(action="session", command=…), task(action="session-step",
// command=…), task(action="session-events"), task(action="gate-waiver")
// and review(action="fidelity-gate"). Each call is one store transaction
// over the spec and its autonomy records (specs/autonomy does the work);
// this file binds arguments, renders steps' instructions and the
// supervisors' recommended_actions, and names every refusal's next call.

// Session and session-step commands.
var (
	sessionCommands = []string{"start", "status", "pause", "resume", "rebase", "end", "list", "reset"}
	stepCommands    = []string{"next", "report", "replay", "heartbeat"}
)

// autonomyActions are the task tool's session actions (flag
// autonomy_sessions in flags/registry).
var autonomyActions = []string{"session", "session-step", "session-events", "gate-waiver"}

func intParam(name string, min, max float64, description string) mcptool.Param {
	return mcptool.Param{Name: name, Type: mcptool.Integer, Min: f64(min), Max: f64(max), Description: description}
}

// autonomyParams are the task tool's parameters of the session actions.
var autonomyParams = []mcptool.Param{
	idParam("session_id", "Autonomy session id (default: the spec's active session)."),
	{Name: "idempotency_key", Type: mcptool.String, MaxLength: 128, Pattern: `^[a-zA-Z0-9_-]+$`, Description: "session start: the same key returns the active session instead of SPEC_SESSION_EXISTS."},
	{Name: "gate_policy", Type: mcptool.String, Enum: autonomy.GatePolicies, Description: "Phase gate policy: strict (default; pass only), lenient (pass or warn), manual (a human acknowledges)."},
	// The limits' bounds are checked by session start (INVALID_FORMAT
	// naming the range), not published in tools/list, which stays lean.
	{Name: "max_tasks_per_session", Type: mcptool.Integer, Description: "Default 100 (1–10000)."},
	{Name: "max_consecutive_errors", Type: mcptool.Integer, Description: "Default 3 (1–1000)."},
	{Name: "context_threshold_pct", Type: mcptool.Integer, Description: "Pause at this context usage; default 85 (1–100)."},
	{Name: "heartbeat_stale_minutes", Type: mcptool.Integer, Description: "Default 10 (1–10080)."},
	{Name: "heartbeat_grace_minutes", Type: mcptool.Integer, Description: "Before the first heartbeat; default 5, below heartbeat_stale_minutes."},
	{Name: "step_stale_minutes", Type: mcptool.Integer, Description: "Default 60 (1–10080)."},
	{Name: "max_fidelity_review_cycles_per_phase", Type: mcptool.Integer, Description: "Default 3 (1–100)."},
	{Name: "stop_on_phase_completion", Type: mcptool.Boolean, Description: "Pause once (phase_complete) after each phase's gate passes; resume goes on to the next phase. Default false."},
	{Name: "auto_retry_fidelity_gate", Type: mcptool.Boolean, Description: "A failed gate gets address_fidelity_feedback steps (default true) instead of a pause."},
	{Name: "enforce_autonomy_write_lock", Type: mcptool.Boolean, Description: "Refuse task and lifecycle mutations outside the session (default true)."},
	{Name: "acknowledge_gate_review", Type: mcptool.Boolean, Description: "session resume: acknowledge a manual gate review."},
	idParam("acknowledged_gate_attempt_id", "session resume: the gate attempt acknowledged."),
	{Name: "reason_code", Type: mcptool.String, Enum: autonomy.ReasonCodes, Description: "session end/reset, gate-waiver: why."},
	{Name: "reason_detail", Type: mcptool.String, MaxLength: 2000, Description: "Free-text detail of reason_code."},
	{Name: "last_step_result", Type: mcptool.Object, Description: "session-step next: the report of the last issued step {step_id, step_type, outcome, task_id, phase_id, gate_attempt_id, step_proof, verification_receipt, note, files_touched}."},
	intParam("context_usage_pct", 0, 100, "The caller's context window usage."),
	{Name: "estimated_tokens_used", Type: mcptool.Integer, Description: "The caller's token usage (≥ 0)."},
	{Name: "heartbeat", Type: mcptool.Boolean, Description: "session-step next: also record a heartbeat."},
	idParam("step_id", "The issued step's id."),
	{Name: "step_type", Type: mcptool.String, Enum: autonomy.StepTypes, Description: "The issued step's type."},
	{Name: "outcome", Type: mcptool.String, Enum: autonomy.Outcomes, Description: "The step's outcome (default success)."},
	idParam("phase_id", "Phase id (gate steps, gate-waiver)."),
	idParam("gate_attempt_id", "run_fidelity_gate: the gate attempt of the evidence."),
	{Name: "step_proof", Type: mcptool.String, MaxLength: 64, Pattern: `^[0-9a-f]{64}$`, Description: "The issued step's one-time proof."},
	{Name: "verification_receipt", Type: mcptool.Object, Description: "execute_verification: {command_hash: sha256 of the command, exit_code, output_digest: sha256 of the output, issued_at, step_id}."},
	{Name: "files_touched", Type: mcptool.Array, Items: mcptool.String, MaxItems: 500, Description: "Files the step changed (journaled)."},
}

// lockBypassParams are the write-lock bypass parameters of the task and
// lifecycle mutations (lockArgs).
var lockBypassParams = []mcptool.Param{
	{Name: "bypass_autonomy_lock", Type: mcptool.Boolean, Description: "Bypass an autonomy session's write lock (needs bypass_reason and a server started with --allow-lock-bypass; audited)."},
	{Name: "bypass_reason", Type: mcptool.String, MaxLength: 2000, Description: "Why the write lock is bypassed."},
}

// lockArgs are the names of lockBypassParams.
var lockArgs = []string{"bypass_autonomy_lock", "bypass_reason"}

// lockedWriteArgs are the typed arguments every task and lifecycle
// mutation shares: writeArgs and the write-lock bypass (checkWriteLock
// reads them).
type lockedWriteArgs struct {
	writeArgs
	BypassAutonomyLock bool   `arg:"bypass_autonomy_lock"`
	BypassReason       string `arg:"bypass_reason"`
}

// stepReportParams are the fields of a report given at the top level
// (session-step report, or next without last_step_result).
var stepReportParams = []string{"step_id", "step_type", "outcome", "task_id", "phase_id", "gate_attempt_id", "step_proof", "verification_receipt", "note", "files_touched"}

// The session actions' typed arguments (mcptool.Typed).
type (
	sessionArgs struct {
		Command                         string `arg:"command,required"`
		SpecID                          string `arg:"spec_id"`
		SessionID                       string `arg:"session_id"`
		IdempotencyKey                  string `arg:"idempotency_key"`
		Force                           bool   `arg:"force"`
		GatePolicy                      string `arg:"gate_policy"`
		MaxTasksPerSession              int    `arg:"max_tasks_per_session"`
		MaxConsecutiveErrors            int    `arg:"max_consecutive_errors"`
		ContextThresholdPct             int    `arg:"context_threshold_pct"`
		HeartbeatStaleMinutes           int    `arg:"heartbeat_stale_minutes"`
		HeartbeatGraceMinutes           int    `arg:"heartbeat_grace_minutes"`
		StepStaleMinutes                int    `arg:"step_stale_minutes"`
		MaxFidelityReviewCyclesPerPhase int    `arg:"max_fidelity_review_cycles_per_phase"`
		StopOnPhaseCompletion           *bool  `arg:"stop_on_phase_completion"`
		AutoRetryFidelityGate           *bool  `arg:"auto_retry_fidelity_gate"`
		EnforceAutonomyWriteLock        *bool  `arg:"enforce_autonomy_write_lock"`
		Reason                          string `arg:"reason"`
		AcknowledgeGateReview           bool   `arg:"acknowledge_gate_review"`
		AcknowledgedGateAttemptID       string `arg:"acknowledged_gate_attempt_id"`
		ReasonCode                      string `arg:"reason_code"`
		ReasonDetail                    string `arg:"reason_detail"`
		pageArgs
	}
	sessionStepArgs struct {
		Command             string         `arg:"command,required"`
		SpecID              string         `arg:"spec_id"`
		SessionID           string         `arg:"session_id"`
		LastStepResult      map[string]any `arg:"last_step_result"`
		ContextUsagePct     *int           `arg:"context_usage_pct"`
		EstimatedTokensUsed *int           `arg:"estimated_tokens_used"`
		Heartbeat           bool           `arg:"heartbeat"`
		StepID              *string        `arg:"step_id"`
		StepType            string         `arg:"step_type"`
		Outcome             string         `arg:"outcome"`
		TaskID              string         `arg:"task_id"`
		PhaseID             string         `arg:"phase_id"`
		GateAttemptID       string         `arg:"gate_attempt_id"`
		StepProof           *string        `arg:"step_proof"`
		VerificationReceipt map[string]any `arg:"verification_receipt"`
		Note                string         `arg:"note"`
		FilesTouched        []string       `arg:"files_touched"`
	}
	sessionEventsArgs struct {
		specArgs
		SessionID string `arg:"session_id"`
		pageArgs
	}
	gateWaiverArgs struct {
		specArgs
		PhaseID      string `arg:"phase_id,required"`
		ReasonCode   string `arg:"reason_code,required"`
		SessionID    string `arg:"session_id"`
		ReasonDetail string `arg:"reason_detail"`
	}
	fidelityGateArgs struct {
		specArgs
		SessionID string `arg:"session_id,required"`
		PhaseID   string `arg:"phase_id,required"`
		StepID    string `arg:"step_id,required"`
	}
)

// autonomyTaskActions declares the session actions.
func autonomyTaskActions(d *Deps) []mcptool.Action {
	sessionOpt := []string{"spec_id", "session_id", "idempotency_key", "force", "gate_policy", "max_tasks_per_session", "max_consecutive_errors",
		"context_threshold_pct", "heartbeat_stale_minutes", "heartbeat_grace_minutes", "step_stale_minutes", "max_fidelity_review_cycles_per_phase",
		"stop_on_phase_completion", "auto_retry_fidelity_gate", "enforce_autonomy_write_lock", "reason", "acknowledge_gate_review",
		"acknowledged_gate_attempt_id", "reason_code", "reason_detail", "limit", "cursor"}
	stepOpt := append([]string{"spec_id", "session_id", "last_step_result", "context_usage_pct", "estimated_tokens_used", "heartbeat"}, stepReportParams...)
	return []mcptool.Action{
		{Name: "session", Summary: "Autonomy session of a spec (foundry v0.16): command start|status|pause|resume|rebase|end|list|reset.",
			Required: []string{"command"}, Optional: sessionOpt, SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast,
			Answer: SessionAnswer{}, Typed: mcptool.Typed(d.taskSession)},
		{Name: "session-step", Summary: "The session's steps: command next (report the last step, get the next), report, replay, heartbeat.",
			Required: []string{"command"}, Optional: stepOpt, SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast,
			Answer: SessionStepAnswer{}, Typed: mcptool.Typed(d.taskSessionStep)},
		{Name: "session-events", Summary: "The session's audit events, hash-chained, oldest first (paged; the cursor is bound to the session).",
			Required: []string{"spec_id"}, Optional: []string{"session_id", "cursor", "limit"}, SideEffects: mcptool.EffectRead, Idempotent: true,
			Latency: mcptool.LatencyFast, Answer: SessionEventsAnswer{}, Typed: mcptool.Typed(d.taskSessionEvents)},
		{Name: "gate-waiver", Summary: "Waives a phase's gate (maintainer; off unless the server runs with --allow-gate-waiver).",
			Required: []string{"spec_id", "phase_id", "reason_code"}, Optional: []string{"session_id", "reason_detail"}, SideEffects: mcptool.EffectWrite,
			Latency: mcptool.LatencyFast, Answer: GateWaiverAnswer{}, Typed: mcptool.Typed(d.taskGateWaiver)},
	}
}

// SessionAnswer is task session's answer: the session (start, status,
// pause, resume, rebase, end), the deleted session (reset), or the
// sessions (list).
type SessionAnswer struct {
	*autonomy.SessionView
	Reused    *bool            `json:"reused,omitempty"`  // start: an idempotency_key match returned the active session
	Deleted   bool             `json:"deleted,omitempty"` // reset
	Sessions  []SessionSummary `json:"sessions,omitempty"`
	Count     *int             `json:"count,omitempty"`
	NextCalls []core.NextCall  `json:"next_calls,omitempty"` // what to call next (the session's steps)
}

// SessionSummary is one session of task session list.
type SessionSummary struct {
	SessionID       string `json:"session_id"`
	SpecID          string `json:"spec_id"`
	Status          string `json:"status"`
	EffectiveStatus string `json:"effective_status,omitempty"`
	PauseReason     string `json:"pause_reason,omitempty"`
	ActivePhaseID   string `json:"active_phase_id,omitempty"`
	TasksCompleted  int    `json:"tasks_completed"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
}

// StepInstruction is one call of an issued step's instructions.
type StepInstruction struct {
	Tool        string `json:"tool"`
	Action      string `json:"action"`
	Description string `json:"description"`
}

// RecommendedAction is a supervisor's next move on a non-success loop
// signal (foundry's recommended_actions).
type RecommendedAction struct {
	Action      string `json:"action"`
	Description string `json:"description"`
	Command     string `json:"command,omitempty"`
}

// SessionStepAnswer is task session-step's answer (foundry's
// SessionStepResponseData), with each step's instructions.
type SessionStepAnswer struct {
	autonomy.StepAnswer
	Instructions       []StepInstruction   `json:"instructions,omitempty"`
	RecommendedActions []RecommendedAction `json:"recommended_actions,omitempty"`
	// heartbeat
	LastHeartbeatAt string `json:"last_heartbeat_at,omitempty"`
	ContextUsagePct *int   `json:"context_usage_pct,omitempty"`
	EffectiveStatus string `json:"effective_status,omitempty"`
}

// SessionEvent is one audit event with its chain link.
type SessionEvent struct {
	Sequence  int64          `json:"sequence"`
	Timestamp string         `json:"timestamp"`
	EventType string         `json:"event_type"`
	Action    string         `json:"action"`
	Actor     string         `json:"actor,omitempty"` // who started the session or made an override (gate waiver, bypass, end, reset): a holder identity
	SessionID string         `json:"session_id"`
	StepID    string         `json:"step_id,omitempty"`
	PhaseID   string         `json:"phase_id,omitempty"`
	TaskID    string         `json:"task_id,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Audit     EventAudit     `json:"audit"`
}

// EventAudit is an event's place in the hash chain.
type EventAudit struct {
	Sequence  int64  `json:"sequence"`
	PrevHash  string `json:"prev_hash"`
	EventHash string `json:"event_hash"`
}

// SessionEventsAnswer is task session-events' answer.
type SessionEventsAnswer struct {
	SpecID    string         `json:"spec_id"`
	SessionID *string        `json:"session_id"`
	Events    []SessionEvent `json:"events"`
	Count     int            `json:"count"`
}

// GateWaiverAnswer is task gate-waiver's answer.
type GateWaiverAnswer struct {
	SessionID string               `json:"session_id"`
	SpecID    string               `json:"spec_id"`
	PhaseID   string               `json:"phase_id"`
	Gate      *autonomy.GateRecord `json:"gate"`
	Status    string               `json:"status"`
}

// FidelityGateAnswer is review fidelity-gate's answer.
type FidelityGateAnswer = autonomy.GateAnswer

// autonomyTx runs fn over the call's spec and its autonomy records in one
// store transaction (a write one unless read). A failure of fn keeps
// nothing; refusal, when fn sets it, is returned after the commit.
func (d *Deps) autonomyTx(ctx context.Context, r *mcptool.Request, specID, sessionID string, read bool, fn func(sp *specs.Spec, j specs.JournalWriter, rec autonomy.Records) (*core.Error, error)) error {
	var refusal *core.Error
	var err error
	if read {
		err = d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, j specs.JournalReader) error {
			var ferr error
			refusal, ferr = fn(sp, nil, j.Records(autonomy.Space))
			return ferr
		})
	} else {
		o := d.writeOptionsOf(r, writeArgs{}, r.Call.Action)
		_, err = d.Specs.MutateSpec(ctx, specID, o, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = d.clock()
			var ferr error
			refusal, ferr = fn(sp, j, j.Records(autonomy.Space))
			return ferr
		})
	}
	if err != nil {
		return autonomyError(err, specID, sessionID)
	}
	if refusal != nil {
		return autonomyError(refusal, specID, sessionID)
	}
	return nil
}

// commandOf reads and checks the command argument.
func commandOf(c string, allowed []string) (string, error) {
	if slices.Contains(allowed, c) {
		return c, nil
	}
	return "", core.FieldError(errcode.InvalidFormat, fmt.Sprintf("command must be one of %s.", strings.Join(allowed, ", ")),
		core.FieldDetail{Field: "command", Received: c, Allowed: allowed}).
		WithNext(sessionListCall(), nil)
}

func needSpec(specID string) error {
	if specID != "" {
		return nil
	}
	return core.FieldError(errcode.MissingRequired, "spec_id is required for this command.", core.FieldDetail{Field: "spec_id"}).
		WithNext(sessionListCall(), nil)
}

// taskSession is task(action="session", command=…): list reads every
// session; the other commands need spec_id and run in one transaction
// (status a read one) — start (startSession) or a command on the session
// the call names (sessionCommand).
func (d *Deps) taskSession(ctx context.Context, r *mcptool.Request, a sessionArgs) mcptool.Result {
	cmd, err := commandOf(a.Command, sessionCommands)
	if err != nil {
		return mcptool.Fail(err)
	}
	if cmd == "list" {
		return d.sessionList(ctx, r, a)
	}
	if err := needSpec(a.SpecID); err != nil {
		return mcptool.Fail(err)
	}
	now := d.clock()()
	var out SessionAnswer
	err = d.autonomyTx(ctx, r, a.SpecID, a.SessionID, cmd == "status", func(sp *specs.Spec, j specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		var err error
		if cmd == "start" {
			out, err = startSession(ctx, r, sp, rec, a, now)
		} else {
			out, err = sessionCommand(ctx, r, sp, rec, cmd, a, now)
		}
		return nil, err
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(out)
}

// startSession starts a session on sp (or returns the active one its
// idempotency_key names), owned by the caller's key; a start that would
// replace or reuse another key's session is refused (mayReplace). The
// answer's next call asks for the first step.
func startSession(ctx context.Context, r *mcptool.Request, sp *specs.Spec, rec autonomy.Records, a sessionArgs, now time.Time) (SessionAnswer, error) {
	if err := mayReplace(ctx, r, rec, a); err != nil {
		return SessionAnswer{}, err
	}
	in := autonomy.StartInput{IdempotencyKey: a.IdempotencyKey, Force: a.Force, GatePolicy: a.GatePolicy,
		StopOnPhaseCompletion: a.StopOnPhaseCompletion, AutoRetryFidelityGate: a.AutoRetryFidelityGate, EnforceWriteLock: a.EnforceAutonomyWriteLock,
		Limits: autonomy.Limits{MaxTasksPerSession: a.MaxTasksPerSession, MaxConsecutiveErrors: a.MaxConsecutiveErrors,
			ContextThresholdPct: a.ContextThresholdPct, HeartbeatStaleMinutes: a.HeartbeatStaleMinutes, HeartbeatGraceMinutes: a.HeartbeatGraceMinutes,
			StepStaleMinutes: a.StepStaleMinutes, MaxFidelityReviewCyclesPerPhase: a.MaxFidelityReviewCyclesPerPhase},
		StartedBy: r.Session.Holder, OwnerKeyID: r.Session.KeyID}
	s, reused, err := autonomy.Start(sp, rec, in, now)
	if err != nil {
		return SessionAnswer{}, err
	}
	v := autonomy.View(sp, s, now)
	return SessionAnswer{SessionView: &v, Reused: &reused, NextCalls: []core.NextCall{sessionStepCall("next", s.SpecID, true)}}, nil
}

// sessionCommand runs cmd (status, pause, resume, rebase, end, reset) on
// the session the call names (every command but status drives it:
// resolveDriven) and answers its view: the deleted session for reset,
// with the rebase result for rebase, and the next step's call while the
// session runs.
func sessionCommand(ctx context.Context, r *mcptool.Request, sp *specs.Spec, rec autonomy.Records, cmd string, a sessionArgs, now time.Time) (SessionAnswer, error) {
	s, err := resolveDriven(ctx, r, rec, a.SessionID, cmd != "status")
	if err != nil {
		return SessionAnswer{}, err
	}
	rebase, err := applySessionCommand(sp, rec, s, cmd, a, r.Session.Holder, now)
	if err != nil {
		return SessionAnswer{}, err
	}
	v := autonomy.View(sp, s, now)
	if cmd == "reset" {
		return SessionAnswer{SessionView: &v, Deleted: true}, nil
	}
	v.RebaseResult = rebase
	out := SessionAnswer{SessionView: &v}
	if s.Status == autonomy.StatusRunning {
		out.NextCalls = []core.NextCall{sessionStepCall("next", s.SpecID, true)}
	}
	return out, nil
}

// applySessionCommand changes s as cmd says (status changes nothing) by
// holder's call; rebase returns its result.
func applySessionCommand(sp *specs.Spec, rec autonomy.Records, s *autonomy.Session, cmd string, a sessionArgs, holder string, now time.Time) (*autonomy.RebaseResult, error) {
	switch cmd {
	case "pause":
		return nil, autonomy.Pause(rec, s, a.Reason, now)
	case "resume":
		return nil, autonomy.Resume(sp, rec, s, autonomy.ResumeInput{AcknowledgeGateReview: a.AcknowledgeGateReview,
			AcknowledgedGateAttemptID: a.AcknowledgedGateAttemptID, Force: a.Force}, now)
	case "rebase":
		res, err := autonomy.Rebase(sp, rec, s, a.Force, now)
		return &res, err
	case "end":
		return nil, autonomy.End(rec, s, a.ReasonCode, a.ReasonDetail, holder, now)
	case "reset":
		return nil, autonomy.Reset(rec, s, a.ReasonCode, a.ReasonDetail, holder, now)
	}
	return nil, nil
}

// sessionList lists the sessions of spec_id, or of every spec, newest
// first (paged by offset).
func (d *Deps) sessionList(ctx context.Context, r *mcptool.Request, a sessionArgs) mcptool.Result {
	specID := a.SpecID
	restart := toTaskSession.Args(sessionArgs{Command: "list", SpecID: specID})
	page, err := mcptool.OpenPage(r, "task", "session-list", specID, core.PageTasks, restart)
	if err != nil {
		return mcptool.Fail(err)
	}
	ids := []string{specID}
	if specID == "" {
		if ids, err = d.Specs.SpecIDs(ctx); err != nil {
			return mcptool.Fail(err)
		}
	}
	now := d.clock()()
	all := []SessionSummary{}
	for _, id := range ids {
		var of []SessionSummary
		err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
			of = nil // fn may run more than once (specs.Repo)
			ss, err := autonomy.Sessions(j.Records(autonomy.Space))
			for _, s := range ss {
				v := autonomy.View(nil, s, now)
				of = append(of, SessionSummary{SessionID: s.ID, SpecID: s.SpecID, Status: s.Status, EffectiveStatus: v.EffectiveStatus, PauseReason: s.PauseReason,
					ActivePhaseID: s.ActivePhaseID, TasksCompleted: s.Counters.TasksCompleted, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt})
			}
			return err
		})
		if err != nil {
			return mcptool.Fail(autonomyError(err, specID, ""))
		}
		all = append(all, of...)
	}
	slices.SortStableFunc(all, func(a, b SessionSummary) int {
		return strings.Compare(b.CreatedAt+b.SessionID, a.CreatedAt+a.SessionID)
	})
	start := 0
	if page.After != "" {
		start, _ = strconv.Atoi(page.After)
	}
	start = min(start, len(all))
	end := min(start+page.Limit, len(all))
	items := all[start:end]
	n := len(items)
	next := page.Cursor(strconv.Itoa(end), end < len(all))
	return mcptool.OK(SessionAnswer{Sessions: items, Count: &n}, page.Meta(next))
}

// stepResult binds a report: last_step_result, else the top-level fields.
func stepResult(r *mcptool.Request, a sessionStepArgs) (*autonomy.StepResult, error) {
	raw := a.LastStepResult
	if raw == nil {
		if a.StepID == nil && a.StepProof == nil {
			return nil, nil
		}
		raw = map[string]any{}
		for _, k := range stepReportParams {
			if v, ok := r.Args[k]; ok {
				raw[k] = v
			}
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, core.Internal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var res autonomy.StepResult
	if err := dec.Decode(&res); err != nil {
		return nil, core.FieldError(errcode.Validation, "Invalid last_step_result: "+err.Error()+".",
			core.FieldDetail{Field: "last_step_result", Allowed: stepReportParams}).
			WithNext(sessionStepCall("replay", a.SpecID, false), nil)
	}
	return &res, nil
}

// taskSessionStep is task(action="session-step", command=…): replay,
// heartbeat, or next/report (stepNext); the answer carries the issued
// step's instructions and, on a non-success loop signal, a supervisor's
// recommended actions.
func (d *Deps) taskSessionStep(ctx context.Context, r *mcptool.Request, a sessionStepArgs) mcptool.Result {
	cmd, err := commandOf(a.Command, stepCommands)
	if err != nil {
		return mcptool.Fail(err)
	}
	if err := needSpec(a.SpecID); err != nil {
		return mcptool.Fail(err)
	}
	now := d.clock()()
	var out SessionStepAnswer
	switch cmd {
	case "replay":
		out, err = d.stepReplay(ctx, r, a)
	case "heartbeat":
		out, err = d.stepHeartbeat(ctx, r, a, now)
	default: // next, report
		out, err = d.stepNext(ctx, r, a, cmd, now)
	}
	if err != nil {
		return mcptool.Fail(err)
	}
	out.Instructions = instructions(out.NextStep, out.SpecID, out.SessionID)
	out.RecommendedActions = recommendedActions(out.LoopSignal, out.PauseReason, "")
	return mcptool.OK(out)
}

// stepReplay is session-step replay: the last issued step again, to a
// caller who may drive the session (a read transaction).
func (d *Deps) stepReplay(ctx context.Context, r *mcptool.Request, a sessionStepArgs) (SessionStepAnswer, error) {
	var out SessionStepAnswer
	err := d.autonomyTx(ctx, r, a.SpecID, a.SessionID, true, func(_ *specs.Spec, _ specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		if err := mayDriveNamed(ctx, r, rec, a.SessionID); err != nil {
			return nil, err
		}
		ans, err := autonomy.Replay(rec, a.SessionID)
		out = SessionStepAnswer{StepAnswer: ans}
		return nil, err
	})
	return out, err
}

// stepHeartbeat is session-step heartbeat: records the caller's context
// usage on the session it drives and answers the session's state.
func (d *Deps) stepHeartbeat(ctx context.Context, r *mcptool.Request, a sessionStepArgs, now time.Time) (SessionStepAnswer, error) {
	var out SessionStepAnswer
	err := d.autonomyTx(ctx, r, a.SpecID, a.SessionID, false, func(sp *specs.Spec, _ specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		s, err := resolveDriven(ctx, r, rec, a.SessionID, true)
		if err != nil {
			return nil, err
		}
		if err := autonomy.Heartbeat(rec, s, a.ContextUsagePct, a.EstimatedTokensUsed, now); err != nil {
			return nil, err
		}
		v := autonomy.View(sp, s, now)
		pct := s.Context.ContextUsagePct
		out = SessionStepAnswer{StepAnswer: autonomy.StepAnswer{SessionID: s.ID, SpecID: s.SpecID, Status: s.Status, PauseReason: s.PauseReason, StateVersion: s.StateVersion,
			LoopSignal: v.SessionSignal}, LastHeartbeatAt: s.Context.LastHeartbeatAt, ContextUsagePct: &pct, EffectiveStatus: v.EffectiveStatus}
		return nil, nil
	})
	return out, err
}

// stepNext is session-step next and report: binds the last step's report
// (stepResult; report refuses none, MISSING_REQUIRED on step_id) and
// issues the next step; a refusal autonomy.Next records is returned after
// the commit.
func (d *Deps) stepNext(ctx context.Context, r *mcptool.Request, a sessionStepArgs, cmd string, now time.Time) (SessionStepAnswer, error) {
	var out SessionStepAnswer
	res, err := stepResult(r, a)
	if err != nil {
		return out, err
	}
	if cmd == "report" && res == nil {
		return out, core.FieldError(errcode.MissingRequired, "session-step report needs the step's report (step_id, step_type, outcome, step_proof, …).",
			core.FieldDetail{Field: "step_id"}).WithNext(sessionStepCall("replay", a.SpecID, false), nil)
	}
	err = d.autonomyTx(ctx, r, a.SpecID, a.SessionID, false, func(sp *specs.Spec, j specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		if err := mayDriveNamed(ctx, r, rec, a.SessionID); err != nil {
			return nil, err
		}
		o, err := autonomy.Next(sp, j, rec, autonomy.NextInput{SessionID: a.SessionID, Result: res, ContextUsagePct: a.ContextUsagePct, Heartbeat: a.Heartbeat}, now)
		out = SessionStepAnswer{StepAnswer: o.Answer}
		return o.Refusal, err
	})
	return out, err
}

// instructions are the calls that carry out an issued step.
func instructions(st *autonomy.NextStep, specID, sessionID string) []StepInstruction {
	if st == nil {
		return nil
	}
	report := StepInstruction{"task", "session-step", fmt.Sprintf("Report the step (command=\"report\" or next with last_step_result: step_id=%s, step_type=%s, step_proof) and get the next one.", st.StepID, st.Type)}
	switch st.Type {
	case autonomy.StepImplementTask:
		return []StepInstruction{
			{"task", "prepare", fmt.Sprintf("Load task %s's context and acceptance criteria (spec_id=%s, task_id=%s).", st.TaskID, specID, st.TaskID)},
			{"task", "info", "Read the task; do the work in the workspace."},
			{"task", "session-step", fmt.Sprintf("Report outcome success/failure/skipped with task_id=%s, step_proof, note and files_touched: the session completes the task (the write lock refuses task complete outside the session).", st.TaskID)},
		}
	case autonomy.StepExecuteVerification:
		return []StepInstruction{
			{"task", "info", fmt.Sprintf("Read verify node %s (spec_id=%s).", st.TaskID, specID)},
			{"agent", "run-command", fmt.Sprintf("Run the verify node's command exactly: %q; keep its exit code and combined output.", st.Command)},
			{"task", "session-step", fmt.Sprintf("Report with verification_receipt {command_hash: sha256(command), exit_code, output_digest: sha256(output), issued_at: now (RFC 3339), step_id: %s}; outcome success needs exit code 0.", st.StepID)},
		}
	case autonomy.StepRunFidelityGate:
		return []StepInstruction{
			{"review", "fidelity-gate", fmt.Sprintf("Compute phase %s's gate verdict from evidence (spec_id=%s, session_id=%s, phase_id=%s, step_id=%s).", st.PhaseID, specID, sessionID, st.PhaseID, st.StepID)},
			{"task", "session-step", fmt.Sprintf("Report step_type=run_fidelity_gate with phase_id=%s, gate_attempt_id=%s and step_proof.", st.PhaseID, st.GateAttemptID)},
		}
	case autonomy.StepAddressFidelityFeedback:
		return []StepInstruction{
			{"review", "fidelity-gate", "Read the gate's findings (the last verdict's findings name each unmet check)."},
			{"task", "prepare", "Load the context of the tasks the findings name and fix them."},
			report,
		}
	}
	return nil
}

// taskCommand renders a session call of the task tool as a supervisor
// reads it in recommended_actions.
func taskCommand(action, command string) string {
	return fmt.Sprintf("task(action=%q, command=%q)", action, command)
}

// pausedActions are the recommended actions of a session paused for a
// reason (signal paused_needs_attention; foundry's table); another reason
// gets pausedTriage.
var pausedActions = map[string][]RecommendedAction{
	autonomy.PauseContextLimit: {{"resume_in_fresh_context", "Open a fresh context window, then resume the session.", taskCommand("session", "resume")}},
	autonomy.PauseErrorThreshold: {{"inspect_recent_failures", "Inspect recent failed steps before retrying execution.", taskCommand("session-step", "replay")},
		{"reset_session_if_needed", "End the session only after root-cause triage.", taskCommand("session", "end")}},
	autonomy.PauseBlocked:            {{"resolve_task_blockers", "Unblock dependency chains before resuming automation.", `task(action="list-blocked")`}},
	autonomy.PauseGateFailed:         {{"review_gate_findings", "Review the gate's findings and apply remediation before retry.", `review(action="fidelity-gate")`}},
	autonomy.PauseGateReviewRequired: {{"acknowledge_manual_gate_review", "A maintainer must acknowledge manual gate review before resume.", taskCommand("session", "resume")}},
	autonomy.PauseFidelityCycleLimit: {{"escalate_fidelity_cycle_limit", "Manual intervention is required after repeated gate retries.", `task(action="gate-waiver")`}},
	autonomy.PauseHeartbeatStale:     {{"refresh_heartbeat_or_resume", "Refresh heartbeat or resume the session once the caller is healthy.", taskCommand("session-step", "heartbeat")}},
	autonomy.PauseStepStale:          {{"replay_or_resume_stale_step", "Resume the session for a fresh step.", taskCommand("session", "resume")}},
	autonomy.PauseTaskLimit:          {{"start_followup_session", "Start a new session to continue once task limit is reached.", taskCommand("session", "start")}},
}

// pausedTriage is the recommended action of a pause reason pausedActions
// does not name.
var pausedTriage = []RecommendedAction{{"manual_triage", "Investigate pause cause and resume only after mitigation.", taskCommand("session", "status")}}

// blockedActions are the recommended actions of a runtime refusal by its
// error code (signal blocked_runtime); another code gets blockedTriage.
var blockedActions = map[string][]RecommendedAction{
	errcode.StepProofMissing: freshStepProof, errcode.StepProofMismatch: freshStepProof, errcode.StepProofConflict: freshStepProof,
	errcode.VerificationReceiptMissing: freshReceipt, errcode.VerificationReceiptInvalid: freshReceipt,
	errcode.GateIntegrityChecksum:   {{"request_fresh_gate_evidence", "Run the gate again for fresh evidence and submit it with exact step binding.", `review(action="fidelity-gate")`}},
	errcode.AutonomyWriteLockActive: {{"use_session_steps", "Report through the session's steps, or end the session first.", taskCommand("session", "status")}},
}

// freshStepProof and freshReceipt are blockedActions' moves for a step
// proof and a verification receipt the server refused.
var (
	freshStepProof = []RecommendedAction{{"request_fresh_step_proof", "Replay the issued step and resubmit with its exact server-issued step_proof.", taskCommand("session-step", "replay")}}
	freshReceipt   = []RecommendedAction{{"regenerate_verification_receipt", "Run the verify node's own command and submit its verification_receipt fields.", taskCommand("session-step", "replay")}}
)

// blockedTriage is the recommended action of a runtime refusal
// blockedActions does not name.
var blockedTriage = []RecommendedAction{{"resolve_runtime_blocker", "Resolve runtime policy or integrity blocker before retrying.", taskCommand("session", "status")}}

// failedActions are the recommended actions of a failed session.
var failedActions = []RecommendedAction{{"collect_failure_context", "Inspect failure details and recent session events before retry.", taskCommand("session", "status")},
	{"rebase_or_reset_session", "Rebase the session on the spec, or reset it after root-cause analysis.", taskCommand("session", "rebase")}}

// recommendedActions are a supervisor's moves for a non-success loop
// signal (foundry's table): by pause reason when paused, by error code
// when blocked at runtime; none for any other signal. The slice is the
// caller's own.
func recommendedActions(signal, pauseReason, code string) []RecommendedAction {
	var acts []RecommendedAction
	switch signal {
	case autonomy.SignalPausedNeedsAttention:
		acts = actionsFor(pausedActions, pauseReason, pausedTriage)
	case autonomy.SignalBlockedRuntime:
		acts = actionsFor(blockedActions, code, blockedTriage)
	case autonomy.SignalFailed:
		acts = failedActions
	}
	return slices.Clone(acts)
}

// actionsFor is table's actions for key, else fallback.
func actionsFor(table map[string][]RecommendedAction, key string, fallback []RecommendedAction) []RecommendedAction {
	if acts, ok := table[key]; ok {
		return acts
	}
	return fallback
}

// taskSessionEvents pages the session's audit events (the session the
// call names, else the active session, else the newest: eventsSession;
// none: an empty page).
func (d *Deps) taskSessionEvents(ctx context.Context, r *mcptool.Request, a sessionEventsArgs) mcptool.Result {
	var out SessionEventsAnswer
	var meta []core.MetaOption
	specID := a.SpecID
	err := d.autonomyTx(ctx, r, specID, a.SessionID, true, func(_ *specs.Spec, _ specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		out = SessionEventsAnswer{SpecID: specID, Events: []SessionEvent{}}
		sid, err := eventsSession(rec, a.SessionID)
		if err != nil {
			return nil, err
		}
		restart := toTaskSessionEvents.Args(sessionEventsArgs{specArgs: specOf(specID), SessionID: sid})
		page, err := mcptool.OpenPage(r, "task", "session-events", specID, core.PageJournal, restart, sid)
		if err != nil || sid == "" {
			return nil, err // no session: an empty page
		}
		out.SessionID = &sid
		after, _ := strconv.ParseInt(page.After, 10, 64)
		evs, more, err := autonomy.Events(rec, sid, after, page.Limit)
		if err != nil {
			return nil, err
		}
		out.Events = sessionEvents(evs)
		out.Count = len(out.Events)
		meta = []core.MetaOption{page.Meta(page.Cursor(lastSequence(evs), more))}
		return nil, nil
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(out, meta...)
}

// eventsSession is the id of the session whose events session-events
// pages: sid when it names a session (else its load error), else the
// spec's active session, else its newest, else "" (the spec has none).
func eventsSession(rec autonomy.Records, sid string) (string, error) {
	if sid != "" {
		_, err := autonomy.LoadSession(rec, sid)
		return sid, err
	}
	s, err := autonomy.ActiveSession(rec)
	if err != nil || s != nil {
		return idOfSession(s), err
	}
	all, err := autonomy.Sessions(rec)
	if err != nil || len(all) == 0 {
		return "", err
	}
	return all[0].ID, nil
}

// idOfSession is s's id, "" for no session.
func idOfSession(s *autonomy.Session) string {
	if s == nil {
		return ""
	}
	return s.ID
}

// sessionEvents are evs as session-events answers them, each with its
// chain link (never nil).
func sessionEvents(evs []autonomy.Event) []SessionEvent {
	out := make([]SessionEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, SessionEvent{Sequence: e.Sequence, Timestamp: e.Timestamp, EventType: e.EventType, Action: e.Action, Actor: e.Actor, SessionID: e.SessionID,
			StepID: e.StepID, PhaseID: e.PhaseID, TaskID: e.TaskID, Metadata: e.Metadata, Audit: EventAudit{e.Sequence, e.PrevHash, e.EventHash}})
	}
	return out
}

// lastSequence is the cursor position after evs: the last event's
// sequence, "" when there is none.
func lastSequence(evs []autonomy.Event) string {
	if len(evs) == 0 {
		return ""
	}
	return strconv.FormatInt(evs[len(evs)-1].Sequence, 10)
}

// taskGateWaiver is task(action="gate-waiver"): off unless enabled, and a
// write (a maintainer's: observers are refused before the handler).
func (d *Deps) taskGateWaiver(ctx context.Context, r *mcptool.Request, a gateWaiverArgs) mcptool.Result {
	if !d.AllowGateWaiver {
		return mcptool.Fail(core.NewError(errcode.GateWaiverDisabled, "Gate waivers are disabled on this server.",
			core.DetailsOf(settingDetail{Action: "gate-waiver", Setting: "--allow-gate-waiver"})))
	}
	now := d.clock()()
	var out GateWaiverAnswer
	err := d.autonomyTx(ctx, r, a.SpecID, a.SessionID, false, func(_ *specs.Spec, _ specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		s, err := autonomy.Resolve(rec, a.SessionID)
		if err != nil {
			return nil, err
		}
		g, err := autonomy.GateWaiver(rec, s, a.PhaseID, a.ReasonCode, a.ReasonDetail, "maintainer", r.Session.Holder, now)
		if err != nil {
			return nil, err
		}
		out = GateWaiverAnswer{SessionID: s.ID, SpecID: s.SpecID, PhaseID: a.PhaseID, Gate: g, Status: s.Status}
		return nil, nil
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(out)
}

// reviewFidelityGate is review(action="fidelity-gate").
func (d *Deps) reviewFidelityGate(ctx context.Context, r *mcptool.Request, a fidelityGateArgs) mcptool.Result {
	now := d.clock()()
	var out FidelityGateAnswer
	err := d.autonomyTx(ctx, r, a.SpecID, a.SessionID, false, func(sp *specs.Spec, _ specs.JournalWriter, rec autonomy.Records) (*core.Error, error) {
		if err := mayDriveNamed(ctx, r, rec, a.SessionID); err != nil {
			return nil, err
		}
		var err error
		out, err = autonomy.FidelityGate(sp, rec, a.SessionID, a.PhaseID, a.StepID, now)
		return nil, err
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(out)
}

// autonomyError names the next call of an autonomy refusal (every one
// runs as given; autonomyNextCall) and adds the loop signal and
// recommended actions a supervisor branches on; other errors, and a
// refusal that already names its call, go through withSpecNextCall.
func autonomyError(err error, specID, sessionID string) error {
	e := core.AsError(err)
	if e.NamesCall() {
		return withSpecNextCall(err, specID)
	}
	next := autonomyNextCall(e, specID)
	if next == nil {
		return withSpecNextCall(e, specID)
	}
	if sessionID != "" && e.Code != errcode.SessionNotFound && next.Args["session_id"] == nil && next.Args["command"] != "list" {
		next.Args["session_id"] = sessionID
	}
	e = e.WithNext(*next, e.Matches())
	if signal := autonomy.LoopSignal("", "", e.Code); signal != "" {
		if e.Extra == nil {
			e.Extra = map[string]any{}
		}
		e.Extra["loop_signal"] = signal
		e.Extra["recommended_actions"] = recommendedActions(signal, "", e.Code)
	}
	return e
}

// replayCodes are the refusals of a step report whose recovery is
// replaying the issued step.
var replayCodes = []string{errcode.StepResultRequired, errcode.StepMismatch, errcode.StepProofMissing, errcode.StepProofMismatch, errcode.StepProofConflict,
	errcode.VerificationReceiptMissing, errcode.VerificationReceiptInvalid, errcode.InvalidGateEvidence, errcode.GateIntegrityChecksum}

// autonomyNextCall is the call that recovers from autonomy refusal e on
// spec specID: replay the issued step (replayCodes), ask for the next one
// (NOT_FOUND), or a session command (sessionRecovery); nil when e's code
// has none.
func autonomyNextCall(e *core.Error, specID string) *core.NextCall {
	var c core.NextCall
	switch a, ok := sessionRecovery(e); {
	case ok:
		a.SpecID = specID
		c = toTaskSession.Call(a)
	case slices.Contains(replayCodes, e.Code):
		c = sessionStepCall("replay", specID, false)
	case e.Code == errcode.NotFound:
		c = sessionStepCall("next", specID, true)
	default:
		return nil
	}
	return &c
}

// sessionRecovery is the session command that recovers from autonomy
// refusal e, with what it needs from e's details; false when a session
// command does not.
func sessionRecovery(e *core.Error) (sessionArgs, bool) {
	switch e.Code {
	case errcode.SpecSessionExists, errcode.InvalidStateTransition, errcode.GateNotFound, errcode.GateAlreadyPassed,
		errcode.GateAlreadyWaived, errcode.AutonomyWriteLockActive:
		return sessionArgs{Command: "status", SessionID: detailString(e.Details, "existing_session_id", "session_id")}, true
	case errcode.NoActiveSession, errcode.SessionNotFound:
		return sessionArgs{Command: "list"}, true
	case errcode.SpecRebaseRequired:
		return sessionArgs{Command: "rebase", Force: e.Details["removed_completed_tasks"] != nil}, true
	case errcode.ManualGateAckRequired:
		return sessionArgs{Command: "resume", AcknowledgeGateReview: true, AcknowledgedGateAttemptID: detailString(e.Details, "gate_attempt_id")}, true
	case errcode.InvalidGateAck:
		return sessionArgs{Command: "resume", AcknowledgeGateReview: true, AcknowledgedGateAttemptID: detailString(e.Details, "expected")}, true
	}
	return sessionArgs{}, false
}

// detailString is the first of keys whose detail is a non-empty string,
// else "".
func detailString(details map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, _ := details[k].(string); v != "" {
			return v
		}
	}
	return ""
}

// legacySessionActions are foundry's removed session action names and
// their canonical calls (foundry v0.16 refuses them since 2026-05-16).
var legacySessionActions = map[string][2]string{
	"session-start": {"session", "start"}, "session-status": {"session", "status"}, "session-pause": {"session", "pause"},
	"session-resume": {"session", "resume"}, "session-rebase": {"session", "rebase"}, "session-end": {"session", "end"},
	"session-list": {"session", "list"}, "session-reset": {"session", "reset"}, "session-heartbeat": {"session-step", "heartbeat"},
	"session-step-next": {"session-step", "next"}, "session-step-report": {"session-step", "report"},
	"session-step-replay": {"session-step", "replay"}, "session-step-heartbeat": {"session-step", "heartbeat"},
}

// legacySession refuses a removed session action as foundry does
// (INVALID_FORMAT on field action naming the replacement); the next call
// lists the sessions, which runs with no argument (the canonical call is
// in details.replacement and the remediation).
func legacySession(action string) *core.Error {
	name := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(action)), "_", "-")
	c, ok := legacySessionActions[name]
	if !ok {
		return nil
	}
	repl := fmt.Sprintf("task(action=%q, command=%q)", c[0], c[1])
	replArgs := toTaskSession.Args(sessionArgs{Command: c[1]})
	if c[0] == toTaskSessionStep.Action {
		replArgs = toTaskSessionStep.Args(sessionStepArgs{Command: c[1]})
	}
	return core.NewErrorOf(errcode.InvalidFormat, fmt.Sprintf("Action '%s' was removed on 2026-05-16. Use %s instead.", name, repl),
		replacedDetail{core.FieldDetail{Field: "action", Received: action}, repl, replArgs}).
		WithRemediation("Call "+repl+" with the same parameters.").
		WithNext(sessionListCall(), nil)
}

// protectedByLock reports whether tool's action is a mutation an autonomy
// session's write lock refuses: every task mutation but the session's own
// actions, and every lifecycle move (foundry's protected sets, where an
// unknown task mutation is protected too).
func protectedByLock(tool, action string) bool {
	switch tool {
	case "task":
		return !slices.Contains(autonomyActions, action)
	case "lifecycle":
		return true
	case "authoring":
		// A rollback rewrites task statuses the session relies on.
		return action == "spec-rollback"
	}
	return false
}

// lockedAgainstReplace refuses replacing (spec import with overwrite) a
// spec an autonomy session locks: the import would rewrite its tasks and
// drop the session's records and audit (AUTONOMY_WRITE_LOCK_ACTIVE; no
// bypass).
func lockedAgainstReplace(j specs.JournalReader) error {
	s, err := autonomy.WriteLock(j.Records(autonomy.Space))
	if err != nil || s == nil {
		return err
	}
	return core.NewError(errcode.AutonomyWriteLockActive,
		fmt.Sprintf("Autonomy session %s holds spec %s's write lock: replacing the spec by import is refused. End the session first.", s.ID, s.SpecID),
		core.DetailsOf(writeLockDetail{SpecID: s.SpecID, SessionID: s.ID, SessionStatus: s.Status, Action: "spec import"}))
}

// checkWriteLock refuses a protected mutation of a spec an autonomy session
// locks (AUTONOMY_WRITE_LOCK_ACTIVE), inside the mutation's transaction so
// no session can start or end between the check and the write. A bypass
// needs bypass_autonomy_lock, a bypass_reason and a server started with
// --allow-lock-bypass (the call is a write, so the caller's role may
// write: a maintainer's); it is audited in the same transaction.
func (d *Deps) checkWriteLock(r *mcptool.Request, j specs.JournalReader) error {
	if !protectedByLock(r.Call.Tool, r.Call.Action) {
		return nil
	}
	rec := j.Records(autonomy.Space)
	s, err := autonomy.WriteLock(rec)
	if err != nil || s == nil {
		return err
	}
	if d.bypassGranted(r) {
		return autonomy.RecordBypass(rec, s, r.Call.Tool+" "+r.Call.Action, r.Args.String("bypass_reason"), r.Session.Holder, d.clock()())
	}
	return core.NewError(errcode.AutonomyWriteLockActive,
		fmt.Sprintf("Autonomy session %s holds spec %s's write lock: %s %s is refused. %s", s.ID, s.SpecID, r.Call.Tool, r.Call.Action, d.lockRefusedWhy(r)),
		core.DetailsOf(writeLockDetail{SpecID: s.SpecID, SessionID: s.ID, SessionStatus: s.Status, Action: r.Call.Tool + " " + r.Call.Action,
			BypassAllowed: &d.AllowLockBypass}))
}

// bypassGranted reports whether the call bypasses the write lock: it asks
// to (bypass_autonomy_lock) with a non-blank bypass_reason, the server
// allows bypasses (--allow-lock-bypass), and it is no dry run.
func (d *Deps) bypassGranted(r *mcptool.Request) bool {
	return r.Args.Bool("bypass_autonomy_lock") && d.AllowLockBypass && strings.TrimSpace(r.Args.String("bypass_reason")) != "" && !r.Args.Bool("dry_run")
}

// lockRefusedWhy is the last sentence of a write-lock refusal: how to go
// on without a bypass, or why the bypass asked for was not granted.
func (d *Deps) lockRefusedWhy(r *mcptool.Request) string {
	switch {
	case !r.Args.Bool("bypass_autonomy_lock"):
		return "Report through the session (task session-step), or end it first."
	case !d.AllowLockBypass:
		return "Bypass is disabled on this server (--allow-lock-bypass)."
	}
	return "A bypass needs a bypass_reason."
}
