package core

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/specd/specd/core/errcode"
)

// NextCall is a call an agent can make next, runnable as given: a tool and
// its arguments. It is specd's one next-call type: a failure's recovery
// names one, and so do answers that suggest where to go on.
type NextCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// Recovery is a failure's next call, one the caller can make as given: rendered
// as recovery.suggested_tool and suggested_args (null when Tool is ""), with
// the existing names closest to what the caller gave.
type Recovery struct {
	NextCall
	FuzzyMatches []string
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
	// Step is the next step as the layer that refused knows it, when that
	// layer may not name tools (the domain and its stores): a domain fact
	// the MCP face turns into Recovery's call (mcptool's
	// Registry.StepCallsWith). Never rendered.
	Step  *Step
	cause error // logged, never sent
}

// Step is a refusal's next step as a domain fact: what to do (Kind, e.g.
// "spec-history") on what (Args: the subject's identifiers, e.g. spec_id).
type Step struct {
	Kind string
	Args map[string]any
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
	return &Error{Code: errcode.Internal, cause: cause}
}

// WithRecovery sets the suggested next call and returns e.
func (e *Error) WithRecovery(tool string, args map[string]any, matches []string) *Error {
	e.Recovery = &Recovery{NextCall: NextCall{Tool: tool, Args: args}, FuzzyMatches: matches}
	return e
}

// WithNext sets the next call c with fuzzy matches and returns e.
func (e *Error) WithNext(c NextCall, matches []string) *Error {
	e.Recovery = &Recovery{NextCall: c, FuzzyMatches: matches}
	return e
}

// WithStep sets the next step as a domain fact (Step), with fuzzy matches,
// and returns e: the MCP face names the call that takes it.
func (e *Error) WithStep(kind string, args map[string]any, matches []string) *Error {
	e.Step = &Step{Kind: kind, Args: args}
	e.Recovery = &Recovery{FuzzyMatches: matches}
	return e
}

// NamesCall reports whether e names its next call (a recovery tool).
func (e *Error) NamesCall() bool { return e.Recovery != nil && e.Recovery.Tool != "" }

// Matches is e's fuzzy matches (nil when it has none).
func (e *Error) Matches() []string {
	if e.Recovery == nil {
		return nil
	}
	return e.Recovery.FuzzyMatches
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

func (e *Error) info() errcode.Info {
	if r, ok := errcode.Lookup(e.Code); ok {
		return r
	}
	r, _ := errcode.Lookup(errcode.Internal)
	return r
}

func (e *Error) message(requestID string) string {
	info := e.info()
	if info.Code == errcode.Internal {
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
	details := map[string]any{"request_id": requestID}
	if info.Code != errcode.Internal {
		details = shownDetails(e.Details)
	}
	recovery := recoveryPayload(e.Recovery)
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

// shownDetails is details as a failure shows them: every key, with
// "received" cut to 200 characters.
func shownDetails(details map[string]any) map[string]any {
	out := make(map[string]any, len(details))
	for k, v := range details {
		if k == "received" {
			v = TruncateValue(v, 200)
		}
		out[k] = v
	}
	return out
}

// recoveryPayload is the recovery block of a failure: suggested_tool and
// suggested_args (both null without a suggested call; args {} when the
// call has none) and fuzzy_matches (never null).
func recoveryPayload(r *Recovery) map[string]any {
	rec := Recovery{}
	if r != nil {
		rec = *r
	}
	if rec.FuzzyMatches == nil {
		rec.FuzzyMatches = []string{}
	}
	recovery := map[string]any{"suggested_tool": nil, "suggested_args": nil, "fuzzy_matches": rec.FuzzyMatches}
	if rec.Tool != "" {
		recovery["suggested_tool"] = rec.Tool
		args := rec.Args
		if args == nil {
			args = map[string]any{}
		}
		recovery["suggested_args"] = args
	}
	return recovery
}

// CodeOf is the code of the *Error in err's chain, or "" when there is none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// AsError converts any error to an *Error: the *Error in err's chain is
// returned as is; anything else becomes INTERNAL_ERROR with the cause kept
// for the log.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
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
