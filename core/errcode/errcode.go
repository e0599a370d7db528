// Package errcode declares every error code of the envelope once: the code
// constants, the error types, and the registry table mapping each code to its
// type and default remediation. It imports only the standard library, so both
// core (the envelope builder) and the domain packages (specs, research) can use
// it.
//
// A code that is not in the table is reported to clients as INTERNAL_ERROR
// (core.Error.Payload); the tests of this package and of the domain make sure every
// declared code is registered and every code the domain returns is declared
// here.
package errcode

import "sort"

// Error types: the data.error_type of a failure, which says whether and how to
// retry (validation, not_found and the like: not unchanged; conflict: re-read
// first; rate_limit: after retry_after_seconds; internal and unavailable: with
// backoff).
const (
	TypeValidation     = "validation"
	TypeAuthentication = "authentication"
	TypeAuthorization  = "authorization"
	TypeNotFound       = "not_found"
	TypeConflict       = "conflict"
	TypeRateLimit      = "rate_limit"
	TypeFeatureFlag    = "feature_flag"
	TypeInternal       = "internal"
	TypeUnavailable    = "unavailable"
)

// Error codes: the data.error_code of a failure.
const (
	Validation         = "VALIDATION_ERROR"
	InvalidFormat      = "INVALID_FORMAT"
	MissingRequired    = "MISSING_REQUIRED"
	UnknownAction      = "UNKNOWN_ACTION"
	UnknownParameter   = "UNKNOWN_PARAMETER"
	InvalidParent      = "INVALID_PARENT"
	InvalidPosition    = "INVALID_POSITION"
	InvalidRegex       = "INVALID_REGEX_PATTERN"
	PayloadTooLarge    = "PAYLOAD_TOO_LARGE"
	InvalidCursor      = "INVALID_CURSOR"
	CircularDependency = "CIRCULAR_DEPENDENCY"
	SelfReference      = "SELF_REFERENCE"
	NotFound           = "NOT_FOUND"
	SpecNotFound       = "SPEC_NOT_FOUND"
	TaskNotFound       = "TASK_NOT_FOUND"
	PhaseNotFound      = "PHASE_NOT_FOUND"
	DependencyNotFound = "DEPENDENCY_NOT_FOUND"
	VersionNotFound    = "VERSION_NOT_FOUND"
	DigestNotFound     = "DIGEST_NOT_FOUND"
	ArchiveNotFound    = "ARCHIVE_NOT_FOUND"
	Conflict           = "CONFLICT"
	DuplicateEntry     = "DUPLICATE_ENTRY"
	VersionConflict    = "VERSION_CONFLICT"
	InvalidTransition  = "INVALID_TRANSITION"
	TaskBlocked        = "TASK_BLOCKED"
	Unauthorized       = "UNAUTHORIZED"
	Forbidden          = "FORBIDDEN"
	RateLimitExceeded  = "RATE_LIMIT_EXCEEDED"
	FeatureDisabled    = "FEATURE_DISABLED"
	Internal           = "INTERNAL_ERROR"
	Unavailable        = "UNAVAILABLE"
	LockTimeout        = "LOCK_TIMEOUT"
	StoreCorrupt       = "STORE_CORRUPT"
	StoreFull          = "STORE_FULL"
	StoreReadOnly      = "STORE_READ_ONLY"
	StorePathInvalid   = "STORE_PATH_INVALID"
	WorkspaceMismatch  = "WORKSPACE_MISMATCH"
	NotSupported       = "NOT_SUPPORTED"
)

// Error codes of autonomy sessions (foundry-mcp v0.16's names; README "Autonomous runs").
const (
	SpecSessionExists          = "SPEC_SESSION_EXISTS"
	SessionNotFound            = "SESSION_NOT_FOUND"
	NoActiveSession            = "NO_ACTIVE_SESSION"
	InvalidStateTransition     = "INVALID_STATE_TRANSITION"
	StepResultRequired         = "STEP_RESULT_REQUIRED"
	StepMismatch               = "STEP_MISMATCH"
	StepProofMissing           = "STEP_PROOF_MISSING"
	StepProofMismatch          = "STEP_PROOF_MISMATCH"
	StepProofConflict          = "STEP_PROOF_CONFLICT"
	VerificationReceiptMissing = "VERIFICATION_RECEIPT_MISSING"
	VerificationReceiptInvalid = "VERIFICATION_RECEIPT_INVALID"
	InvalidGateEvidence        = "INVALID_GATE_EVIDENCE"
	GateIntegrityChecksum      = "GATE_INTEGRITY_CHECKSUM"
	ManualGateAckRequired      = "MANUAL_GATE_ACK_REQUIRED"
	InvalidGateAck             = "INVALID_GATE_ACK"
	SpecRebaseRequired         = "SPEC_REBASE_REQUIRED"
	GateWaiverDisabled         = "GATE_WAIVER_DISABLED"
	GateNotFound               = "GATE_NOT_FOUND"
	GateAlreadyPassed          = "GATE_ALREADY_PASSED"
	GateAlreadyWaived          = "GATE_ALREADY_WAIVED"
	AutonomyWriteLockActive    = "AUTONOMY_WRITE_LOCK_ACTIVE"
	AuditChainBroken           = "AUDIT_CHAIN_BROKEN"
)

// Info is one row of the registry.
type Info struct {
	Code        string
	Type        string
	Remediation string // default remediation: one actionable sentence
}

// table is the one registry: code → type → default remediation.
var table = []Info{
	{Validation, TypeValidation, "Fix the reported fields (see data.details) and call again."},
	{InvalidFormat, TypeValidation, "Correct the value of data.details.field (type, enum or bounds) and call again."},
	{MissingRequired, TypeValidation, "Add the missing parameter named in data.details.field and call again."},
	{UnknownAction, TypeValidation, "Use one of the actions in data.details.allowed; server(action=\"schema\") lists them with their parameters."},
	{UnknownParameter, TypeValidation, "Remove or rename the parameter in data.details.field; server(action=\"schema\") lists what each action takes."},
	{InvalidParent, TypeValidation, "Choose a parent that exists and can hold this node; task(action=\"hierarchy\") shows the tree."},
	{InvalidPosition, TypeValidation, "Use a 0-based position within the parent's children (0 is first)."},
	{InvalidRegex, TypeValidation, "Fix the regular expression (RE2 syntax, at most 256 characters) or search literally."},
	{PayloadTooLarge, TypeValidation, "Shrink the field named in data.details.field below data.details.limit, or pass large content as a workspace path."},
	{InvalidCursor, TypeValidation, "Restart the listing without a cursor (see recovery)."},
	{CircularDependency, TypeValidation, "Remove one edge of data.details.cycle before adding this dependency."},
	{SelfReference, TypeValidation, "A node cannot depend on itself: choose a different target_id."},
	{NotFound, TypeNotFound, "Check the identifier against the listing in recovery.suggested_tool."},
	{SpecNotFound, TypeNotFound, "Use a spec_id from spec(action=\"list\") or one of recovery.fuzzy_matches."},
	{TaskNotFound, TypeNotFound, "Use a task_id from task(action=\"list\") or one of recovery.fuzzy_matches."},
	{PhaseNotFound, TypeNotFound, "Use a phase id from task(action=\"hierarchy\") or one of recovery.fuzzy_matches."},
	{DependencyNotFound, TypeNotFound, "Check the dependency with task(action=\"check-deps\") before removing it."},
	{VersionNotFound, TypeNotFound, "Pick a version from spec(action=\"history\")."},
	{DigestNotFound, TypeNotFound, "List stored digests with research(action=\"digest-list\")."},
	{ArchiveNotFound, TypeNotFound, "Re-read the source answer to get current archive ids."},
	{Conflict, TypeConflict, "Re-read the current state, then decide whether to retry."},
	{DuplicateEntry, TypeConflict, "An entry with this identity exists: read it instead of creating it again."},
	{VersionConflict, TypeConflict, "Re-read the spec to get its current version, re-apply your change, and pass that version as expected_version."},
	{InvalidTransition, TypeConflict, "Use one of the transitions in data.details.allowed."},
	{TaskBlocked, TypeConflict, "Finish the blockers in data.details.blocked_by first; task(action=\"check-deps\") shows them."},
	{Unauthorized, TypeAuthentication, "Provide valid credentials."},
	{Forbidden, TypeAuthorization, "This client may not perform the action; ask an operator for access."},
	{RateLimitExceeded, TypeRateLimit, "Wait data.retry_after_seconds seconds, then retry."},
	{FeatureDisabled, TypeFeatureFlag, "Ask an operator to enable the feature flag named in data.details.feature."},
	{Internal, TypeInternal, "Retry with backoff; if it persists, report the request_id to the operator."},
	{Unavailable, TypeUnavailable, "Retry with backoff, or narrow the call so it finishes within the deadline."},
	{LockTimeout, TypeUnavailable, "Another process holds the store: retry after data.details.retry_after_ms milliseconds."},
	{StoreCorrupt, TypeUnavailable, "Stop specd, move the store file named in data.details.store aside, and restore the latest copy made with `specd backup` (`specd check` verifies it)."},
	{StoreFull, TypeUnavailable, "Free space on the disk holding the store (data.details.store), then retry; nothing of the failed call was written."},
	{WorkspaceMismatch, TypeValidation, "This server keeps one workspace's specs: omit the workspace/path parameter, or start specd for that folder (specd serve --workspace FOLDER) and call that server."},
	{NotSupported, TypeValidation, "specd calls no language model: do the step yourself, or make the deterministic call in recovery."},
	{SpecSessionExists, TypeConflict, "The spec has an active session: continue it (recovery), end it, or start with force=true to replace it."},
	{SessionNotFound, TypeNotFound, "Use a session_id from task(action=\"session\", command=\"list\")."},
	{NoActiveSession, TypeNotFound, "Start a session with task(action=\"session\", command=\"start\")."},
	{InvalidStateTransition, TypeConflict, "Check the session's status (data.details.current_status) before this command."},
	{StepResultRequired, TypeValidation, "Report the outcome of the last issued step (last_step_result) before asking for the next one."},
	{StepMismatch, TypeConflict, "Report the step_id, step_type and task_id or phase_id of the last issued step (replay shows it)."},
	{StepProofMissing, TypeValidation, "Include the step_proof of the issued step in the report."},
	{StepProofMismatch, TypeConflict, "Use the step_proof of the latest issued step (replay shows it)."},
	{StepProofConflict, TypeConflict, "This step_proof was already used with a different report: resend exactly the first report, or replay."},
	{VerificationReceiptMissing, TypeValidation, "Report an execute_verification success with its verification_receipt {command_hash, exit_code, output_digest, issued_at, step_id}."},
	{VerificationReceiptInvalid, TypeValidation, "Run the verify node's own command for this step and report its receipt (command_hash = sha256 of the command)."},
	{InvalidGateEvidence, TypeValidation, "Run review(action=\"fidelity-gate\") for this step and report its gate_attempt_id."},
	{GateIntegrityChecksum, TypeConflict, "The gate evidence does not verify: run the gate again for fresh evidence."},
	{ManualGateAckRequired, TypeValidation, "Resume with acknowledge_gate_review=true and the acknowledged_gate_attempt_id in data.details."},
	{InvalidGateAck, TypeValidation, "Acknowledge the gate attempt named in data.details.expected."},
	{SpecRebaseRequired, TypeConflict, "The spec's structure changed under the session: rebase it with task(action=\"session\", command=\"rebase\")."},
	{GateWaiverDisabled, TypeAuthorization, "Gate waivers are off: an operator starts the server with --allow-gate-waiver."},
	{GateNotFound, TypeNotFound, "Waive the gate of a phase the session has run a gate for (session status lists them)."},
	{GateAlreadyPassed, TypeConflict, "The gate passed: nothing to waive."},
	{GateAlreadyWaived, TypeConflict, "The gate is already waived."},
	{AutonomyWriteLockActive, TypeConflict, "An autonomy session drives this spec: report through task(action=\"session-step\"), or end the session first."},
	{AuditChainBroken, TypeInternal, "The audit ledger does not verify: keep the store for inspection and report it to the operator."},
	{StorePathInvalid, TypeUnavailable, "The store cannot be created where it is configured (data.details.store): point --db / SPECD_DB at a folder this user can create; server(action=\"context\") shows the store path and where it was configured."},
	{StoreReadOnly, TypeUnavailable, "Reads still work; to write, make the store file named in data.details.store and its folder writable by this user (or remount the file system read-write)."},
}

var byCode = func() map[string]Info {
	m := make(map[string]Info, len(table))
	for _, r := range table {
		m[r.Code] = r
	}
	return m
}()

// Lookup returns the registry row of code and whether code is registered.
func Lookup(code string) (Info, bool) {
	r, ok := byCode[code]
	return r, ok
}

// Codes lists every registered code, sorted.
func Codes() []string {
	out := make([]string, 0, len(byCode))
	for c := range byCode {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
