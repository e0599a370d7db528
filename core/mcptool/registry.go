// Package mcptool turns tables of actions into MCP tools. Each tool is
// declared once as data (Tool, Action, Param): its actions and, per action,
// its parameters, side effects, idempotence, latency hint and flag gate.
// From that declaration this package derives the flat input schema and the
// honest annotations of tools/list, the per-action schema of server
// schema, the one argument validator and the dispatch into response-v2
// envelopes (Registry.Dispatch), with everything every call shares:
// deadlines, feature-flag gates, read-only refusals, rate limits and roles
// (Access), the token budget and its degradation (Degrader, ListAnswer),
// pages (OpenPage), the recovery of every failure, the legacy v1 wire shape
// and the error record. It names no specd tool and imports no domain
// package: the tools themselves live in package tools.
package mcptool

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/specd/specd/core"
)

// ParamType is a JSON Schema primitive type.
type ParamType string

// Parameter types.
const (
	String  ParamType = "string"
	Integer ParamType = "integer"
	Number  ParamType = "number"
	Boolean ParamType = "boolean"
	Object  ParamType = "object"
	Array   ParamType = "array"
	// IntOrString is an integer or a string (schema type ["integer","string"]),
	// e.g. a version given as a number or as a timestamp.
	IntOrString ParamType = "integer|string"
)

// Side effects of an action, as server schema reports them; a tool's MCP
// annotations are the most cautious over its actions.
const (
	EffectNone  = "none"
	EffectRead  = "read"
	EffectWrite = "write"
)

// Latency hints: fast < 100 ms, moderate < 1 s, slow otherwise.
const (
	LatencyFast     = "fast"
	LatencyModerate = "moderate"
	LatencySlow     = "slow"
)

// Param declares one parameter of a tool. A parameter is shared by every
// action that lists it.
type Param struct {
	Name        string
	Type        ParamType
	Description string
	Enum        []string // closed set of string values
	// Synonyms maps words agents use for enum values to the declared value
	// ("done" → "completed"); keys are lower case with '_' for '-' and ' '.
	// A refused value that is a synonym offers its value first in
	// recovery.fuzzy_matches, before edit-distance matches. Declare the
	// table beside the enum's own declaration; every value must be in Enum.
	Synonyms  map[string]string
	Min, Max  *float64  // numeric bounds
	MaxLength int       // max characters for strings (0 = core.MaxStringChars)
	MinLength int       // min characters for strings
	MaxItems  int       // max items for arrays (0 = core.MaxArrayItems)
	Items     ParamType // element type of arrays ("" = any)
	Pattern   string    // regular expression for strings
	// Clamp: a number above Max is lowered to Max with a meta.warnings
	// entry (LIMIT_CLAMPED) instead of refused, as foundry-mcp does for page
	// sizes; tools/list then publishes no maximum, the description names it.
	Clamp bool
	// Convert turns a string the parameter refuses into the value the
	// caller meant, when it is that value in another form (a query's text
	// given for its query_hash → the hash); ok false when it is not. A
	// refused value that converts is refused with the corrected call, as a
	// value of the wrong type is.
	Convert func(s string) (string, bool)
}

// Action declares one action of a tool.
type Action struct {
	Name        string
	Summary     string   // one sentence, shown by server(action="schema")
	Required    []string // parameter names
	Optional    []string // parameter names
	SideEffects string   // none | read | write
	Idempotent  bool
	Destructive bool // may delete or overwrite data a user cares about
	OpenWorld   bool // talks to things outside specd's store
	Latency     string
	Flag        string // feature flag gating the action ("" = always on)
	// Deadline, when longer than the runtime's deadline, replaces it for
	// this action (long actions such as verification execute); 0 keeps the
	// runtime's.
	Deadline time.Duration
	// Example is a happy-path argument set (without "action") the contract
	// test calls; nil means the action needs state the test cannot make
	// generically and is covered by its own test.
	Example map[string]any
	// Answer is a zero value of the action's typed answer (the struct its
	// handler returns as data, e.g. TaskNextAnswer{}); server(action=
	// "schema") publishes its JSON Schema as answer_schema, generated from
	// the Go type and its json tags, so the shape of every answer is visible
	// in one place. nil: the answer is not typed yet.
	Answer  any
	Handler Handler
	// Typed, instead of Handler, is a handler over a typed argument struct
	// (Typed(h); bind.go): Add derives Handler from it (replacing any), after checking the
	// struct's fields against Required, Optional and the tool's Params.
	Typed TypedHandler
}

// Tool declares one MCP tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Params      []Param
	Actions     []Action
	// Refuse, when set, is asked first about every call, with its raw
	// action argument (before validation, so no argument error hides the
	// refusal): a non-nil error is the call's answer. specd uses it to
	// answer NOT_SUPPORTED, with a recovery, for the foundry-mcp actions it
	// does not offer.
	Refuse   func(action string) *core.Error
	readOnly bool // offer only read actions (--read-only; readonly.go)
}

// Handler runs one validated action. It never returns a Go error for a
// domain failure: it returns a Result whose Err is converted to an envelope.
type Handler func(ctx context.Context, r *Request) Result

// Result is what a handler returns: data on success, or Err (any error;
// *core.Error and domain errors keep their codes, anything else becomes
// INTERNAL_ERROR), plus meta options.
type Result struct {
	Data any
	Err  error
	Meta []core.MetaOption
	// DataMeta is meta that describes Data itself (its content fidelity,
	// what it left out): it goes with Data, so when Degrade replaces Data
	// its meta replaces DataMeta — one cut is reported once.
	DataMeta []core.MetaOption
	// Degrade, when set, says how the answer may shrink when its whole
	// envelope is over the token budget (see answerbudget.go); without it
	// an answer over the budget is PAYLOAD_TOO_LARGE (reads) or cut to
	// reference_only (writes).
	Degrade Degrader
}

// OK is a success result.
func OK(data any, meta ...core.MetaOption) Result { return Result{Data: data, Meta: meta} }

// Fail is a failure result.
func Fail(err error) Result { return Result{Err: err} }

// Request is one validated call.
type Request struct {
	Call    *core.Call
	Args    Args
	Session Session

	archive archiveDecision // ArchiveServed's decision (zero: not made by Dispatch)
}

// Session identifies the caller.
type Session struct {
	ID            string // MCP session id, or a per-process id when the protocol has none
	ClientName    string
	ClientVersion string
	KeyID         string // the API key's id on a shared HTTP server, else ""
	// Holder is the agent identity claims record and compare (started_by):
	// HolderOf(the session), which Dispatch fills when it is empty. It is
	// never the session id, a credential over HTTP.
	Holder string
}

// Param returns the declaration of the parameter called name.
func (t *Tool) Param(name string) (Param, bool) {
	for _, p := range t.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Action finds an action by kebab-case name, its snake_case alias, in any
// letter case (foundry-mcp matches action names case-insensitively:
// "Next", "VERIFICATION_ADD").
//
// foundry's verification tool also takes its actions prefixed with the tool
// name ("verification-add", "verification_execute"): a name that is not an
// action is looked up once more without a "<tool>-" prefix.
func (t *Tool) Action(name string) (*Action, bool) {
	n := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	for _, try := range []string{n, strings.TrimPrefix(n, t.Name+"-")} {
		for i := range t.Actions {
			if t.Actions[i].Name == try {
				return &t.Actions[i], true
			}
		}
	}
	return nil, false
}

// ActionNames lists the tool's actions in declaration order.
func (t *Tool) ActionNames() []string {
	out := make([]string, len(t.Actions))
	for i, a := range t.Actions {
		out[i] = a.Name
	}
	return out
}

// takes reports whether a accepts parameter name.
func (a *Action) takes(name string) bool {
	for _, p := range a.Required {
		if p == name {
			return true
		}
	}
	for _, p := range a.Optional {
		if p == name {
			return true
		}
	}
	return false
}

// Params lists the parameters a takes, required first.
func (a *Action) Params() []string {
	return append(append([]string{}, a.Required...), a.Optional...)
}

// Registry holds every tool. It is built once at start-up and read-only after.
type Registry struct {
	tools  []*Tool
	budget int            // token budget of every answer (0: core.DefaultTokenBudget)
	errors *ErrorRecorder // where error answers are recorded (nil: nowhere)
	narrow Narrower       // the recovery of a read over the budget (nil: none)
	// candidates names the values of a missing required parameter (nil:
	// none; see Candidates).
	candidates Candidates
	archive    [2]string // tool and action serving archived content (ServeArchiveWith)
	steps      StepCalls // the calls that take refusals' domain steps (nil: none)
}

// StepCalls names the call that takes a refusal's domain step (core.Step),
// or false when it knows none; see Registry.StepCallsWith.
type StepCalls func(s *core.Step) (core.NextCall, bool)

// StepCallsWith makes f name the call of every refusal that carries a
// domain step (core.Error.Step) and names no call yet, before the type's
// default (withNextCall) applies. Call it at start-up.
func (r *Registry) StepCallsWith(f StepCalls) { r.steps = f }

// takeStep is e with its step's call, when f names one.
func (r *Registry) takeStep(e *core.Error) *core.Error {
	if e == nil || e.Step == nil || e.NamesCall() || r.steps == nil {
		return e
	}
	if c, ok := r.steps(e.Step); ok {
		return e.WithNext(c, e.Matches())
	}
	return e
}

// NewRegistry is an empty registry whose answers fit budget tokens (0:
// core.DefaultTokenBudget) and whose error answers go to rec (nil: nowhere).
func NewRegistry(budget int, rec *ErrorRecorder) *Registry {
	return &Registry{budget: budget, errors: rec}
}

// NarrowWith makes n name the recovery of a read whose answer is over the
// budget and cannot be paged or given more tokens (see Narrower). Call it
// at start-up, before the registry serves calls.
func (r *Registry) NarrowWith(n Narrower) { r.narrow = n }

// Add registers t after checking its declaration; a malformed declaration is
// a programming error and panics at start-up, never at call time.
func (r *Registry) Add(t *Tool) {
	if err := t.bindTyped(); err != nil {
		panic(fmt.Sprintf("mcptool: %s: %v", t.Name, err))
	}
	if err := t.check(); err != nil {
		panic(fmt.Sprintf("mcptool: %s: %v", t.Name, err))
	}
	for _, o := range r.tools {
		if o.Name == t.Name {
			panic("mcptool: duplicate tool " + t.Name)
		}
	}
	r.tools = append(r.tools, t)
}

// Tools returns the registered tools sorted by name.
func (r *Registry) Tools() []*Tool {
	out := append([]*Tool(nil), r.tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Tool returns the tool called name.
func (r *Registry) Tool(name string) (*Tool, bool) {
	for _, t := range r.tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Names lists the tool names, sorted.
func (r *Registry) Names() []string {
	ts := r.Tools()
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// check reports the first declaration error of t: a parameter declared
// twice or named "action", a synonym that is no enum value or not in
// synonymKey form, a duplicated action or one that fails (*Action).check,
// a parameter no action uses.
func (t *Tool) check() error {
	seen := map[string]bool{}
	for _, p := range t.Params {
		if p.Name == "action" || seen[p.Name] {
			return fmt.Errorf("parameter %q declared twice or reserved", p.Name)
		}
		seen[p.Name] = true
		if err := p.checkSynonyms(); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for _, a := range t.Actions {
		if names[a.Name] {
			return fmt.Errorf("action %q duplicated or not kebab-case", a.Name)
		}
		names[a.Name] = true
		if err := a.check(seen); err != nil {
			return err
		}
	}
	for p := range seen {
		if !slices.ContainsFunc(t.Actions, func(a Action) bool { return a.takes(p) }) {
			return fmt.Errorf("parameter %q is used by no action", p)
		}
	}
	return nil
}

// checkSynonyms refuses a synonym of p that maps to no value of its enum or
// whose key is not in synonymKey form.
func (p Param) checkSynonyms() error {
	for word, v := range p.Synonyms {
		if !slices.Contains(p.Enum, v) || word != synonymKey(word) {
			return fmt.Errorf("parameter %q: synonym %q → %q: not a value of the enum, or a key not in synonymKey form", p.Name, word, v)
		}
	}
	return nil
}

// check refuses an action whose name is not kebab-case, that has no
// handler, whose side effects or latency is not one of the declared
// values, or that uses a parameter not in declared.
func (a *Action) check(declared map[string]bool) error {
	if a.Name != strings.ToLower(a.Name) || strings.Contains(a.Name, "_") {
		return fmt.Errorf("action %q duplicated or not kebab-case", a.Name)
	}
	if a.Handler == nil {
		return fmt.Errorf("action %q has no handler", a.Name)
	}
	if !slices.Contains([]string{EffectNone, EffectRead, EffectWrite}, a.SideEffects) {
		return fmt.Errorf("action %q: side effects %q", a.Name, a.SideEffects)
	}
	if !slices.Contains([]string{LatencyFast, LatencyModerate, LatencySlow}, a.Latency) {
		return fmt.Errorf("action %q: latency %q", a.Name, a.Latency)
	}
	for _, p := range a.Params() {
		if !declared[p] {
			return fmt.Errorf("action %q uses undeclared parameter %q", a.Name, p)
		}
	}
	return nil
}

// WithExamples sets the happy-path examples of several actions from one
// table (placeholders such as "$spec_id" are filled by the contract test's
// fixture). An unknown action name is a programming error.
func (t *Tool) WithExamples(ex map[string]map[string]any) *Tool {
	for name, args := range ex {
		a, ok := t.Action(name)
		if !ok {
			panic("mcptool: example for unknown action " + t.Name + " " + name)
		}
		a.Example = args
	}
	return t
}
