// Package autonomy is the domain of autonomy sessions (README "Autonomous runs"): a durable
// session per spec that feeds an external agent one step at a time, checks
// each report (one-time step proofs, verification receipts, gate evidence),
// gates every phase with a verdict computed from evidence, pauses on clear
// conditions, locks the spec against side edits, and records every state
// change in a sha256 hash-chained audit ledger. The names (statuses, step
// types, pause reasons, loop signals, error codes, parameters and their
// defaults) are foundry-mcp v0.16's, so agents written for foundry's
// autonomy work unchanged.
//
// The package keeps no state of its own: every operation reads and writes a
// spec's autonomy records (Records) inside the same store transaction as the
// spec change it makes, so a session's step, its proof, the task it
// completes and the audit event that records it are stored together or not
// at all. It names no tools; the tool layer turns its facts into calls.
package autonomy

import (
	"encoding/json"
	"time"
)

// Session statuses.
const (
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusEnded     = "ended"
)

// Statuses lists the session statuses.
var Statuses = []string{StatusRunning, StatusPaused, StatusCompleted, StatusFailed, StatusEnded}

// Terminal reports whether status ends a session for good (completed and
// ended; a failed session may be resumed with force or rebased).
func Terminal(status string) bool { return status == StatusCompleted || status == StatusEnded }

// Pause reasons.
const (
	PauseUser               = "user"
	PauseContextLimit       = "context_limit"
	PauseErrorThreshold     = "error_threshold"
	PauseBlocked            = "blocked"
	PauseGateFailed         = "gate_failed"
	PauseGateReviewRequired = "gate_review_required"
	PauseTaskLimit          = "task_limit"
	PauseHeartbeatStale     = "heartbeat_stale"
	PauseStepStale          = "step_stale"
	PausePhaseComplete      = "phase_complete"
	PauseFidelityCycleLimit = "fidelity_cycle_limit"
)

// PauseReasons lists the pause reasons.
var PauseReasons = []string{PauseUser, PauseContextLimit, PauseErrorThreshold, PauseBlocked, PauseGateFailed,
	PauseGateReviewRequired, PauseTaskLimit, PauseHeartbeatStale, PauseStepStale, PausePhaseComplete, PauseFidelityCycleLimit}

// Failure reasons.
const (
	FailureSpecNotFound         = "spec_not_found"
	FailureSpecStructureChanged = "spec_structure_changed"
)

// Step types.
const (
	StepImplementTask           = "implement_task"
	StepExecuteVerification     = "execute_verification"
	StepRunFidelityGate         = "run_fidelity_gate"
	StepAddressFidelityFeedback = "address_fidelity_feedback"
	StepPause                   = "pause"
	StepCompleteSpec            = "complete_spec"
)

// StepTypes lists the step types.
var StepTypes = []string{StepImplementTask, StepExecuteVerification, StepRunFidelityGate, StepAddressFidelityFeedback, StepPause, StepCompleteSpec}

// Step outcomes.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
	OutcomeSkipped = "skipped"
)

// Outcomes lists the step outcomes.
var Outcomes = []string{OutcomeSuccess, OutcomeFailure, OutcomeSkipped}

// Gate policies.
const (
	GateStrict  = "strict"
	GateLenient = "lenient"
	GateManual  = "manual"
)

// GatePolicies lists the gate policies.
var GatePolicies = []string{GateStrict, GateLenient, GateManual}

// Gate verdicts.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	VerdictWarn = "warn"
)

// Phase gate statuses.
const (
	GatePending = "pending"
	GatePassed  = "passed"
	GateFailed  = "failed"
	GateWaived  = "waived"
)

// Loop signals: the normalized outcome a supervisor branches on.
const (
	SignalPhaseComplete        = "phase_complete"
	SignalSpecComplete         = "spec_complete"
	SignalPausedNeedsAttention = "paused_needs_attention"
	SignalFailed               = "failed"
	SignalBlockedRuntime       = "blocked_runtime"
)

// Override reason codes (gate waivers, end, reset).
var ReasonCodes = []string{"stuck_agent", "corrupt_state", "operator_override", "incident_response", "testing"}

// Audit event types.
const (
	EventStart        = "start"
	EventStepIssued   = "step_issued"
	EventStepConsumed = "step_consumed"
	EventPause        = "pause"
	EventResume       = "resume"
	EventBypass       = "bypass"
	EventRebase       = "rebase"
	EventReset        = "reset"
	EventEnd          = "end"
	EventGatePassed   = "gate_passed"
	EventGateFailed   = "gate_failed"
	EventGateWaived   = "gate_waived"
	EventSpecComplete = "spec_complete"
)

// Limits are a session's limits; zero fields take foundry's defaults
// (Defaults).
type Limits struct {
	MaxTasksPerSession              int `json:"max_tasks_per_session"`
	MaxConsecutiveErrors            int `json:"max_consecutive_errors"`
	ContextThresholdPct             int `json:"context_threshold_pct"`
	HeartbeatStaleMinutes           int `json:"heartbeat_stale_minutes"`
	HeartbeatGraceMinutes           int `json:"heartbeat_grace_minutes"`
	StepStaleMinutes                int `json:"step_stale_minutes"`
	MaxFidelityReviewCyclesPerPhase int `json:"max_fidelity_review_cycles_per_phase"`
}

// DefaultLimits are foundry v0.16's defaults: 100 tasks per session, 3
// consecutive errors, 85% context, heartbeat stale at 10 minutes with a 5
// minute grace, step stale at 60 minutes, 3 fidelity cycles per phase.
var DefaultLimits = Limits{MaxTasksPerSession: 100, MaxConsecutiveErrors: 3, ContextThresholdPct: 85,
	HeartbeatStaleMinutes: 10, HeartbeatGraceMinutes: 5, StepStaleMinutes: 60, MaxFidelityReviewCyclesPerPhase: 3}

// StopConditions are a session's stop conditions.
type StopConditions struct {
	StopOnPhaseCompletion bool `json:"stop_on_phase_completion"`
	AutoRetryFidelityGate bool `json:"auto_retry_fidelity_gate"`
}

// Counters are a session's counters.
type Counters struct {
	TasksCompleted                    int `json:"tasks_completed"`
	ConsecutiveErrors                 int `json:"consecutive_errors"`
	FidelityReviewCyclesInActivePhase int `json:"fidelity_review_cycles_in_active_phase"`
}

// Context is what the caller reports of its context window.
type Context struct {
	ContextUsagePct     int    `json:"context_usage_pct"`
	EstimatedTokensUsed *int   `json:"estimated_tokens_used,omitempty"`
	LastHeartbeatAt     string `json:"last_heartbeat_at,omitempty"`
}

// IssuedStep is the step last issued and not yet reported.
type IssuedStep struct {
	StepID        string `json:"step_id"`
	Type          string `json:"type"`
	TaskID        string `json:"task_id,omitempty"`
	PhaseID       string `json:"phase_id,omitempty"`
	GateAttemptID string `json:"gate_attempt_id,omitempty"`
	IssuedAt      string `json:"issued_at"`
	StepProof     string `json:"step_proof"`
}

// PendingReceipt is what an issued execute_verification step expects of
// its receipt.
type PendingReceipt struct {
	StepID              string `json:"step_id"`
	TaskID              string `json:"task_id"`
	ExpectedCommandHash string `json:"expected_command_hash"`
	IssuedAt            string `json:"issued_at"`
}

// Receipt is a verification receipt: sha256 of the command run and of its
// combined output, its exit code, when and for which step.
type Receipt struct {
	CommandHash  string `json:"command_hash"`
	ExitCode     int    `json:"exit_code"`
	OutputDigest string `json:"output_digest"`
	IssuedAt     string `json:"issued_at"`
	StepID       string `json:"step_id"`
}

// GateEvidence is the verdict review(fidelity-gate) computed for a gate
// step, with its HMAC integrity checksum.
type GateEvidence struct {
	GateAttemptID     string `json:"gate_attempt_id"`
	StepID            string `json:"step_id"`
	PhaseID           string `json:"phase_id"`
	Verdict           string `json:"verdict"`
	IssuedAt          string `json:"issued_at"`
	IntegrityChecksum string `json:"integrity_checksum"`
}

// ManualGateAck is a manual gate waiting for a human acknowledgement.
type ManualGateAck struct {
	GateAttemptID string `json:"gate_attempt_id"`
	PhaseID       string `json:"phase_id"`
	Verdict       string `json:"verdict"`
	IssuedAt      string `json:"issued_at"`
}

// GateRecord is a phase gate's record.
type GateRecord struct {
	Required           bool   `json:"required"`
	Status             string `json:"status"`
	Verdict            string `json:"verdict,omitempty"`
	GateAttemptID      string `json:"gate_attempt_id,omitempty"`
	EvaluatedAt        string `json:"evaluated_at,omitempty"`
	AcknowledgedAt     string `json:"acknowledged_at,omitempty"`
	WaiverReasonCode   string `json:"waiver_reason_code,omitempty"`
	WaiverReasonDetail string `json:"waiver_reason_detail,omitempty"`
	WaivedAt           string `json:"waived_at,omitempty"`
	WaivedByRole       string `json:"waived_by_role,omitempty"`
	WaivedBy           string `json:"waived_by,omitempty"` // the waiving caller's holder identity
}

// Session is one autonomy session, stored as JSON in its spec's records.
type Session struct {
	ID                    string                 `json:"id"`
	SpecID                string                 `json:"spec_id"`
	IdempotencyKey        string                 `json:"idempotency_key,omitempty"`
	StartedBy             string                 `json:"started_by,omitempty"`   // the starting caller's holder identity
	OwnerKeyID            string                 `json:"owner_key_id,omitempty"` // the starting caller's API key id: the key that drives the session
	SpecStructureHash     string                 `json:"spec_structure_hash"`
	Status                string                 `json:"status"`
	CreatedAt             string                 `json:"created_at"`
	UpdatedAt             string                 `json:"updated_at"`
	PausedAt              string                 `json:"paused_at,omitempty"`
	PauseReason           string                 `json:"pause_reason,omitempty"`
	FailureReason         string                 `json:"failure_reason,omitempty"`
	ActivePhaseID         string                 `json:"active_phase_id,omitempty"`
	LastTaskID            string                 `json:"last_task_id,omitempty"`
	LastStepIssued        *IssuedStep            `json:"last_step_issued,omitempty"`
	LastIssuedResponse    json.RawMessage        `json:"last_issued_response,omitempty"`
	PendingGateEvidence   *GateEvidence          `json:"pending_gate_evidence,omitempty"`
	PendingManualGateAck  *ManualGateAck         `json:"pending_manual_gate_ack,omitempty"`
	PendingReceipt        *PendingReceipt        `json:"pending_verification_receipt,omitempty"`
	Receipts              map[string]Receipt     `json:"verification_receipts,omitempty"` // verify node id → its latest receipt
	Counters              Counters               `json:"counters"`
	Limits                Limits                 `json:"limits"`
	StopConditions        StopConditions         `json:"stop_conditions"`
	WriteLockEnforced     bool                   `json:"write_lock_enforced"`
	GatePolicy            string                 `json:"gate_policy"`
	Context               Context                `json:"context"`
	PhaseGates            map[string]*GateRecord `json:"phase_gates"`
	RequiredPhaseGates    map[string][]string    `json:"required_phase_gates"`
	CompletedTaskIDs      []string               `json:"completed_task_ids"`
	PhaseCompleteSignaled []string               `json:"phase_complete_signaled,omitempty"` // phases whose phase_complete pause was issued (never twice)
	StateVersion          int                    `json:"state_version"`

	nextStep *NextStep // the step issued by this call, for its answer
}

// NextStep is an issued step as the caller sees it (instructions are the
// tool layer's).
type NextStep struct {
	StepID        string `json:"step_id"`
	Type          string `json:"type"`
	TaskID        string `json:"task_id,omitempty"`
	PhaseID       string `json:"phase_id,omitempty"`
	TaskTitle     string `json:"task_title,omitempty"`
	GateAttemptID string `json:"gate_attempt_id,omitempty"`
	Command       string `json:"verification_command,omitempty"` // execute_verification: the verify node's command, the one the receipt hashes
	Reason        string `json:"reason,omitempty"`
	Message       string `json:"message"`
	StepProof     string `json:"step_proof"`
}

// StepAnswer is the answer of session-step next, report and replay
// (foundry's SessionStepResponseData).
type StepAnswer struct {
	SessionID            string    `json:"session_id"`
	SpecID               string    `json:"spec_id"`
	Status               string    `json:"status"`
	PauseReason          string    `json:"pause_reason,omitempty"`
	StateVersion         int       `json:"state_version"`
	NextStep             *NextStep `json:"next_step"`
	RequiredPhaseGates   []string  `json:"required_phase_gates"`
	SatisfiedGates       []string  `json:"satisfied_gates"`
	MissingRequiredGates []string  `json:"missing_required_gates"`
	LoopSignal           string    `json:"loop_signal,omitempty"`
	Warnings             []string  `json:"warnings,omitempty"`
}

// StepResult is a step's report (foundry's last_step_result): every field
// foundry defines, none dropped.
type StepResult struct {
	StepID              string   `json:"step_id"`
	StepType            string   `json:"step_type"`
	Outcome             string   `json:"outcome"`
	TaskID              string   `json:"task_id,omitempty"`
	PhaseID             string   `json:"phase_id,omitempty"`
	GateAttemptID       string   `json:"gate_attempt_id,omitempty"`
	StepProof           string   `json:"step_proof,omitempty"`
	VerificationReceipt *Receipt `json:"verification_receipt,omitempty"`
	Note                string   `json:"note,omitempty"`
	FilesTouched        []string `json:"files_touched,omitempty"`
}

// ProofRecord is a consumed step proof: the hash of the report that used
// it and the answer that report got, so the same report again gets the
// same answer with no second effect.
type ProofRecord struct {
	StepProof   string          `json:"step_proof"`
	StepID      string          `json:"step_id"`
	PayloadHash string          `json:"payload_hash"`
	ConsumedAt  string          `json:"consumed_at"`
	Response    json.RawMessage `json:"response"`
}

// DrivableBy reports whether a caller with API key keyID may drive s
// (session-step, pause, resume, rebase, end, reset, a forced restart, the
// fidelity gate): a session started under a key is driven under that key
// (any MCP session of it); a session started without a key, or a caller
// without one (stdio, the CLI, a keyless server), is not bound. The tool
// layer lets an admin key drive any session.
func (s *Session) DrivableBy(keyID string) bool {
	return s.OwnerKeyID == "" || keyID == "" || keyID == s.OwnerKeyID
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseStamp(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
