package mcptool

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

// How a refusal names its fix (README: "What an agent can rely on to recover"). An agent that reads only
// recovery (suggested_tool, suggested_args, fuzzy_matches) and
// details.field/received must be able to recover without reading English:
//
//   - a value of the wrong type that converts to the right one ("5" for an
//     integer, "yes" for a boolean) is refused with the corrected call as
//     recovery (coerce);
//   - an enum value that is a synonym of a declared one offers it first
//     (Param.Synonyms), before edit-distance matches;
//   - an action the tool lacks but another tool has is refused with that
//     tool's call, same arguments (Registry.elsewhere);
//   - a parameter fuzzy match never offers a key the call already has, and
//     an unknown key with no close match is refused with the same call
//     without it;
//   - a missing required parameter names the call that lists its
//     candidates, or the corrected call when exactly one fits (Candidates);
//   - schema suggestions name the action (action_name), so the agent reads
//     one action's contract, not the tool's;
//   - a handler's refusal that names the fixing value
//     (details.suggested_value for details.field) is refused with the
//     corrected call (corrected).

// synonymKey is the form of a Param.Synonyms key: lower case, with '_' for
// '-' and ' '.
func synonymKey(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// enumMatches ranks s against p's enum: the value s is a synonym of first,
// then the closest by edit distance; at most 5.
func enumMatches(p Param, s string) []string {
	var out []string
	if v, ok := p.Synonyms[synonymKey(s)]; ok {
		out = append(out, v)
	}
	for _, m := range fuzzy.Rank(s, p.Enum, 5) {
		if len(out) < 5 && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// coerce converts v to p's type when v is the right value in the wrong
// type: a number written as a string for a number, a boolean word ("true",
// "yes", "on", "1", and their opposites) or 0/1 for a boolean; or in the
// wrong form: a string p.Convert converts. ok is false
// when no conversion applies or the converted value is still refused. A
// number given for a string (an id such as 42) is not converted: that is
// rarely the value meant.
func coerce(p Param, v any) (any, bool) {
	out, ok := convert(p, v)
	if !ok {
		return nil, false
	}
	out = canonicalEnum(p, out)
	if checkValue(p, out) != nil {
		return nil, false
	}
	return out, true
}

// convert is coerce's conversion of v to p's type, before the converted
// value is checked.
func convert(p Param, v any) (any, bool) {
	switch p.Type {
	case Integer, Number:
		return numberFromString(v)
	case Boolean:
		return boolFromWord(v)
	case String:
		s, ok := v.(string)
		if !ok || p.Convert == nil {
			return nil, false
		}
		return p.Convert(s)
	}
	return nil, false
}

// numberFromString parses a finite number written as a string (spaces
// around it allowed).
func numberFromString(v any) (any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, false
	}
	return f, true
}

// boolWords are the words boolFromWord reads as a boolean (in any letter
// case, spaces around them allowed).
var boolWords = map[string]bool{
	"true": true, "yes": true, "y": true, "on": true, "1": true,
	"false": false, "no": false, "n": false, "off": false, "0": false,
}

// boolFromWord reads one of boolWords, or the number 1 or 0, as a boolean.
func boolFromWord(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		b, ok := boolWords[strings.ToLower(strings.TrimSpace(x))]
		return b, ok
	case float64:
		return x == 1, x == 1 || x == 0
	}
	return nil, false
}

// callArgs is the call as the client sent it (every non-null argument,
// "action" included), for a recovery that corrects it.
func callArgs(raw map[string]any) map[string]any {
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// coercible is the refusal of a value of the wrong type that converts to
// the right one: INVALID_FORMAT as before, with the corrected call (the
// converted value in place) as recovery and the value in
// details.suggested_value.
func coercible(t *Tool, p Param, raw map[string]any, v, fixed any) *core.Error {
	corrected := callArgs(raw)
	corrected[p.Name] = fixed
	return invalid(p, v, "a "+string(p.Type), map[string]any{"suggested_value": fixed}).
		WithRecovery(t.Name, corrected, nil)
}

// corrected is a handler's refusal e with the corrected call as its
// recovery when e names the value that fixes it: details.field, an
// argument of a that the call gave, and details.suggested_value (a domain
// fact, e.g. version "v1" → 1). The call as sent with that value in place
// wins over any lookup the refusal named.
func corrected(t *Tool, a *Action, raw map[string]any, e *core.Error) *core.Error {
	field, _ := e.Details["field"].(string)
	v, ok := e.Details["suggested_value"]
	if !ok || v == nil || field == "" || raw[field] == nil || !a.takes(field) {
		return e
	}
	args := callArgs(raw)
	args[field] = v
	return e.WithRecovery(t.Name, args, e.Matches())
}

// schemaCall is the recovery that reads the contract of t's action (the
// whole tool's when action is "").
func schemaCall(t *Tool, action string) map[string]any {
	args := map[string]any{"action": "schema", "tool_name": t.Name}
	if action != "" {
		args["action_name"] = action
	}
	return args
}

// withoutKey is the recovery of an unknown parameter that matches nothing:
// the same call without it.
func withoutKey(t *Tool, raw map[string]any, key string) map[string]any {
	out := callArgs(raw)
	delete(out, key)
	return out
}

// absent drops from matches the names the call already has: renaming a
// key to one that is present would lose a value.
func absent(matches []string, raw map[string]any) []string {
	return slices.DeleteFunc(matches, func(m string) bool { return raw[m] != nil })
}

// elsewhere is the recovery of an action t lacks: the call of the one other
// tool that offers the action (preferring, among several, the one whose
// action takes every argument given), with the same arguments; ok false
// when no tool, or more than one equally, has it.
func (r *Registry) elsewhere(t *Tool, name string, raw map[string]any) (string, bool) {
	var has, fits []string
	for _, o := range r.Tools() {
		if o == t {
			continue
		}
		a, ok := o.Action(name)
		if !ok || !o.offered(a) {
			continue
		}
		has = append(has, o.Name)
		if _, untaken := a.argFit(raw); untaken == 0 {
			fits = append(fits, o.Name)
		}
	}
	switch {
	case len(fits) == 1:
		return fits[0], true
	case len(fits) == 0 && len(has) == 1:
		return has[0], true
	}
	return "", false
}

// Candidates names what could fill a required parameter a call left out:
// the values that fit (values) and the call that lists them (listTool with
// listArgs, "action" included; "" for none). A refusal for the missing
// parameter names the corrected call when exactly one value fits, else the
// listing call.
type Candidates func(ctx context.Context, tool, action, param string, args Args) (values []string, listTool string, listArgs map[string]any)

// CandidatesWith makes c name the candidates of missing required
// parameters (see Candidates). Call it at start-up, before the registry
// serves calls.
func (r *Registry) CandidatesWith(c Candidates) { r.candidates = c }

// heal gives a validation refusal the next call that fixes it where the
// validator alone cannot: the tool that has the action (UNKNOWN_ACTION),
// the candidates of a missing parameter (MISSING_REQUIRED).
func (r *Registry) heal(ctx context.Context, t *Tool, raw map[string]any, e *core.Error) *core.Error {
	field, _ := e.Details["field"].(string)
	switch e.Code {
	case errcode.UnknownAction:
		name, _ := raw["action"].(string)
		if other, ok := r.elsewhere(t, name, raw); ok {
			e.Message += fmt.Sprintf(" %s has it: call %s with the same arguments.", other, other)
			e.Details["tool"] = other
			return e.WithRecovery(other, callArgs(raw), nil)
		}
	case errcode.MissingRequired:
		if r.candidates != nil && field != "" && field != "action" {
			return r.withCandidates(ctx, t, raw, field, e)
		}
	}
	return e
}

// withCandidates gives e, MISSING_REQUIRED for field, the candidates of
// field as next call: with exactly one value, the call with it filled in;
// with a listing call, that call (and the first 20 values in
// details.candidates); else e unchanged.
func (r *Registry) withCandidates(ctx context.Context, t *Tool, raw map[string]any, field string, e *core.Error) *core.Error {
	action, _ := raw["action"].(string)
	values, listTool, listArgs := r.candidates(ctx, t.Name, action, field, Args(callArgs(raw)))
	switch {
	case len(values) == 1:
		corrected := callArgs(raw)
		corrected[field] = values[0]
		return e.WithDetail("candidates", values).WithRecovery(t.Name, corrected, values)
	case listTool != "":
		if len(values) > 0 {
			e = e.WithDetail("candidates", values[:min(len(values), 20)])
		}
		return e.WithRecovery(listTool, listArgs, nil)
	}
	return e
}

// forbidden adds to a role's FORBIDDEN the calls the role may make: the
// actions of t it is permitted (details.allowed), and as recovery the one
// of them that takes the most of the call's arguments and has every
// required one among them (the first declared on a tie), with the call's
// arguments it takes — a read about what the agent meant to change; else
// server context.
func (rt *Runtime) forbidden(ctx context.Context, t *Tool, raw map[string]any, e *core.Error) *core.Error {
	var allowed []string
	var next *Action
	best := -1
	for i := range t.Actions {
		a := &t.Actions[i]
		if !t.offered(a) || rt.permit(ctx, t, a) != nil {
			continue
		}
		allowed = append(allowed, a.Name)
		if taken, _ := a.argFit(raw); a.hasRequired(raw) && taken > best {
			next, best = a, taken
		}
	}
	e = e.WithDetail("allowed", allowed)
	if next == nil {
		return e.WithRecovery("server", map[string]any{"action": "context"}, nil)
	}
	return e.WithRecovery(t.Name, next.callWith(raw), nil)
}

// argFit counts the arguments of raw (the non-null ones, "action" aside)
// that a takes and those it does not.
func (a *Action) argFit(raw map[string]any) (taken, untaken int) {
	for k, v := range raw {
		switch {
		case k == "action" || v == nil:
		case a.takes(k):
			taken++
		default:
			untaken++
		}
	}
	return taken, untaken
}

// hasRequired reports whether raw has a non-null value for every required
// parameter of a.
func (a *Action) hasRequired(raw map[string]any) bool {
	for _, p := range a.Required {
		if raw[p] == nil {
			return false
		}
	}
	return true
}

// callWith is the call of a with the arguments of raw it takes.
func (a *Action) callWith(raw map[string]any) map[string]any {
	args := map[string]any{"action": a.Name}
	for k, v := range raw {
		if v != nil && a.takes(k) {
			args[k] = v
		}
	}
	return args
}

// rateLimited makes RATE_LIMIT_EXCEEDED name its next call: the same call,
// after details.retry_after_ms (also a top-level data key).
func rateLimited(tool string, raw map[string]any, e *core.Error) *core.Error {
	if _, ok := e.Details["retry_after_ms"]; !ok {
		if s, ok := e.Details["retry_after_seconds"].(int); ok {
			e = e.WithDetail("retry_after_ms", s*1000)
		}
	}
	if ms, ok := e.Details["retry_after_ms"]; ok {
		extra := maps.Clone(e.Extra)
		if extra == nil {
			extra = map[string]any{}
		}
		extra["retry_after_ms"] = ms
		e.Extra = extra
	}
	return e.WithRecovery(tool, callArgs(raw), nil)
}
