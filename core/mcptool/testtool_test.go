package mcptool

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

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

func f64(v float64) *float64 { return &v }
