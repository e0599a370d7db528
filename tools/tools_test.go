package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
)

// fakeStore is the store seam for unit tests of the tools layer.
type fakeStore struct{ writableErr error }

func (f fakeStore) Path() string                            { return "/tmp/fake.db" }
func (f fakeStore) CheckWritable(ctx context.Context) error { return f.writableErr }
func (f fakeStore) Info(ctx context.Context) (bucketstore.Info, error) {
	return bucketstore.Info{Path: "/tmp/fake.db", SchemaVersion: 1, InstallID: "id"}, nil
}

func testDeps() *Deps {
	return &Deps{Store: fakeStore{}, Version: "test", Started: time.Now(), Runtime: mcptool.Runtime{Deadline: time.Second}}
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
				if _, ok := tool.Action(a.Name); !ok {
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

// TestDescriptionsLint holds every tool description to the rule that it leads
// with "Use this when", says when to use another tool instead, and names a
// composition (an arrow between calls).
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

func testTool(h mcptool.Handler, params ...mcptool.Param) *mcptool.Tool {
	return &mcptool.Tool{
		Name: "t", Description: "Use this when testing.",
		Params: params,
		Actions: []mcptool.Action{{
			Name: "do-it", Summary: "does it", Optional: paramNames(params),
			SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Handler: h,
		}},
	}
}

func paramNames(ps []mcptool.Param) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// dispatch runs one call of tool with a deadline far above any real call
// (the tools tests run on a real bbolt file, whose fsync can take tens of
// milliseconds on a busy machine).
func dispatch(t *testing.T, tool *mcptool.Tool, args map[string]any) map[string]any {
	t.Helper()
	return dispatchWithin(t, tool, args, 10*time.Second)
}

func dispatchWithin(t *testing.T, tool *mcptool.Tool, args map[string]any, deadline time.Duration) map[string]any {
	t.Helper()
	reg := &mcptool.Registry{}
	reg.Add(tool)
	env := reg.Dispatch(context.Background(), tool, args, mcptool.Session{ID: "s"}, mcptool.Runtime{Deadline: deadline})
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

func TestReadinessNotReadyIsSuccessWithWarning(t *testing.T) {
	d := testDeps()
	d.Store = fakeStore{writableErr: core.NewError(errcode.LockTimeout, "locked", nil)}
	reg := New(d)
	tool, _ := reg.Tool("health")
	env := reg.Dispatch(context.Background(), tool, map[string]any{"action": "readiness"}, mcptool.Session{}, d.Runtime)
	if !env.Success || env.Data.(ReadinessAnswer).Ready || len(env.Meta.Warnings) != 1 {
		t.Fatalf("readiness with a locked store: %+v", env)
	}
}
