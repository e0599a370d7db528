package core

import (
	"fmt"
	"reflect"
	"strings"
)

// Typed details and warning contexts. Error.Details, Error.Extra and a
// warning's context are JSON objects; a refusal or a warning declares what
// it says as a struct with json tags, and DetailsOf renders it as the map
// those fields take: the same keys and values encoding/json would write for
// the struct (so the wire is the struct's JSON), with the Go values kept (so
// Payload still shortens details.received).

// FieldDetail is the details of a refusal about one argument: the field
// (its name or path, e.g. "phase.title"), the action it belongs to when the
// parameter is shared, the value received, the values allowed and the
// constraint broken; a zero value (nil for Received and Allowed) is left out.
type FieldDetail struct {
	Field      string `json:"field"`
	Action     string `json:"action,omitempty"`
	Received   any    `json:"received,omitempty"`
	Allowed    any    `json:"allowed,omitempty"`
	Constraint string `json:"constraint,omitempty"`
}

// TruncationContext is the context of a CONTENT_TRUNCATED warning: how many
// of how many items were left out and why (Reason: "token_budget" with
// BudgetTokens, or "output_limit" with OutputBytes); Parts and
// ArchiveIDsOmitted say where the rest is when they are set.
type TruncationContext struct {
	DroppedCount      int    `json:"dropped_count"`
	TotalCount        int    `json:"total_count"`
	Reason            string `json:"reason"`
	BudgetTokens      int    `json:"budget_tokens,omitempty"`
	OutputBytes       int64  `json:"output_bytes,omitempty"`
	Parts             int    `json:"parts,omitempty"`
	ArchiveIDsOmitted bool   `json:"archive_ids_omitted,omitempty"`
}

// The reasons of a TruncationContext.
const (
	TruncatedTokenBudget = "token_budget"
	TruncatedOutputLimit = "output_limit"
)

// FieldError is a refusal about one argument: NewError with details d.
func FieldError(code, message string, d FieldDetail) *Error {
	return NewError(code, message, DetailsOf(d))
}

// NewErrorOf is NewError with the details v declares (a struct with json
// tags; see DetailsOf).
func NewErrorOf(code, message string, v any) *Error {
	return NewError(code, message, DetailsOf(v))
}

// DetailsOf is the JSON object struct v (or a pointer to one) renders as,
// with the fields' Go values: a field's key is its json tag's name (the
// field's name without one), "-" is skipped, omitempty leaves out what
// encoding/json leaves out (false, 0, "", a nil pointer or interface, an
// empty slice or map), a non-nil pointer gives the value it points to, and
// an embedded struct without a tag is flattened.
// A nil pointer is nil. Anything but a struct is a programming error and
// panics.
func DetailsOf(v any) map[string]any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		panic(fmt.Sprintf("core: DetailsOf(%T): not a struct", v))
	}
	out := map[string]any{}
	putFields(out, rv)
	return out
}

// putFields adds the fields of struct value v to out (DetailsOf).
func putFields(out map[string]any, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, x := t.Field(i), v.Field(i)
		tag, tagged := f.Tag.Lookup("json")
		if f.Anonymous && !tagged && x.Kind() == reflect.Struct {
			putFields(out, x)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		if omitEmpty(opts) && emptyJSON(x) {
			continue
		}
		if x.Kind() == reflect.Pointer && !x.IsNil() {
			x = x.Elem() // the value, not an alias of the caller's
		}
		out[name] = x.Interface()
	}
}

// omitEmpty reports whether a json tag's options hold omitempty.
func omitEmpty(opts string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == "omitempty" {
			return true
		}
	}
	return false
}

// emptyJSON is encoding/json's notion of an empty value (omitempty).
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
