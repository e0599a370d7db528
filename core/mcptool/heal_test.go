package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// recoveryOf returns data.recovery of env.
func recoveryOf(env map[string]any) map[string]any {
	d, _ := env["data"].(map[string]any)
	r, _ := d["recovery"].(map[string]any)
	return r
}

// TestHealCorrectedCalls: the framework's heal classes, on a tool declared
// here — a value of the wrong type that converts is refused with the
// corrected call; a synonym of an enum value is offered first; an unknown
// parameter is never renamed to a key the call has or to one that refuses
// its value, and with no match the next call drops it; schema suggestions
// name the action.
func TestHealCorrectedCalls(t *testing.T) {
	ok := func(context.Context, *Request) Result { return OK(map[string]any{"ok": true}) }
	tool := testTool(ok,
		Param{Name: "limit", Type: Integer},
		Param{Name: "claim", Type: Boolean},
		Param{Name: "spec_id", Type: String},
		Param{Name: "task_id", Type: String},
		Param{Name: "version", Type: Integer},
		Param{Name: "status", Type: String, Enum: []string{"pending", "in_progress", "completed"}, Synonyms: map[string]string{"done": "completed"}},
	)
	for _, tc := range []struct {
		name     string
		args     map[string]any
		tool     string
		sugg     map[string]any
		fuzzy    []string
		code     string
		received any
	}{
		{"integer as string", map[string]any{"action": "do-it", "limit": "5"}, "t", map[string]any{"action": "do-it", "limit": 5.0}, []string{}, errcode.InvalidFormat, "5"},
		{"boolean word", map[string]any{"action": "do-it", "claim": "yes"}, "t", map[string]any{"action": "do-it", "claim": true}, []string{}, errcode.InvalidFormat, "yes"},
		{"boolean 0", map[string]any{"action": "do-it", "claim": 0.0}, "t", map[string]any{"action": "do-it", "claim": false}, []string{}, errcode.InvalidFormat, 0.0},
		{"not a number", map[string]any{"action": "do-it", "limit": "five"}, "server", map[string]any{"action": "schema", "tool_name": "t", "action_name": "do-it"}, []string{}, errcode.InvalidFormat, "five"},
		{"synonym first", map[string]any{"action": "do-it", "status": "Done"}, "server", map[string]any{"action": "schema", "tool_name": "t", "action_name": "do-it"}, []string{"completed"}, errcode.InvalidFormat, "Done"},
		{"normalised value first", map[string]any{"action": "do-it", "status": "in-progress"}, "server", map[string]any{"action": "schema", "tool_name": "t", "action_name": "do-it"}, []string{"in_progress"}, errcode.InvalidFormat, "in-progress"},
		{"key already present", map[string]any{"action": "do-it", "spec_id": "s", "node_id": "n"}, "server", map[string]any{"action": "schema", "tool_name": "t", "action_name": "do-it"}, []string{"task_id"}, errcode.UnknownParameter, nil},
		{"rename refusing the value", map[string]any{"action": "do-it", "verbose": true}, "t", map[string]any{"action": "do-it"}, []string{}, errcode.UnknownParameter, nil},
		{"stray key", map[string]any{"action": "do-it", "limit": 3.0, "to_folder": "x"}, "t", map[string]any{"action": "do-it", "limit": 3.0}, []string{}, errcode.UnknownParameter, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := dispatch(t, tool, tc.args)
			rec := recoveryOf(env)
			if code(env) != tc.code || rec["suggested_tool"] != tc.tool || !reflect.DeepEqual(rec["suggested_args"], tc.sugg) {
				t.Fatalf("%s: %s %v %v", tc.name, code(env), rec["suggested_tool"], rec["suggested_args"])
			}
			got, _ := json.Marshal(rec["fuzzy_matches"])
			want, _ := json.Marshal(tc.fuzzy)
			if string(got) != string(want) {
				t.Fatalf("%s: fuzzy_matches %s, want %s", tc.name, got, want)
			}
			det := env["data"].(map[string]any)["details"].(map[string]any)
			if tc.received != nil && det["received"] != tc.received {
				t.Fatalf("%s: details.received %v", tc.name, det["received"])
			}
		})
	}
}

// TestHealSynonymsAreDeclaredValues: a synonym whose value is not in the
// enum, or whose key is not in synonymKey form, is a declaration error.
func TestHealSynonymsAreDeclaredValues(t *testing.T) {
	for _, syn := range []map[string]string{{"done": "finished"}, {"Done": "completed"}, {"in-progress": "completed"}} {
		tool := testTool(func(context.Context, *Request) Result { return OK(nil) },
			Param{Name: "status", Type: String, Enum: []string{"completed"}, Synonyms: syn})
		if err := tool.check(); err == nil {
			t.Errorf("synonyms %v accepted", syn)
		}
	}
}

// TestHealRegistryLevel: an action the tool lacks but another tool has is
// refused with that tool's call, same arguments, and no fuzzy match of
// this tool's; a missing required parameter names the corrected call when
// the Candidates hook has exactly one value, else its listing call.
func TestHealRegistryLevel(t *testing.T) {
	ok := func(context.Context, *Request) Result { return OK(map[string]any{"ok": true}) }
	spec := Param{Name: "spec_id", Type: String}
	task := &Tool{Name: "task", Description: "Use this when testing.", Params: []Param{spec},
		Actions: []Action{{Name: "update-estimate", Summary: "s", Required: []string{"spec_id"}, SideEffects: EffectWrite, Latency: LatencyFast, Handler: ok}}}
	life := &Tool{Name: "lifecycle", Description: "Use this when testing.", Params: []Param{spec},
		Actions: []Action{{Name: "activate", Summary: "s", Required: []string{"spec_id"}, SideEffects: EffectWrite, Latency: LatencyFast, Handler: ok}}}
	reg := &Registry{}
	reg.Add(task)
	reg.Add(life)
	values := []string{"only-spec"}
	reg.CandidatesWith(func(_ context.Context, tool, action, param string, _ Args) ([]string, string, map[string]any) {
		return values, "spec", map[string]any{"action": "list"}
	})
	run := func(tool *Tool, args map[string]any) (string, map[string]any) {
		env := reg.Dispatch(context.Background(), tool, args, Session{ID: "s"}, Runtime{})
		d := env.Data.(map[string]any)
		return d["error_code"].(string), d["recovery"].(map[string]any)
	}
	c, rec := run(task, map[string]any{"action": "activate", "spec_id": "x"})
	if c != errcode.UnknownAction || rec["suggested_tool"] != "lifecycle" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "activate", "spec_id": "x"}) || len(rec["fuzzy_matches"].([]string)) != 0 {
		t.Fatalf("task activate: %s %v", c, rec)
	}
	c, rec = run(life, map[string]any{"action": "activate"})
	if c != errcode.MissingRequired || rec["suggested_tool"] != "lifecycle" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "activate", "spec_id": "only-spec"}) {
		t.Fatalf("one candidate: %s %v", c, rec)
	}
	values = []string{"a", "b"}
	c, rec = run(life, map[string]any{"action": "activate"})
	if c != errcode.MissingRequired || rec["suggested_tool"] != "spec" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "list"}) || len(rec["fuzzy_matches"].([]string)) != 0 {
		t.Fatalf("two candidates: %s %v", c, rec)
	}
}

// roleAccess is an Access whose caller may run reads only and whose rate
// budget is spent after limit calls.
type roleAccess struct{ calls, limit int }

func (a *roleAccess) Charge(context.Context) ([]core.MetaOption, *core.Error) {
	a.calls++
	if a.calls > a.limit {
		return nil, core.NewError(errcode.RateLimitExceeded, "over", map[string]any{"retry_after_seconds": 1, "retry_after_ms": 250})
	}
	return nil, nil
}

func (a *roleAccess) Permit(_ context.Context, tool, action, side string) *core.Error {
	if side == EffectWrite {
		return core.NewError(errcode.Forbidden, "observer", nil)
	}
	return nil
}
func (a *roleAccess) KeyID(context.Context) string { return "k" }
func (a *roleAccess) Done(context.Context, string, string, string, time.Duration, []FlagDecision) {
}

// TestHealCodesWithANextCall: FORBIDDEN names the actions the role may run
// and the read that takes the call's arguments; RATE_LIMIT_EXCEEDED the
// same call after retry_after_ms; INTERNAL_ERROR server context.
func TestHealCodesWithANextCall(t *testing.T) {
	ok := func(context.Context, *Request) Result { return OK(map[string]any{"ok": true}) }
	spec, taskID := Param{Name: "spec_id", Type: String}, Param{Name: "task_id", Type: String}
	tool := &Tool{Name: "task", Description: "Use this when testing.", Params: []Param{spec, taskID}, Actions: []Action{
		{Name: "next", Summary: "s", Required: []string{"spec_id"}, SideEffects: EffectRead, Latency: LatencyFast, Handler: ok},
		{Name: "info", Summary: "s", Required: []string{"spec_id", "task_id"}, SideEffects: EffectRead, Latency: LatencyFast, Handler: ok},
		{Name: "start", Summary: "s", Required: []string{"spec_id", "task_id"}, SideEffects: EffectWrite, Latency: LatencyFast, Handler: ok},
		{Name: "boom", Summary: "s", SideEffects: EffectRead, Latency: LatencyFast,
			Handler: func(context.Context, *Request) Result { return Fail(core.Internal(errors.New("disk on fire"))) }},
	}}
	reg := &Registry{}
	reg.Add(tool)
	acc := &roleAccess{limit: 2}
	rt := Runtime{Access: acc}
	data := func(args map[string]any) map[string]any {
		return reg.Dispatch(context.Background(), tool, args, Session{ID: "s"}, rt).Data.(map[string]any)
	}
	d := data(map[string]any{"action": "start", "spec_id": "s", "task_id": "t-1"})
	rec := d["recovery"].(map[string]any)
	if d["error_code"] != errcode.Forbidden || !reflect.DeepEqual(d["details"].(map[string]any)["allowed"], []string{"next", "info", "boom"}) ||
		rec["suggested_tool"] != "task" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "info", "spec_id": "s", "task_id": "t-1"}) {
		t.Fatalf("forbidden: %v", d)
	}
	d = data(map[string]any{"action": "boom"})
	if rec := d["recovery"].(map[string]any); d["error_code"] != errcode.Internal || rec["suggested_tool"] != "server" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "context"}) {
		t.Fatalf("internal: %v", d)
	}
	d = data(map[string]any{"action": "next", "spec_id": "s"})
	rec = d["recovery"].(map[string]any)
	if d["error_code"] != errcode.RateLimitExceeded || d["retry_after_ms"] != 250 || rec["suggested_tool"] != "task" || !reflect.DeepEqual(rec["suggested_args"], map[string]any{"action": "next", "spec_id": "s"}) {
		t.Fatalf("rate limit: %v", d)
	}
}
