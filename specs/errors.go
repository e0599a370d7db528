package specs

import (
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/fuzzy"
)

// The domain's failures are *core.Error values (specd's one error type):
// Code is one of the constants of package core/errcode; Message is one
// human sentence; Details carries structured context (details.field names
// the offending argument, details.cycle for CIRCULAR_DEPENDENCY,
// details.allowed for INVALID_TRANSITION, details.blocked_by for
// TASK_BLOCKED). Details is never nil on an error raised here. A not-found
// error's Recovery holds the existing ids closest to details.received as
// fuzzy matches; the domain names no tools, so no error raised here names
// its next call: the tools choose it from the code and the details.

// newErr is a domain failure with code and message; field, when set, is
// details.field.
func newErr(code, field, format string, args ...any) *core.Error {
	details := map[string]any{}
	if field != "" {
		details["field"] = field
	}
	return core.NewError(code, fmt.Sprintf(format, args...), details)
}

// withMatches ranks candidates (the ids that exist, unranked) against
// details.received and keeps the closest, if any, as e's fuzzy matches.
// It returns e.
func withMatches(e *core.Error, candidates []string) *core.Error {
	if len(candidates) == 0 {
		return e
	}
	received, _ := e.Details["received"].(string)
	if matches := fuzzy.Rank(received, candidates, 5); len(matches) > 0 {
		e.Recovery = &core.Recovery{FuzzyMatches: matches}
	}
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
