package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// fakeStore is the store seam for unit tests of the tools layer.
type fakeStore struct{ writableErr error }

func (f fakeStore) Path() string                            { return "/tmp/fake.db" }
func (f fakeStore) CheckWritable(ctx context.Context) error { return f.writableErr }
func (f fakeStore) Describe(ctx context.Context) (StoreInfo, error) {
	return StoreInfo{Path: "/tmp/fake.db", SchemaVersion: 1, InstallID: "id"}, nil
}

func testDeps() *Deps {
	return &Deps{Store: fakeStore{}, Version: "test", Started: time.Now(), Runtime: Runtime{Deadline: time.Second}}
}

func TestInputSchemasAreFlatStrictAndMatchDispatch(t *testing.T) {
	for _, tool := range New(testDeps()).Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			s := tool.InputSchema()
			for _, kw := range []string{"oneOf", "anyOf", "allOf", "if", "then", "else", "not", "$schema"} {
				if _, ok := s[kw]; ok {
					t.Errorf("root keyword %q is not allowed", kw)
				}
			}
			if s["additionalProperties"] != false {
				t.Errorf("additionalProperties must be false")
			}
			if req := s["required"].([]string); len(req) != 1 || req[0] != "action" {
				t.Errorf("required = %v, want [action]", req)
			}
			enum := s["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]string)
			if strings.Join(enum, ",") != strings.Join(tool.ActionNames(), ",") {
				t.Errorf("action enum %v != dispatch table %v", enum, tool.ActionNames())
			}
			for _, a := range tool.Actions {
				if _, ok := tool.action(a.Name); !ok {
					t.Errorf("action %s not dispatchable", a.Name)
				}
			}
			for name, p := range s["properties"].(map[string]any) {
				if name == "action" {
					continue
				}
				if d := p.(map[string]any)["description"].(string); !strings.Contains(d, "Used by: ") {
					t.Errorf("parameter %s description lacks \"Used by:\": %q", name, d)
				}
			}
		})
	}
}

// TestDescriptionsLint holds every tool description to contract §8: it
// leads with "Use this when", says when to use another tool instead, and
// names a composition (an arrow between calls).
func TestDescriptionsLint(t *testing.T) {
	reg := New(testDeps())
	for _, tool := range reg.Tools() {
		d := tool.Description
		if !strings.HasPrefix(d, "Use this when") {
			t.Errorf("%s: description must start with \"Use this when\"", tool.Name)
		}
		other := false
		for _, n := range reg.Names() {
			if n != tool.Name && strings.Contains(d, "Use "+n+" instead") {
				other = true
			}
		}
		if !other {
			t.Errorf("%s: description must say \"Use <other tool> instead …\"", tool.Name)
		}
		if !strings.Contains(d, "→") {
			t.Errorf("%s: description must name a composition (a → b)", tool.Name)
		}
		if len(d) > 1200 {
			t.Errorf("%s: description is %d chars; keep tools/list small", tool.Name, len(d))
		}
		for _, a := range tool.Actions {
			if a.Summary == "" {
				t.Errorf("%s %s: no summary", tool.Name, a.Name)
			}
		}
	}
}

func testTool(h Handler, params ...Param) *Tool {
	return &Tool{
		Name: "t", Description: "Use this when testing.",
		Params: params,
		Actions: []Action{{
			Name: "do-it", Summary: "does it", Optional: paramNames(params),
			SideEffects: EffectWrite, Latency: LatencyFast, Handler: h,
		}},
	}
}

func paramNames(ps []Param) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// dispatch runs one call of tool with a deadline far above any real call
// (the tools tests run on a real bbolt file, whose fsync can take tens of
// milliseconds on a busy machine).
func dispatch(t *testing.T, tool *Tool, args map[string]any) map[string]any {
	t.Helper()
	return dispatchWithin(t, tool, args, 10*time.Second)
}

func dispatchWithin(t *testing.T, tool *Tool, args map[string]any, deadline time.Duration) map[string]any {
	t.Helper()
	reg := &Registry{}
	reg.Add(tool)
	env := reg.Dispatch(context.Background(), tool, args, Session{ID: "s"}, Runtime{Deadline: deadline})
	b, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func code(env map[string]any) string {
	d, _ := env["data"].(map[string]any)
	c, _ := d["error_code"].(string)
	return c
}

func TestPanicBecomesInternalErrorWithoutLeaking(t *testing.T) {
	env := dispatch(t, testTool(func(ctx context.Context, r *Request) Result { panic("secret /etc/passwd detail") }),
		map[string]any{"action": "do-it"})
	if code(env) != errcode.Internal {
		t.Fatalf("want INTERNAL_ERROR, got %v", env)
	}
	b, _ := json.Marshal(env)
	if strings.Contains(string(b), "secret") || strings.Contains(string(b), "passwd") {
		t.Fatalf("panic text leaked: %s", b)
	}
	rid := env["meta"].(map[string]any)["request_id"].(string)
	if !strings.Contains(env["error"].(string), rid) {
		t.Fatalf("internal error message must name the request id %s: %v", rid, env["error"])
	}
}

func TestGoErrorBecomesInternalError(t *testing.T) {
	env := dispatch(t, testTool(func(ctx context.Context, r *Request) Result { return Fail(errors.New("open /srv/x: denied")) }),
		map[string]any{"action": "do-it"})
	b, _ := json.Marshal(env)
	if code(env) != errcode.Internal || strings.Contains(string(b), "/srv/x") {
		t.Fatalf("Go error text leaked or wrong code: %s", b)
	}
}

func TestDeadlineAnswersUnavailable(t *testing.T) {
	env := dispatchWithin(t, testTool(func(ctx context.Context, r *Request) Result {
		<-ctx.Done()
		return Fail(ctx.Err())
	}), map[string]any{"action": "do-it"}, 50*time.Millisecond)
	if code(env) != errcode.Unavailable {
		t.Fatalf("want UNAVAILABLE, got %v", env)
	}
	d := env["data"].(map[string]any)["details"].(map[string]any)
	if d["timeout_ms"].(float64) != 50 {
		t.Fatalf("details.timeout_ms = %v", d["timeout_ms"])
	}
}

func TestValidator(t *testing.T) {
	echo := func(ctx context.Context, r *Request) Result { return OK(map[string]any(r.Args)) }
	tool := testTool(echo,
		Param{Name: "name", Type: String, MaxLength: 5},
		Param{Name: "kind", Type: String, Enum: []string{"task", "subtask", "verify"}},
		Param{Name: "n", Type: Integer, Min: f64(1), Max: f64(10)},
		Param{Name: "flag", Type: Boolean},
		Param{Name: "tags", Type: Array, Items: String, MaxItems: 2},
		Param{Name: "obj", Type: Object},
	)
	deep := map[string]any{}
	cur := deep
	for i := 0; i < 12; i++ {
		next := map[string]any{}
		cur["k"] = next
		cur = next
	}
	tests := []struct {
		name  string
		args  map[string]any
		code  string
		field string
	}{
		{"ok", map[string]any{"action": "do-it", "name": "abc", "n": 3.0}, "", ""},
		{"snake_case alias", map[string]any{"action": "do_it"}, "", ""},
		{"null is absent", map[string]any{"action": "do-it", "name": nil}, "", ""},
		{"action missing", map[string]any{}, errcode.MissingRequired, "action"},
		{"action not a string", map[string]any{"action": 3.0}, errcode.InvalidFormat, "action"},
		{"unknown action", map[string]any{"action": "doit"}, errcode.UnknownAction, "action"},
		{"unknown parameter", map[string]any{"action": "do-it", "nmae": "x"}, errcode.UnknownParameter, "nmae"},
		{"string too long", map[string]any{"action": "do-it", "name": "abcdef"}, errcode.PayloadTooLarge, "name"},
		{"wrong type", map[string]any{"action": "do-it", "name": 4.0}, errcode.InvalidFormat, "name"},
		{"enum", map[string]any{"action": "do-it", "kind": "tsk"}, errcode.InvalidFormat, "kind"},
		{"not an integer", map[string]any{"action": "do-it", "n": 2.5}, errcode.InvalidFormat, "n"},
		{"below minimum", map[string]any{"action": "do-it", "n": 0.0}, errcode.InvalidFormat, "n"},
		{"above maximum", map[string]any{"action": "do-it", "n": 11.0}, errcode.InvalidFormat, "n"},
		{"bool", map[string]any{"action": "do-it", "flag": "yes"}, errcode.InvalidFormat, "flag"},
		{"array items", map[string]any{"action": "do-it", "tags": []any{"a", 1.0}}, errcode.InvalidFormat, "tags[1]"},
		{"array too long", map[string]any{"action": "do-it", "tags": []any{"a", "b", "c"}}, errcode.PayloadTooLarge, "tags"},
		{"nesting too deep", map[string]any{"action": "do-it", "obj": deep}, errcode.PayloadTooLarge, ""},
		{"request too large", map[string]any{"action": "do-it", "obj": map[string]any{"a": strings.Repeat("x", 9000), "b": strings.Repeat("x", 9000), "c": strings.Repeat("x", 9000), "d": strings.Repeat("x", 9000), "e": strings.Repeat("x", 9000), "f": strings.Repeat("x", 9000), "g": strings.Repeat("x", 9000), "h": strings.Repeat("x", 9000), "i": strings.Repeat("x", 9000), "j": strings.Repeat("x", 9000), "k": strings.Repeat("x", 9000), "l": strings.Repeat("x", 9000)}}, errcode.PayloadTooLarge, "arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := dispatch(t, tool, tt.args)
			if got := code(env); got != tt.code {
				t.Fatalf("code = %q, want %q: %v", got, tt.code, env)
			}
			if tt.code == "" || tt.field == "" {
				return
			}
			d := env["data"].(map[string]any)["details"].(map[string]any)
			if d["field"] != tt.field {
				t.Fatalf("details.field = %v, want %q", d["field"], tt.field)
			}
		})
	}
	env := dispatch(t, tool, map[string]any{"action": "do-it", "kind": "tsk"})
	if m := env["data"].(map[string]any)["recovery"].(map[string]any)["fuzzy_matches"].([]any); len(m) == 0 || m[0] != "task" {
		t.Fatalf("enum fuzzy matches: %v", m)
	}
}

func TestAnnotationsAreTheMostCautious(t *testing.T) {
	h := func(ctx context.Context, r *Request) Result { return OK(nil) }
	tool := &Tool{Name: "x", Actions: []Action{
		{Name: "read", Summary: "r", SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast, Handler: h},
		{Name: "write", Summary: "w", SideEffects: EffectWrite, Destructive: true, Latency: LatencyFast, Handler: h},
	}}
	a := tool.Annotations()
	if *a.ReadOnlyHint || !*a.DestructiveHint || *a.IdempotentHint || *a.OpenWorldHint {
		t.Fatalf("annotations %+v", a)
	}
}

func TestReadinessNotReadyIsSuccessWithWarning(t *testing.T) {
	d := testDeps()
	d.Store = fakeStore{writableErr: core.NewError(errcode.LockTimeout, "locked", nil)}
	reg := New(d)
	tool, _ := reg.Tool("health")
	env := reg.Dispatch(context.Background(), tool, map[string]any{"action": "readiness"}, Session{}, d.Runtime)
	if !env.Success || env.Data.(ReadinessAnswer).Ready || len(env.Meta.Warnings) != 1 {
		t.Fatalf("readiness with a locked store: %+v", env)
	}
}
