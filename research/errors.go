package research

import (
	"errors"
	"strings"
)

// Error is the coded error of research's services (the application logic
// of the research tool). Code is a contract §3 error code, one of the
// constants of core/errcode; Message is one human sentence; Details the
// structured context (field, constraint, received, …); Remediation, when
// set, replaces the registry's default; Recovery, when set, is the call an
// agent can make next. The tools layer turns it into the envelope error
// unchanged.
type Error struct {
	Code        string
	Message     string
	Details     map[string]any
	Remediation string
	Recovery    *Recovery
}

// Recovery is a suggested next call: a tool and its arguments, which run as
// given.
type Recovery struct {
	Tool string
	Args map[string]any
}

// Error implements the error interface as "CODE: message".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// ErrorCode returns the contract error code.
func (e *Error) ErrorCode() string { return e.Code }

// ErrorDetails returns Details (nil when there are none).
func (e *Error) ErrorDetails() map[string]any { return e.Details }

func newError(code, message string, details map[string]any) *Error {
	return &Error{Code: code, Message: message, Details: details}
}

func (e *Error) withRemediation(s string) *Error { e.Remediation = s; return e }

func (e *Error) withRecovery(tool string, args map[string]any) *Error {
	e.Recovery = &Recovery{Tool: tool, Args: args}
	return e
}

// codeOf is the contract code of err when it carries one (the store's and
// the workspace's errors, specs' and research's own), else "".
func codeOf(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// messageOf is the sentence of a coded error, without its "CODE: " prefix.
func messageOf(err error) string {
	return strings.TrimPrefix(err.Error(), codeOf(err)+": ")
}
