package mcptool

import "math"

// Args are a call's validated arguments (without "action"). The validator
// has checked every type, so the accessors only convert; an absent or null
// parameter reads as the zero value.
type Args map[string]any

// Has reports whether name was given (and not null).
func (a Args) Has(name string) bool { v, ok := a[name]; return ok && v != nil }

// String returns a string parameter.
func (a Args) String(name string) string { s, _ := a[name].(string); return s }

// Bool returns a boolean parameter.
func (a Args) Bool(name string) bool { b, _ := a[name].(bool); return b }

// Int returns an integer parameter and whether it was given. The validator
// refuses integers outside int64; a value int cannot hold reads as absent
// rather than wrapping.
func (a Args) Int(name string) (int, bool) {
	f, ok := a[name].(float64)
	if !ok || f != math.Trunc(f) || f < math.MinInt || f >= -math.MinInt {
		return 0, false
	}
	return int(f), true
}

// IntOr returns an integer parameter or def when absent.
func (a Args) IntOr(name string, def int) int {
	if v, ok := a.Int(name); ok {
		return v
	}
	return def
}

// Float returns a number parameter and whether it was given.
func (a Args) Float(name string) (float64, bool) { f, ok := a[name].(float64); return f, ok }

// Strings returns an array-of-strings parameter.
func (a Args) Strings(name string) []string {
	raw, _ := a[name].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Object returns an object parameter.
func (a Args) Object(name string) map[string]any { m, _ := a[name].(map[string]any); return m }

// List returns an array parameter.
func (a Args) List(name string) []any { l, _ := a[name].([]any); return l }
