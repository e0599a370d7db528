package mcptool

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

// Validate checks raw arguments against t and returns the action and the
// arguments without "action". It is the one validator every call goes
// through before its handler (its errors reach callers as envelopes,
// never as JSON-RPC errors). Errors, in the order checked:
//
//   - PAYLOAD_TOO_LARGE: the request over 100 KB (parameters that declare a
//     larger MaxLength are counted against their own cap instead);
//   - MISSING_REQUIRED / INVALID_FORMAT for "action" itself;
//   - UNKNOWN_ACTION with every action in details.allowed and the closest 5
//     in recovery.fuzzy_matches;
//   - UNKNOWN_PARAMETER: a name the tool lacks (closest names), or one this
//     action does not take (details.action, the action's parameters);
//   - INVALID_FORMAT: a number literal float64 cannot hold anywhere in a
//     value (details.received is the literal, e.g. 1e309); wrong type, enum
//     (fuzzy matches), bounds, pattern; an integer parameter given a
//     fraction or a value outside int64 (never wrapped);
//   - PAYLOAD_TOO_LARGE: a string, array or nesting over its cap;
//   - MISSING_REQUIRED naming the parameter and the action.
//
// A null value counts as absent. Like foundry-mcp, it forgives two things
// and says so: an enum value in another letter case is replaced by the
// declared one ("High" → "high"), and a number over the maximum of a Clamp
// parameter (page sizes) is lowered to it with a LIMIT_CLAMPED warning,
// returned as meta options for the answer.
func Validate(t *Tool, raw map[string]any) (*Action, Args, *core.Error) {
	a, args, _, err := validateNoting(t, raw)
	return a, args, err
}

// validateNoting is Validate, also returning the warnings the call's answer
// carries (LIMIT_CLAMPED).
func validateNoting(t *Tool, raw map[string]any) (*Action, Args, []core.MetaOption, *core.Error) {
	a, args, err := validateArgs(t, raw)
	if err != nil {
		return nil, nil, nil, err
	}
	var notes []core.MetaOption
	for name, v := range args {
		p, _ := t.Param(name)
		if f, ok := v.(float64); ok && p.Clamp && p.Max != nil && f > *p.Max {
			args[name] = *p.Max
			notes = append(notes, core.WithWarning(WarnLimitClamped, core.SeverityWarning,
				fmt.Sprintf("%s %v is over the maximum; %v was used.", name, v, *p.Max),
				map[string]any{"field": name, "requested": v, "used": *p.Max}))
		}
	}
	return a, args, notes, nil
}

// WarnLimitClamped marks an answer whose page size (or similar count) was
// lowered to the parameter's maximum instead of being refused.
const WarnLimitClamped = "LIMIT_CLAMPED"

func validateArgs(t *Tool, raw map[string]any) (*Action, Args, *core.Error) {
	if err := checkRequestSize(t, raw); err != nil {
		return nil, nil, err
	}
	a, err := resolveAction(t, raw)
	if err != nil {
		return nil, nil, err
	}
	// Names first, so a misspelt parameter is reported as such even when
	// another value is also wrong; keys in sorted order for stable answers.
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if err := checkNames(t, a, raw, keys); err != nil {
		return nil, nil, err
	}
	args := make(Args, len(raw))
	for _, k := range keys {
		if k == "action" || raw[k] == nil {
			continue
		}
		v, err := checkArg(t, a, raw, k)
		if err != nil {
			return nil, nil, err
		}
		args[k] = v
	}
	if err := checkRequired(t, a, args); err != nil {
		return nil, nil, err
	}
	return a, args, nil
}

// resolveAction is the action raw names: MISSING_REQUIRED when "action" is
// absent or null, INVALID_FORMAT when it is not a string (a number literal
// too large for float64 included), UNKNOWN_ACTION (with the closest offered
// names) when t has no such action.
func resolveAction(t *Tool, raw map[string]any) (*Action, *core.Error) {
	av, ok := raw["action"]
	if !ok || av == nil {
		return nil, core.NewError(errcode.MissingRequired, fmt.Sprintf("%s needs an action.", t.Name),
			map[string]any{"field": "action", "allowed": t.OfferedActions()}).
			WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, nil)
	}
	name, ok := av.(string)
	if lit, marked := core.MarkedNumber(name); marked {
		av, ok = lit, false
	}
	if !ok {
		return nil, core.NewError(errcode.InvalidFormat, "action must be a string.",
			map[string]any{"field": "action", "constraint": "string", "received": av, "allowed": t.OfferedActions()})
	}
	a, ok := t.Action(name)
	if !ok {
		return nil, core.NewError(errcode.UnknownAction,
			fmt.Sprintf("%s has no action %q.", t.Name, name),
			map[string]any{"field": "action", "received": name, "allowed": t.OfferedActions()}).
			WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, fuzzy.Rank(name, t.OfferedActions(), 5))
	}
	return a, nil
}

// checkArg checks raw[k], a non-null argument of a parameter the action
// takes, and returns the value the handler gets: a Go number as float64,
// an enum value in its declared case. Its errors: INVALID_FORMAT for a
// number literal float64 cannot hold; a value coerce can fix is refused
// naming the corrected call; any other refusal of checkValue with, when it
// has a recovery without a tool, the action's schema as the next call.
func checkArg(t *Tool, a *Action, raw map[string]any, k string) (any, *core.Error) {
	v := raw[k]
	p, _ := t.Param(k)
	if err := checkMarkedNumbers(k, v); err != nil {
		return nil, err
	}
	if f, ok := goNumber(v); ok && (p.Type == Integer || p.Type == Number || p.Type == IntOrString) {
		v = f // Go callers (the CLI, tests) may pass ints; JSON gives float64
	}
	v = canonicalEnum(p, v)
	err := checkValue(p, v)
	if err == nil {
		return v, nil
	}
	if fixed, ok := coerce(p, v); ok {
		return nil, coercible(t, p, raw, v, fixed)
	}
	if err.Recovery != nil && err.Recovery.Tool == "" {
		err.Recovery.Tool, err.Recovery.Args = "server", schemaCall(t, a.Name)
	}
	return nil, err
}

// checkRequired is MISSING_REQUIRED for the first of a's required
// parameters args lacks, naming the action and its schema as the next call.
func checkRequired(t *Tool, a *Action, args Args) *core.Error {
	for _, r := range a.Required {
		if !args.Has(r) {
			return core.NewError(errcode.MissingRequired,
				fmt.Sprintf("%s action %q needs %q.", t.Name, a.Name, r),
				map[string]any{"field": r, "action": a.Name, "required": a.Required}).
				WithRecovery("server", schemaCall(t, a.Name), nil)
		}
	}
	return nil
}

// checkNames reports the first of keys (sorted) that the tool lacks
// (closest names, the action's first) or the action does not take, as
// UNKNOWN_PARAMETER.
func checkNames(t *Tool, a *Action, raw map[string]any, keys []string) *core.Error {
	for _, k := range keys {
		if k == "action" || raw[k] == nil {
			continue
		}
		if _, known := t.Param(k); !known {
			return unknownParameter(t, a, raw, k, fmt.Sprintf("%s has no parameter %q.", t.Name, k), renames(t, a, raw, k))
		}
		if !a.takes(k) {
			return unknownParameter(t, a, raw, k, fmt.Sprintf("%s action %q does not take %q.", t.Name, a.Name, k), renames(t, a, raw, k))
		}
	}
	return nil
}

// unknownParameter is UNKNOWN_PARAMETER for key k: with close names the
// call has not used (matches), the action's schema as the next call; with
// none, the same call without k.
func unknownParameter(t *Tool, a *Action, raw map[string]any, k, msg string, matches []string) *core.Error {
	e := core.NewError(errcode.UnknownParameter, msg, map[string]any{"field": k, "action": a.Name, "allowed": a.Params()})
	if len(matches) == 0 {
		return e.WithRecovery(t.Name, withoutKey(t, raw, k), nil)
	}
	return e.WithRecovery("server", schemaCall(t, a.Name), matches)
}

// renames are the names an unknown parameter k may have been meant as: the
// action's parameters closest to k that the call has not used and that
// take k's value (as given, or converted as coerce would). A name the
// action does not take, one the call already has, or one that would refuse
// the value only leads to another refusal, or loses a value, so none is
// offered.
func renames(t *Tool, a *Action, raw map[string]any, k string) []string {
	var out []string
	for _, m := range absent(fuzzy.Rank(k, a.Params(), 5), raw) {
		p, _ := t.Param(m)
		v := raw[k]
		if f, ok := goNumber(v); ok {
			v = f
		}
		if _, ok := coerce(p, v); ok || checkValue(p, canonicalEnum(p, v)) == nil {
			out = append(out, m)
		}
	}
	return out
}

func checkRequestSize(t *Tool, raw map[string]any) *core.Error {
	total := 0
	for k, v := range raw {
		n, err := marshalledLen(v)
		if err != nil {
			return core.NewError(errcode.InvalidFormat, fmt.Sprintf("%s is not JSON-encodable.", k),
				map[string]any{"field": k})
		}
		if p, ok := t.Param(k); ok && p.MaxLength > core.MaxStringChars {
			continue // large-text parameters are bounded by their own cap
		}
		total += n + len(k) + 4
	}
	if total > core.MaxRequestBytes {
		return core.RequestTooLarge(total, core.MaxRequestBytes)
	}
	return nil
}

func invalid(p Param, v any, constraint string, extra map[string]any) *core.Error {
	d := map[string]any{"field": p.Name, "constraint": constraint, "received": v}
	for k, x := range extra {
		d[k] = x
	}
	return core.NewError(errcode.InvalidFormat, fmt.Sprintf("%s must be %s.", p.Name, constraint), d)
}

// checkValue checks one argument against its parameter's type and caps.
func checkValue(p Param, v any) *core.Error {
	switch p.Type {
	case String:
		return checkString(p, v)
	case Integer, Number:
		return checkNumber(p, v)
	case IntOrString:
		if _, ok := v.(string); ok {
			return checkString(p, v)
		}
		p.Type = Integer
		return checkNumber(p, v)
	case Boolean:
		if _, ok := v.(bool); !ok {
			return invalid(p, v, "a boolean", nil)
		}
	case Object:
		m, ok := v.(map[string]any)
		if !ok {
			return invalid(p, v, "an object", nil)
		}
		return core.CheckValueCaps(p.Name, m, orDefault(p.MaxLength, core.MaxStringChars))
	case Array:
		return checkArray(p, v)
	}
	return nil
}

// orDefault is n, or def when n is 0 (no cap declared).
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// checkString checks a string argument: length, enum (with fuzzy matches),
// pattern.
func checkString(p Param, v any) *core.Error {
	s, ok := v.(string)
	if !ok {
		return invalid(p, v, "a string", nil)
	}
	limit := orDefault(p.MaxLength, core.MaxStringChars)
	n := utf8.RuneCountInString(s)
	if n > limit {
		return core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("%s has %d characters; the limit is %d.", p.Name, n, limit),
			map[string]any{"field": p.Name, "constraint": "max characters", "limit": limit, "received": n})
	}
	if n < p.MinLength {
		return invalid(p, v, fmt.Sprintf("at least %d characters", p.MinLength), nil)
	}
	if len(p.Enum) > 0 && !contains(p.Enum, s) {
		return invalid(p, v, "one of "+strings.Join(p.Enum, ", "), map[string]any{"allowed": p.Enum}).
			WithRecovery("", nil, enumMatches(p, s))
	}
	if p.Pattern != "" && !patternMatches(p.Pattern, s) {
		return invalid(p, v, "a string matching "+p.Pattern, nil)
	}
	return nil
}

// checkNumber checks a number argument: an integer parameter takes no
// fraction and nothing outside int64 (never wrapped); then the bounds.
func checkNumber(p Param, v any) *core.Error {
	f, ok := v.(float64)
	if !ok {
		return invalid(p, v, "a "+string(p.Type), nil)
	}
	if p.Type == Integer {
		if err := checkInteger(p, v, f); err != nil {
			return err
		}
	}
	if p.Min != nil && f < *p.Min {
		return invalid(p, v, fmt.Sprintf("≥ %v", *p.Min), nil)
	}
	if p.Max != nil && f > *p.Max && !p.Clamp {
		return invalid(p, v, fmt.Sprintf("≤ %v", *p.Max), nil)
	}
	return nil
}

// checkInteger refuses f, the value v of an integer parameter, when it has
// a fraction or lies outside int64 (never wrapped).
func checkInteger(p Param, v any, f float64) *core.Error {
	if f != math.Trunc(f) || math.IsInf(f, 0) {
		return invalid(p, v, "an integer", nil)
	}
	if f < minInt64 || f >= maxInt64Plus1 {
		// Shown as the exact integer decoded (9223372036854775807 arrives
		// as 2⁶³), not float64's shortest form 9223372036854776000.
		received := any(v)
		if math.Abs(f) < 1e21 {
			received = json.Number(strconv.FormatFloat(f, 'f', 0, 64))
		}
		return invalid(p, received, "an integer between -9223372036854775808 and 9223372036854775807", nil)
	}
	return nil
}

// checkArray checks an array argument: item count, each item's type, and
// the caps of what it holds.
func checkArray(p Param, v any) *core.Error {
	l, ok := v.([]any)
	if !ok {
		return invalid(p, v, "an array", nil)
	}
	limit := orDefault(p.MaxItems, core.MaxArrayItems)
	if len(l) > limit {
		return core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("%s has %d items; the limit is %d.", p.Name, len(l), limit),
			map[string]any{"field": p.Name, "constraint": "max items", "limit": limit, "received": len(l)})
	}
	for i, e := range l {
		if p.Items != "" {
			if err := checkValue(Param{Name: fmt.Sprintf("%s[%d]", p.Name, i), Type: p.Items, MaxLength: p.MaxLength, Pattern: p.Pattern}, e); err != nil {
				return err
			}
		}
	}
	return core.CheckValueCaps(p.Name, l, orDefault(p.MaxLength, core.MaxStringChars))
}

// The int64 range as float64 bounds: -2⁶³ is exact; 2⁶³ is the first float64
// above math.MaxInt64 (which itself rounds up to 2⁶³).
const (
	minInt64      = -(1 << 63)
	maxInt64Plus1 = 1 << 63
)

// checkMarkedNumbers walks v for the stand-ins the transport writes for number
// literals a float64 cannot hold (core.MarkUnrepresentableNumbers) and
// reports the first as INVALID_FORMAT naming its path and the literal.
func checkMarkedNumbers(path string, v any) *core.Error {
	switch x := v.(type) {
	case string:
		if lit, ok := core.MarkedNumber(x); ok {
			return core.NewError(errcode.InvalidFormat,
				fmt.Sprintf("%s must be a number a 64-bit float can hold; %s is out of range.", path, lit),
				map[string]any{"field": path, "constraint": "a number within ±1.7976931348623157e308", "received": lit})
		}
	case []any:
		for i, e := range x {
			if err := checkMarkedNumbers(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if err := checkMarkedNumbers(path+"."+k, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// canonicalEnum returns the declared spelling of an enum value given in
// another letter case; any other value unchanged.
func canonicalEnum(p Param, v any) any {
	s, ok := v.(string)
	if !ok || len(p.Enum) == 0 || contains(p.Enum, s) {
		return v
	}
	for _, e := range p.Enum {
		if strings.EqualFold(e, s) {
			return e
		}
	}
	return v
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// goNumber converts Go integer and float kinds (and json.Number) to float64.
func goNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// patterns caches compiled Param.Pattern expressions: declarations are
// fixed at start-up, so the cache holds one entry per distinct pattern.
var patterns sync.Map // string → *regexp.Regexp

// patternMatches reports whether s matches the declared pattern p.
func patternMatches(p, s string) bool {
	re, ok := patterns.Load(p)
	if !ok {
		re, _ = patterns.LoadOrStore(p, regexp.MustCompile(p))
	}
	return re.(*regexp.Regexp).MatchString(s)
}
