package tools

import (
	"fmt"
	"maps"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

// objectArg binds one object inside a parameter strictly (phase-add-bulk's
// phase and tasks[i], complete-batch's completions[i]), so that the three
// share one rule: a key outside allowed is UNKNOWN_PARAMETER naming
// path.key, with the closest allowed keys and the tool's schema as the
// recovery; a value of the wrong type is INVALID_FORMAT naming path.key.
// Absent and null values read as zero. The first error sticks (err); later
// reads return zero values.
type objectArg struct {
	m    map[string]any
	path string
	err  *core.Error
}

// bindObject checks m's keys (in sorted order, so the error is the same
// on every call) against allowed.
func bindObject(m map[string]any, path, tool string, allowed []string) *objectArg {
	o := &objectArg{m: m, path: path}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			o.err = core.NewError(errcode.UnknownParameter, fmt.Sprintf("%s has no field %q.", path, k),
				map[string]any{"field": o.at(k), "allowed": allowed}).
				WithRecovery("server", map[string]any{"action": "schema", "tool_name": tool}, fuzzy.Rank(k, allowed, 5))
			break
		}
	}
	return o
}

// at names key k of the object.
func (o *objectArg) at(k string) string { return o.path + "." + k }

// has reports whether k is set (not null).
func (o *objectArg) has(k string) bool { return o.m[k] != nil }

// fail records an error about k (unless one is recorded already).
func (o *objectArg) fail(code, k, message string) {
	if o.err == nil {
		o.err = core.NewError(code, o.at(k)+" "+message, map[string]any{"field": o.at(k), "received": o.m[k]})
	}
}

// str is k's string.
func (o *objectArg) str(k string) string {
	s, ok := o.m[k].(string)
	if !ok && o.has(k) {
		o.fail(errcode.InvalidFormat, k, "must be a string.")
	}
	return s
}

// hours is k's number ≥ 0, or nil.
func (o *objectArg) hours(k string) *float64 {
	if !o.has(k) {
		return nil
	}
	f, ok := o.m[k].(float64)
	if !ok || f < 0 {
		o.fail(errcode.InvalidFormat, k, "must be a number ≥ 0.")
		return nil
	}
	return &f
}

// object is k's object.
func (o *objectArg) object(k string) map[string]any {
	m, ok := o.m[k].(map[string]any)
	if !ok && o.has(k) {
		o.fail(errcode.InvalidFormat, k, "must be an object.")
	}
	return m
}

// strs is k's array of strings.
func (o *objectArg) strs(k string) []string {
	if !o.has(k) {
		return nil
	}
	l, ok := o.m[k].([]any)
	if !ok {
		o.fail(errcode.InvalidFormat, k, "must be an array of strings.")
		return nil
	}
	out := make([]string, 0, len(l))
	for j, x := range l {
		s, ok := x.(string)
		if !ok {
			if o.err == nil {
				at := fmt.Sprintf("%s[%d]", o.at(k), j)
				o.err = core.NewError(errcode.InvalidFormat, at+" must be a string.", map[string]any{"field": at, "received": x})
			}
			return nil
		}
		out = append(out, s)
	}
	return out
}

// required records MISSING_REQUIRED for k (what says what k must be).
func (o *objectArg) required(k, what string) {
	o.fail(errcode.MissingRequired, k, "is required ("+what+").")
}
