package mcptool

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

type bindShared struct {
	ID string `arg:"id,required"`
}

type bindAll struct {
	bindShared
	Name     string         `arg:"name"`
	Flag     bool           `arg:"flag"`
	Maybe    *bool          `arg:"maybe"`
	N        int            `arg:"n"`
	NP       *int           `arg:"np"`
	F        float64        `arg:"f"`
	FP       *float64       `arg:"fp"`
	Tags     []string       `arg:"tags"`
	Items    []any          `arg:"items"`
	Meta     map[string]any `arg:"meta"`
	Version  any            `arg:"version"`
	Untagged string         // no arg tag: never bound
}

func bindTool(h TypedHandler) *Tool {
	return &Tool{
		Name: "t", Description: "Use this when testing.",
		Params: []Param{
			{Name: "id", Type: String}, {Name: "name", Type: String}, {Name: "flag", Type: Boolean}, {Name: "maybe", Type: Boolean},
			{Name: "n", Type: Integer}, {Name: "np", Type: Integer}, {Name: "f", Type: Number}, {Name: "fp", Type: Number},
			{Name: "tags", Type: Array, Items: String}, {Name: "items", Type: Array, Items: Object}, {Name: "meta", Type: Object},
			{Name: "version", Type: IntOrString},
		},
		Actions: []Action{{
			Name: "do-it", Summary: "does it", Required: []string{"id"},
			Optional:    []string{"name", "flag", "maybe", "n", "np", "f", "fp", "tags", "items", "meta", "version"},
			SideEffects: EffectRead, Latency: LatencyFast, Typed: h,
		}},
	}
}

// A typed action receives the validated arguments as its struct: given
// values converted, absent ones zero (pointers nil), Go ints as numbers.
func TestBindTypedArguments(t *testing.T) {
	var got bindAll
	tool := bindTool(Typed(func(_ context.Context, _ *Request, a bindAll) Result { got = a; return OK(map[string]any{}) }))
	env := dispatch(t, tool, map[string]any{"action": "do-it", "id": "x", "flag": true, "maybe": false, "n": 3, "fp": 1.5,
		"tags": []any{"a", "b"}, "items": []any{map[string]any{"k": 1.0}}, "meta": map[string]any{"m": "v"}, "version": "v1"})
	if env["success"] != true {
		t.Fatalf("call failed: %v", env)
	}
	f := false
	want := bindAll{bindShared: bindShared{ID: "x"}, Flag: true, Maybe: &f, N: 3, FP: ptr(1.5), Tags: []string{"a", "b"},
		Items: []any{map[string]any{"k": 1.0}}, Meta: map[string]any{"m": "v"}, Version: "v1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bound %+v, want %+v", got, want)
	}
	dispatch(t, tool, map[string]any{"action": "do-it", "id": "y", "np": 7, "version": 4})
	if got.NP == nil || *got.NP != 7 || got.Version != 4.0 || got.Maybe != nil || got.FP != nil || got.N != 0 {
		t.Fatalf("bound %+v", got)
	}
}

func ptr[T any](v T) *T { return &v }

// The validator still refuses bad arguments before binding: the handler
// does not run and the refusal is the validator's.
func TestBindAfterValidation(t *testing.T) {
	ran := false
	tool := bindTool(Typed(func(context.Context, *Request, bindAll) Result { ran = true; return OK(nil) }))
	for args, want := range map[string]string{"n": "INVALID_FORMAT", "zz": "UNKNOWN_PARAMETER"} {
		env := dispatch(t, tool, map[string]any{"action": "do-it", "id": "x", args: "nope"})
		if code(env) != want || ran {
			t.Fatalf("%s: got %v (handler ran: %v)", args, env, ran)
		}
	}
	if env := dispatch(t, tool, map[string]any{"action": "do-it"}); code(env) != "MISSING_REQUIRED" || ran {
		t.Fatalf("missing id: %v", env)
	}
}

// CheckArgs (and so Registry.Add) refuses a struct that disagrees with the
// declaration in names, types or required-ness.
func TestCheckArgsCatchesDrift(t *testing.T) {
	type missing struct {
		ID string `arg:"id,required"`
	}
	type extra struct {
		bindAll
		X string `arg:"x"`
	}
	type notRequired struct {
		ID string `arg:"id"`
	}
	type wrongType struct {
		bindAll
		N string `arg:"n"`
	}
	type shadowing struct {
		bindShared
		ID2 string `arg:"id,required"`
	}
	type wrongItems struct {
		bindShared
		Name    string         `arg:"name"`
		Flag    bool           `arg:"flag"`
		Maybe   *bool          `arg:"maybe"`
		N       int            `arg:"n"`
		NP      *int           `arg:"np"`
		F       float64        `arg:"f"`
		FP      *float64       `arg:"fp"`
		Tags    []any          `arg:"tags"`
		Items   []any          `arg:"items"`
		Meta    map[string]any `arg:"meta"`
		Version any            `arg:"version"`
	}
	cases := map[string]TypedHandler{
		"has no field for parameter": Typed(func(context.Context, *Request, missing) Result { return Result{} }),
		"does not take":              Typed(func(context.Context, *Request, extra) Result { return Result{} }),
		"declaration required=true":  Typed(func(context.Context, *Request, notRequired) Result { return Result{} }),
		"binds \"n\" twice":          Typed(func(context.Context, *Request, wrongType) Result { return Result{} }),
		"binds \"id\" twice":         Typed(func(context.Context, *Request, shadowing) Result { return Result{} }),
		"cannot bind an array":       Typed(func(context.Context, *Request, wrongItems) Result { return Result{} }),
	}
	for want, h := range cases {
		tool := bindTool(h)
		err := tool.CheckArgs(&tool.Actions[0])
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	type stringN struct {
		ID   string `arg:"id,required"`
		Name string `arg:"name"`
		Flag bool   `arg:"flag"`
	}
	tool := bindTool(Typed(func(context.Context, *Request, bindAll) Result { return Result{} }))
	tool.Actions[0].Optional = []string{"name", "flag"}
	tool.Params[1].Type = Integer
	tool.Actions[0].Typed = Typed(func(context.Context, *Request, stringN) Result { return Result{} })
	if err := tool.CheckArgs(&tool.Actions[0]); err == nil || !strings.Contains(err.Error(), "cannot bind a parameter of type integer") {
		t.Errorf("wrong type: got %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Registry.Add accepted a typed action whose struct disagrees with its declaration")
		}
	}()
	(&Registry{}).Add(tool)
}

// BenchmarkBind measures binding a call's validated arguments to its
// struct (once per call, after validation).
func BenchmarkBind(b *testing.B) {
	a := Args{"id": "x", "name": "n", "flag": true, "n": 3.0, "fp": 1.5, "tags": []any{"a", "b"}, "meta": map[string]any{"m": "v"}, "version": "v1"}
	for b.Loop() {
		_ = Bind[bindAll](a)
	}
}
