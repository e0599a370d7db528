package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
)

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
