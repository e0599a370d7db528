package core

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error types of contract §3.
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

// Error codes of contract §3.
const (
	CodeValidation         = "VALIDATION_ERROR"
	CodeInvalidFormat      = "INVALID_FORMAT"
	CodeMissingRequired    = "MISSING_REQUIRED"
	CodeUnknownAction      = "UNKNOWN_ACTION"
	CodeUnknownParameter   = "UNKNOWN_PARAMETER"
	CodeInvalidParent      = "INVALID_PARENT"
	CodeInvalidPosition    = "INVALID_POSITION"
	CodeInvalidRegex       = "INVALID_REGEX_PATTERN"
	CodePayloadTooLarge    = "PAYLOAD_TOO_LARGE"
	CodeInvalidCursor      = "INVALID_CURSOR"
	CodeCircularDependency = "CIRCULAR_DEPENDENCY"
	CodeSelfReference      = "SELF_REFERENCE"
	CodeNotFound           = "NOT_FOUND"
	CodeSpecNotFound       = "SPEC_NOT_FOUND"
	CodeTaskNotFound       = "TASK_NOT_FOUND"
	CodePhaseNotFound      = "PHASE_NOT_FOUND"
	CodeDependencyNotFound = "DEPENDENCY_NOT_FOUND"
	CodeVersionNotFound    = "VERSION_NOT_FOUND"
	CodeDigestNotFound     = "DIGEST_NOT_FOUND"
	CodeArchiveNotFound    = "ARCHIVE_NOT_FOUND"
	CodeConflict           = "CONFLICT"
	CodeDuplicateEntry     = "DUPLICATE_ENTRY"
	CodeVersionConflict    = "VERSION_CONFLICT"
	CodeInvalidTransition  = "INVALID_TRANSITION"
	CodeTaskBlocked        = "TASK_BLOCKED"
	CodeUnauthorized       = "UNAUTHORIZED"
	CodeForbidden          = "FORBIDDEN"
	CodeRateLimitExceeded  = "RATE_LIMIT_EXCEEDED"
	CodeFeatureDisabled    = "FEATURE_DISABLED"
	CodeInternal           = "INTERNAL_ERROR"
	CodeUnavailable        = "UNAVAILABLE"
	CodeLockTimeout        = "LOCK_TIMEOUT"
	CodeStoreCorrupt       = "STORE_CORRUPT"
	CodeStoreFull          = "STORE_FULL"
	CodeStoreReadOnly      = "STORE_READ_ONLY"
)

// CodeInfo is one row of the error registry.
type CodeInfo struct {
	Code        string
	Type        string
	Remediation string // default remediation: one actionable sentence
}

// registry is the one table mapping code → type → default remediation.
var registry = map[string]CodeInfo{}

func init() {
	for _, r := range []CodeInfo{
		{CodeValidation, TypeValidation, "Fix the reported fields (see data.details) and call again."},
		{CodeInvalidFormat, TypeValidation, "Correct the value of data.details.field (type, enum or bounds) and call again."},
		{CodeMissingRequired, TypeValidation, "Add the missing parameter named in data.details.field and call again."},
		{CodeUnknownAction, TypeValidation, "Use one of the actions in data.details.allowed; server(action=\"schema\") lists them with their parameters."},
		{CodeUnknownParameter, TypeValidation, "Remove or rename the parameter in data.details.field; server(action=\"schema\") lists what each action takes."},
		{CodeInvalidParent, TypeValidation, "Choose a parent that exists and can hold this node; task(action=\"hierarchy\") shows the tree."},
		{CodeInvalidPosition, TypeValidation, "Use a 1-based position within the parent's children."},
		{CodeInvalidRegex, TypeValidation, "Fix the regular expression (RE2 syntax, at most 256 characters) or search literally."},
		{CodePayloadTooLarge, TypeValidation, "Shrink the field named in data.details.field below data.details.limit, or pass large content as a workspace path."},
		{CodeInvalidCursor, TypeValidation, "Restart the listing without a cursor (see recovery)."},
		{CodeCircularDependency, TypeValidation, "Remove one edge of data.details.cycle before adding this dependency."},
		{CodeSelfReference, TypeValidation, "A node cannot depend on itself: choose a different target_id."},
		{CodeNotFound, TypeNotFound, "Check the identifier against the listing in recovery.suggested_tool."},
		{CodeSpecNotFound, TypeNotFound, "Use a spec_id from spec(action=\"list\") or one of recovery.fuzzy_matches."},
		{CodeTaskNotFound, TypeNotFound, "Use a task_id from task(action=\"list\") or one of recovery.fuzzy_matches."},
		{CodePhaseNotFound, TypeNotFound, "Use a phase id from task(action=\"hierarchy\") or one of recovery.fuzzy_matches."},
		{CodeDependencyNotFound, TypeNotFound, "Check the dependency with task(action=\"check-deps\") before removing it."},
		{CodeVersionNotFound, TypeNotFound, "Pick a version from spec(action=\"history\")."},
		{CodeDigestNotFound, TypeNotFound, "List stored digests with research(action=\"digest-list\")."},
		{CodeArchiveNotFound, TypeNotFound, "Re-read the source answer to get current archive ids."},
		{CodeConflict, TypeConflict, "Re-read the current state, then decide whether to retry."},
		{CodeDuplicateEntry, TypeConflict, "An entry with this identity exists: read it instead of creating it again."},
		{CodeVersionConflict, TypeConflict, "Re-read the spec to get its current version, re-apply your change, and pass that version as expected_version."},
		{CodeInvalidTransition, TypeConflict, "Use one of the transitions in data.details.allowed."},
		{CodeTaskBlocked, TypeConflict, "Finish the blockers in data.details.blocked_by first; task(action=\"check-deps\") shows them."},
		{CodeUnauthorized, TypeAuthentication, "Provide valid credentials."},
		{CodeForbidden, TypeAuthorization, "This client may not perform the action; ask an operator for access."},
		{CodeRateLimitExceeded, TypeRateLimit, "Wait data.retry_after_seconds seconds, then retry."},
		{CodeFeatureDisabled, TypeFeatureFlag, "Ask an operator to enable the feature flag named in data.details.feature."},
		{CodeInternal, TypeInternal, "Retry with backoff; if it persists, report the request_id to the operator."},
		{CodeUnavailable, TypeUnavailable, "Retry with backoff, or narrow the call so it finishes within the deadline."},
		{CodeLockTimeout, TypeUnavailable, "Another process holds the store: retry after data.details.retry_after_ms milliseconds."},
		{CodeStoreCorrupt, TypeUnavailable, "Stop specd, move the store file named in data.details.store aside, and restore the latest copy made with `specd backup` (`specd check` verifies it)."},
		{CodeStoreFull, TypeUnavailable, "Free space on the disk holding the store (data.details.store), then retry; nothing of the failed call was written."},
		{CodeStoreReadOnly, TypeUnavailable, "Reads still work; to write, make the store file named in data.details.store and its folder writable by this user (or remount the file system read-write)."},
	} {
		registry[r.Code] = r
	}
}

// Lookup returns the registry row of code. Unknown codes are reported as
// internal errors, so a typo never reaches a client as an unknown type.
func Lookup(code string) (CodeInfo, bool) {
	r, ok := registry[code]
	return r, ok
}

// Codes lists every registered code, sorted.
func Codes() []string {
	out := make([]string, 0, len(registry))
	for c := range registry {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Recovery is the call an agent can make next (contract §3).
type Recovery struct {
	SuggestedTool string         `json:"suggested_tool"`
	SuggestedArgs map[string]any `json:"suggested_args"`
	FuzzyMatches  []string       `json:"fuzzy_matches"`
}

// Error is the one error type of specd: a registry code, a one-sentence
// message, optional remediation override, details and recovery. Handlers
// return it; the dispatcher turns it into a failure envelope.
type Error struct {
	Code        string
	Message     string
	Remediation string         // empty: the registry default
	Details     map[string]any // field, constraint, received, …
	Recovery    *Recovery
	Extra       map[string]any // additional top-level data keys (e.g. retry_after_seconds, feature)
	cause       error          // logged, never sent
}

// Error implements error.
func (e *Error) Error() string {
	if e.cause != nil {
		return e.Code + ": " + e.Message + ": " + e.cause.Error()
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.cause }

// Cause is the internal Go error behind the failure, for the log only.
func (e *Error) Cause() error { return e.cause }

// NewError builds an error with a registered code. Details may be nil.
func NewError(code, message string, details map[string]any) *Error {
	return &Error{Code: code, Message: message, Details: details}
}

// Errorf builds an error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected Go error. Its text is kept for the log and
// never reaches the client.
func Internal(cause error) *Error {
	return &Error{Code: CodeInternal, cause: cause}
}

// WithRecovery sets the suggested next call and returns e.
func (e *Error) WithRecovery(tool string, args map[string]any, matches []string) *Error {
	e.Recovery = &Recovery{SuggestedTool: tool, SuggestedArgs: args, FuzzyMatches: matches}
	return e
}

// WithRemediation overrides the registry's default remediation and returns e.
func (e *Error) WithRemediation(s string) *Error { e.Remediation = s; return e }

// WithDetail sets one details key and returns e.
func (e *Error) WithDetail(k string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[k] = v
	return e
}

// WithCause records an internal cause for the log and returns e.
func (e *Error) WithCause(err error) *Error { e.cause = err; return e }

func (e *Error) info() CodeInfo {
	if r, ok := registry[e.Code]; ok {
		return r
	}
	return registry[CodeInternal]
}

func (e *Error) message(requestID string) string {
	info := e.info()
	if info.Code == CodeInternal {
		return "Internal error while handling request " + requestID + "; the server log has the details."
	}
	if e.Message == "" {
		return info.Remediation
	}
	return e.Message
}

// Payload is the data object of a failure: error_code, error_type,
// remediation, details, recovery, plus any extra keys. Internal errors carry
// only the request id in details, never Go error text.
func (e *Error) Payload(requestID string) map[string]any {
	info := e.info()
	rem := e.Remediation
	if rem == "" {
		rem = info.Remediation
	}
	details := map[string]any{}
	if info.Code == CodeInternal {
		details["request_id"] = requestID
	} else {
		for k, v := range e.Details {
			if k == "received" {
				v = TruncateValue(v, 200)
			}
			details[k] = v
		}
	}
	rec := Recovery{FuzzyMatches: []string{}}
	if e.Recovery != nil {
		rec = *e.Recovery
		if rec.FuzzyMatches == nil {
			rec.FuzzyMatches = []string{}
		}
	}
	recovery := map[string]any{"suggested_tool": nil, "suggested_args": nil, "fuzzy_matches": rec.FuzzyMatches}
	if rec.SuggestedTool != "" {
		recovery["suggested_tool"] = rec.SuggestedTool
		args := rec.SuggestedArgs
		if args == nil {
			args = map[string]any{}
		}
		recovery["suggested_args"] = args
	}
	out := map[string]any{
		"error_code":  info.Code,
		"error_type":  info.Type,
		"remediation": rem,
		"details":     details,
		"recovery":    recovery,
	}
	for k, v := range e.Extra {
		if _, taken := out[k]; !taken {
			out[k] = v
		}
	}
	return out
}

// Coded is implemented by domain errors (specs, research) that carry a
// registry code without importing core.
type Coded interface {
	error
	ErrorCode() string
}

// Detailed is optionally implemented by a Coded error.
type Detailed interface {
	ErrorDetails() map[string]any
}

// AsError converts any error to an *Error: an *Error is returned as is; a
// [Coded] error keeps its code, message and details; anything else becomes
// INTERNAL_ERROR with the cause kept for the log.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var c Coded
	if errors.As(err, &c) {
		if _, ok := registry[c.ErrorCode()]; !ok {
			return Internal(err)
		}
		// Domain errors render as "CODE: message"; the envelope has the code
		// already, so keep the sentence only.
		out := &Error{Code: c.ErrorCode(), Message: strings.TrimPrefix(c.Error(), c.ErrorCode()+": ")}
		if d, ok := c.(Detailed); ok {
			out.Details = d.ErrorDetails()
		}
		return out
	}
	return Internal(err)
}

// TruncateValue shortens strings longer than n runes (with an ellipsis) so
// details.received never echoes a whole payload back. Other values pass
// unchanged unless their JSON would be large, in which case a type name is
// returned.
func TruncateValue(v any, n int) any {
	switch s := v.(type) {
	case string:
		if utf8.RuneCountInString(s) <= n {
			return s
		}
		r := []rune(s)
		return string(r[:n]) + "…"
	case map[string]any:
		if len(s) > 20 {
			return fmt.Sprintf("object with %d keys", len(s))
		}
	case []any:
		if len(s) > 20 {
			return fmt.Sprintf("array of %d items", len(s))
		}
	}
	return v
}
