package mcptool

import (
	"context"
	"fmt"
	"testing"
)

// TestFoundryForgiveness: what foundry-mcp accepts the validator accepts
// too — action names and enum values in any letter case (and snake_case
// action names), page sizes over the maximum clamped with a warning — while
// a value that is not a spelling of an allowed one is still refused.
func TestFoundryForgiveness(t *testing.T) {
	var got Args
	tool := testTool(func(ctx context.Context, r *Request) Result { got = r.Args; return OK(map[string]any{}) },
		Param{Name: "level", Type: String, Enum: []string{"low", "high", "PASSED"}},
		Param{Name: "limit", Type: Integer, Min: f64(1), Max: f64(100), Clamp: true},
		Param{Name: "depth", Type: Integer, Min: f64(0), Max: f64(5)},
	)
	tool.Actions = append(tool.Actions, Action{Name: "do-more", Summary: "does more", Optional: []string{"level"},
		SideEffects: EffectRead, Latency: LatencyFast, Handler: tool.Actions[0].Handler})
	cases := []struct {
		args     map[string]any
		code     string // "" = success
		key      string
		want     any
		warnings string
	}{
		{args: map[string]any{"action": "do-it", "level": "High"}, key: "level", want: "high"},
		{args: map[string]any{"action": "DO-IT", "level": "LOW"}, key: "level", want: "low"},
		{args: map[string]any{"action": "Do_More", "level": "passed"}, key: "level", want: "PASSED"},
		{args: map[string]any{"action": "do-it", "level": "hgh"}, code: "INVALID_FORMAT"},
		{args: map[string]any{"action": "doit"}, code: "UNKNOWN_ACTION"},
		{args: map[string]any{"action": "do-it", "limit": 500}, key: "limit", want: float64(100),
			warnings: "[limit 500 is over the maximum; 100 was used.]"},
		{args: map[string]any{"action": "do-it", "limit": 100}, key: "limit", want: float64(100), warnings: "<nil>"},
		{args: map[string]any{"action": "do-it", "limit": 0}, code: "INVALID_FORMAT"},
		{args: map[string]any{"action": "do-it", "depth": 6}, code: "INVALID_FORMAT"}, // not a Clamp parameter
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.args), func(t *testing.T) {
			got = nil
			env := dispatch(t, tool, c.args)
			if c.code != "" {
				if env["success"] != false || env["data"].(map[string]any)["error_code"] != c.code {
					t.Fatalf("want %s, got %v", c.code, env)
				}
				return
			}
			if env["success"] != true {
				t.Fatalf("want success, got %v", env)
			}
			if got[c.key] != c.want {
				t.Errorf("%s: handler saw %#v, want %#v", c.key, got[c.key], c.want)
			}
			if w := fmt.Sprint(env["meta"].(map[string]any)["warnings"]); w != c.warnings && c.warnings != "" {
				t.Errorf("warnings %s, want %s", w, c.warnings)
			}
		})
	}
}
