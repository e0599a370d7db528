package mcptool

import (
	"fmt"
	"maps"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

// ObjectArg binds one object inside a parameter strictly (phase-add-bulk's
// phase and tasks[i], complete-batch's completions[i]), so that the three
// share one rule: a key outside allowed is UNKNOWN_PARAMETER naming
// path.key, with the closest allowed keys and the tool's schema as the
// recovery; a value of the wrong type is INVALID_FORMAT naming path.key.
// Absent and null values read as zero. The first error sticks (Err); later
// reads return zero values.
type ObjectArg struct {
	m    map[string]any
	path string
	Err  *core.Error
}

// BindObject binds m, the object at path (e.g. "tasks[2]") of tool's
// call, checking its keys (in sorted order, so the error is the same
// on every call) against allowed.
func BindObject(m map[string]any, path, tool string, allowed []string) *ObjectArg {
	o := &ObjectArg{m: m, path: path}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			o.Err = core.NewError(errcode.UnknownParameter, fmt.Sprintf("%s has no field %q.", path, k),
				map[string]any{"field": o.At(k), "allowed": allowed}).
				WithRecovery("server", map[string]any{"action": "schema", "tool_name": tool}, fuzzy.Rank(k, allowed, 5))
			break
		}
	}
	return o
}

// At names key k of the object ("tasks[2].title").
func (o *ObjectArg) At(k string) string { return o.path + "." + k }

// Has reports whether k is set (not null).
func (o *ObjectArg) Has(k string) bool { return o.m[k] != nil }

// fail records an error about k (unless one is recorded already).
func (o *ObjectArg) fail(code, k, message string) {
	if o.Err == nil {
		o.Err = core.NewError(code, o.At(k)+" "+message, map[string]any{"field": o.At(k), "received": o.m[k]})
	}
}

// Str is k's string ("" when absent; INVALID_FORMAT when not a string).
func (o *ObjectArg) Str(k string) string {
	s, ok := o.m[k].(string)
	if !ok && o.Has(k) {
		o.fail(errcode.InvalidFormat, k, "must be a string.")
	}
	return s
}

// Hours is k's number ≥ 0, or nil when absent (INVALID_FORMAT when not a
// number ≥ 0).
func (o *ObjectArg) Hours(k string) *float64 {
	if !o.Has(k) {
		return nil
	}
	f, ok := o.m[k].(float64)
	if !ok || f < 0 {
		o.fail(errcode.InvalidFormat, k, "must be a number ≥ 0.")
		return nil
	}
	return &f
}

// Object is k's object (nil when absent; INVALID_FORMAT when not an
// object).
func (o *ObjectArg) Object(k string) map[string]any {
	m, ok := o.m[k].(map[string]any)
	if !ok && o.Has(k) {
		o.fail(errcode.InvalidFormat, k, "must be an object.")
	}
	return m
}

// Strs is k's array of strings (nil when absent; INVALID_FORMAT naming the
// first element that is not a string).
func (o *ObjectArg) Strs(k string) []string {
	if !o.Has(k) {
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
			if o.Err == nil {
				at := fmt.Sprintf("%s[%d]", o.At(k), j)
				o.Err = core.NewError(errcode.InvalidFormat, at+" must be a string.", map[string]any{"field": at, "received": x})
			}
			return nil
		}
		out = append(out, s)
	}
	return out
}

// Required records MISSING_REQUIRED for k (what says what k must be).
func (o *ObjectArg) Required(k, what string) {
	o.fail(errcode.MissingRequired, k, "is required ("+what+").")
}
