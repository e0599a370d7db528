package mcptool

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// An action's arguments are bound once, at the door: Dispatch validates the
// raw arguments against the tool's declaration (Validate: names, types,
// enums, bounds, the refusals and their recovery), then a typed action
// (Action.Typed) receives them as one struct, T, whose fields carry the
// published parameter names in `arg` tags:
//
//	type taskNextArgs struct {
//		SpecID string `arg:"spec_id,required"`
//		Claim  bool   `arg:"claim"`
//	}
//
// Field types and the parameter types they bind (CheckArgs holds the
// declaration and the struct to this table, so the two cannot drift):
//
//	string, *string            string (or a string enum; *string: nil when absent)
//	bool, *bool                boolean (*bool: nil when absent)
//	int, *int                  integer (*int: nil when absent)
//	float64, *float64          number (*float64: nil when absent)
//	[]string                   array of strings
//	[]any                      array of anything else
//	map[string]any             object
//	any                        integer|string (as validated: float64 or string)
//
// An absent or null parameter binds the zero value. Anonymous struct fields
// without a tag are flattened, so arguments shared by many actions (the
// spec id, dry_run and expected_version) are declared once and embedded.

// TypedHandler is an action's handler over its typed arguments (Typed).
type TypedHandler interface {
	argsType() reflect.Type
	handler() Handler
}

type typed[T any] func(ctx context.Context, r *Request, a T) Result

func (h typed[T]) argsType() reflect.Type { return reflect.TypeFor[T]() }

func (h typed[T]) handler() Handler {
	return func(ctx context.Context, r *Request) Result { return h(ctx, r, Bind[T](r.Args)) }
}

// Typed makes h an action's handler: the call's validated arguments are
// bound to T (Bind) before h runs. Registry.Add checks T against the
// action's declared parameters (CheckArgs) and panics at start-up when they
// disagree.
func Typed[T any](h func(ctx context.Context, r *Request, a T) Result) TypedHandler {
	return typed[T](h)
}

// argField is one bound field: its index path in the struct, the parameter
// it binds and whether the parameter is required.
type argField struct {
	index    []int
	name     string
	required bool
	typ      reflect.Type
}

var stringType = reflect.TypeFor[string]()

var argPlans sync.Map // reflect.Type → []argField

// argFields lists the tagged fields of struct type t, embedded structs
// flattened, in declaration order.
func argFields(t reflect.Type) []argField {
	if p, ok := argPlans.Load(t); ok {
		return p.([]argField)
	}
	var out []argField
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			index := append(slices.Clone(prefix), i)
			tag, ok := f.Tag.Lookup("arg")
			if !ok {
				if f.Anonymous && f.Type.Kind() == reflect.Struct {
					walk(f.Type, index)
				}
				continue
			}
			name, opt, _ := strings.Cut(tag, ",")
			out = append(out, argField{index: index, name: name, required: opt == "required", typ: f.Type})
		}
	}
	walk(t, nil)
	argPlans.Store(t, out)
	return out
}

// Bind is a's parameters as T (a struct with `arg` tags; see Typed). The
// arguments are the validator's: every type was checked there, so binding
// only converts, and an absent parameter is the field's zero value.
func Bind[T any](a Args) T {
	var out T
	v := reflect.ValueOf(&out).Elem()
	for _, f := range argFields(v.Type()) {
		if f.typ == stringType { // the common case, set without boxing the value
			if a.Has(f.name) {
				v.FieldByIndex(f.index).SetString(a.String(f.name))
			}
			continue
		}
		if x, ok := bindValue(a, f.name, f.typ); ok {
			v.FieldByIndex(f.index).Set(x)
		}
	}
	return out
}

// bindValue is parameter name of a as a value of type t, or false when
// absent (or, for an integer, not representable as int).
func bindValue(a Args, name string, t reflect.Type) (reflect.Value, bool) {
	b, ok := binders[t]
	if !ok || !a.Has(name) {
		return reflect.Value{}, false
	}
	if t.Kind() == reflect.Pointer {
		x, ok := bindValue(a, name, t.Elem())
		if !ok {
			return x, false
		}
		p := reflect.New(t.Elem())
		p.Elem().Set(x)
		return p, true
	}
	x, ok := b.get(a, name)
	if !ok {
		return reflect.Value{}, false
	}
	return reflect.ValueOf(&x).Elem().Elem().Convert(t), true
}

// binder is how a field type binds: the parameter type it takes and how
// its value is read from the validated arguments (false: absent).
type binder struct {
	param ParamType
	get   func(a Args, name string) (any, bool)
}

// binders are the field types Bind fills (see the table at the top).
var binders = map[reflect.Type]binder{
	reflect.TypeFor[string]():         {String, func(a Args, n string) (any, bool) { return a.String(n), true }},
	reflect.TypeFor[bool]():           {Boolean, func(a Args, n string) (any, bool) { return a.Bool(n), true }},
	reflect.TypeFor[int]():            {Integer, func(a Args, n string) (any, bool) { return a.Int(n) }},
	reflect.TypeFor[float64]():        {Number, func(a Args, n string) (any, bool) { return a.Float(n) }},
	reflect.TypeFor[[]string]():       {Array, func(a Args, n string) (any, bool) { return a.Strings(n), true }},
	reflect.TypeFor[[]any]():          {Array, func(a Args, n string) (any, bool) { return a.List(n), true }},
	reflect.TypeFor[map[string]any](): {Object, func(a Args, n string) (any, bool) { return a.Object(n), true }},
	reflect.TypeFor[any]():            {IntOrString, func(a Args, n string) (any, bool) { return a[n], true }},
	reflect.TypeFor[*string]():        {String, nil},
	reflect.TypeFor[*bool]():          {Boolean, nil},
	reflect.TypeFor[*int]():           {Integer, nil},
	reflect.TypeFor[*float64]():       {Number, nil},
}

var typeStrings = reflect.TypeFor[[]string]()

// paramTypeOf is the parameter type field type t binds, false for a type
// Bind cannot fill.
func paramTypeOf(t reflect.Type) (ParamType, bool) {
	b, ok := binders[t]
	return b.param, ok
}

// CheckArgs reports how a's typed arguments disagree with the tool's
// declaration: a field naming a parameter the action does not take, a
// parameter with no field, a field required where the parameter is
// optional (or the reverse), a field whose type does not bind the
// parameter's. nil for an action that is not typed.
func (t *Tool) CheckArgs(a *Action) error {
	if a.Typed == nil {
		return nil
	}
	rt := a.Typed.argsType()
	if rt.Kind() != reflect.Struct {
		return fmt.Errorf("action %q: arguments %v are not a struct", a.Name, rt)
	}
	fields := argFields(rt)
	bound := map[string]bool{}
	for _, f := range fields {
		if bound[f.name] {
			return fmt.Errorf("action %q: %v binds %q twice", a.Name, rt, f.name)
		}
		bound[f.name] = true
		if err := t.checkField(a, f); err != nil {
			return fmt.Errorf("action %q: %v: %w", a.Name, rt, err)
		}
	}
	for _, p := range a.Params() {
		if !bound[p] {
			return fmt.Errorf("action %q: %v has no field for parameter %q", a.Name, rt, p)
		}
	}
	return nil
}

// checkField checks one field against the parameter it names.
func (t *Tool) checkField(a *Action, f argField) error {
	if !a.takes(f.name) {
		return fmt.Errorf("field for %q, a parameter the action does not take", f.name)
	}
	if req := slices.Contains(a.Required, f.name); req != f.required {
		return fmt.Errorf("%q: field required=%v, declaration required=%v", f.name, f.required, req)
	}
	p, _ := t.Param(f.name)
	pt, ok := paramTypeOf(f.typ)
	if !ok || pt != p.Type {
		return fmt.Errorf("%q: field of type %v cannot bind a parameter of type %s", f.name, f.typ, p.Type)
	}
	if pt == Array && (f.typ == typeStrings) != (p.Items == String) {
		return fmt.Errorf("%q: field of type %v cannot bind an array of %q", f.name, f.typ, p.Items)
	}
	return nil
}

// bindTyped gives every typed action its Handler (replacing any) and checks its arguments
// against the declaration.
func (t *Tool) bindTyped() error {
	for i := range t.Actions {
		a := &t.Actions[i]
		if a.Typed == nil {
			continue
		}
		if err := t.CheckArgs(a); err != nil {
			return err
		}
		a.Handler = a.Typed.handler()
	}
	return nil
}

// ArgField describes one field of a typed action's arguments: the
// parameter it binds, whether the struct says it is required, and the
// JSON Schema type (and, for arrays, item type: "string" or "") its Go type
// binds.
type ArgField struct {
	Name     string
	Required bool
	Type     ParamType
	Items    ParamType
}

// ArgFields lists the fields of h's argument struct in declaration order
// (embedded structs flattened), for tests that hold the struct to the
// published schema; nil when h is nil.
func ArgFields(h TypedHandler) []ArgField {
	if h == nil {
		return nil
	}
	var out []ArgField
	for _, f := range argFields(h.argsType()) {
		pt, _ := paramTypeOf(f.typ)
		af := ArgField{Name: f.name, Required: f.required, Type: pt}
		if f.typ == typeStrings {
			af.Items = String
		}
		out = append(out, af)
	}
	return out
}
