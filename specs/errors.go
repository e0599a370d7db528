package specs

import (
	"errors"
	"fmt"
)

// Error is the single error type of the spec domain. Code is a contract §3
// error code, always one of the constants of package core/errcode; Message is one human sentence; Field names the offending
// argument when there is one; Details carries structured context (for example
// details.cycle for CIRCULAR_DEPENDENCY, details.allowed for
// INVALID_TRANSITION, details.blocked_by for TASK_BLOCKED); Candidates lists
// existing ids for not-found errors, unranked, so that the tools layer can
// fuzzy-rank them.
type Error struct {
	Code       string
	Message    string
	Field      string
	Details    map[string]any
	Candidates []string
}

// Error implements the error interface as "CODE: message".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return e.Code + ": " + e.Message
}

// ErrorCode returns the contract error code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorDetails returns a copy of Details, with "field" set when Field is set.
// It never returns nil.
func (e *Error) ErrorDetails() map[string]any {
	out := make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		out[k] = v
	}
	if e.Field != "" {
		if _, ok := out["field"]; !ok {
			out["field"] = e.Field
		}
	}
	return out
}

// ErrorCodeOf returns the code of err when it is (or wraps) an *Error, else "".
func ErrorCodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newErr(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) with(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// truncateForDetails shortens a received value for details.received.
func truncateForDetails(s string) string {
	const max = 200
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}
