package mcptool

import (
	"fmt"
	"reflect"

	"github.com/specd/specd/core"
)

// Target is an action an answer or a refusal may name as the next call:
// Tool's action Action, whose typed arguments (the struct its Typed handler
// binds) are T. A call built from a Target names only parameters the action
// declares, by construction: the field names are checked by the compiler and
// the arg tags are the ones Registry.Add held to the declaration. CheckTarget
// holds T to the action's own argument struct.
type Target[T any] struct {
	Tool, Action string
}

// Call is the call of t with arguments a (Args).
func (t Target[T]) Call(a T) core.NextCall {
	return core.NextCall{Tool: t.Tool, Args: t.Args(a)}
}

// Args is the argument object of the call of t with arguments a: "action"
// and the fields a gives (ArgsOf).
func (t Target[T]) Args(a T) map[string]any {
	out := ArgsOf(a)
	out["action"] = t.Action
	return out
}

// ArgsOf is the argument object a gives, without "action": every field of
// a (a struct with arg tags, as Typed binds) that is given, by its arg tag.
// A field is given when it is not its type's zero value (a nil pointer is
// absent; a pointer to a zero value is given as that value), so false or 0
// is given only through a pointer field, as Bind reads them. A zero a gives
// {}: the call without arguments. An action's example (Action.Example) is
// ArgsOf a value of its own argument struct.
func ArgsOf[T any](a T) map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(a)
	for _, f := range argFields(v.Type()) {
		x := v.FieldByIndex(f.index)
		if x.IsZero() {
			continue
		}
		if x.Kind() == reflect.Pointer {
			x = x.Elem()
		}
		out[f.name] = x.Interface()
	}
	return out
}

// Names is t's tool and action.
func (t Target[T]) Names() (tool, action string) { return t.Tool, t.Action }

// ArgsType is T.
func (t Target[T]) ArgsType() reflect.Type { return reflect.TypeFor[T]() }

// CallTarget is any Target, for CheckTarget.
type CallTarget interface {
	Names() (tool, action string)
	ArgsType() reflect.Type
}

// CheckTarget reports how t disagrees with the registry: a tool or action
// it does not serve, an action without typed arguments, or arguments of
// another type than the action's own struct (so every call t builds binds
// as the action's handler reads it).
func (r *Registry) CheckTarget(t CallTarget) error {
	tool, action := t.Names()
	tl, ok := r.Tool(tool)
	if !ok {
		return fmt.Errorf("%s %s: no tool %q", tool, action, tool)
	}
	a, ok := tl.Action(action)
	if !ok || a.Name != action {
		return fmt.Errorf("%s %s: no action %q", tool, action, action)
	}
	if a.Typed == nil {
		return fmt.Errorf("%s %s: the action has no typed arguments", tool, action)
	}
	if got, want := t.ArgsType(), a.Typed.argsType(); got != want {
		return fmt.Errorf("%s %s: call arguments %v, the action binds %v", tool, action, got, want)
	}
	return nil
}
