package mcptool

import (
	"context"
	"strings"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestOverBudgetReadNarrowedByTheRegistrysNarrower: a read over the budget
// that no smaller limit or larger max_tokens can fix gets the Narrower's
// call as its recovery (and remediation); without a Narrower, or when it
// names none, it gets neither.
func TestOverBudgetReadNarrowedByTheRegistrysNarrower(t *testing.T) {
	big := strings.Repeat("z", 8000)
	id := Param{Name: "id", Type: String, Description: "which"}
	newTool := func() *Tool {
		return &Tool{Name: "t", Description: "Use this when testing.", Params: []Param{id}, Actions: []Action{
			{Name: "read-big", Summary: "s", Optional: []string{"id"}, SideEffects: EffectRead, Latency: LatencyFast,
				Handler: func(context.Context, *Request) Result { return OK(map[string]any{"doc": big}) }},
		}}
	}
	narrow := func(tool, action string, args Args) (string, map[string]any, string, bool) {
		if args.String("id") == "" {
			return "", nil, "", false
		}
		return "other", map[string]any{"action": "peek", "id": args.String("id"), "of": tool + " " + action}, "Peek instead.", true
	}
	for _, tc := range []struct {
		name         string
		narrow       Narrower
		args         map[string]any
		wantTool     string
		wantRemedies string
	}{
		{"narrowed", narrow, map[string]any{"id": "x"}, "other", "Peek instead."},
		{"narrower names none", narrow, map[string]any{}, "", "Narrow the call"},
		{"no narrower", nil, map[string]any{"id": "x"}, "", "Narrow the call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := NewRegistry(1000, nil)
			if tc.narrow != nil {
				reg.NarrowWith(tc.narrow)
			}
			tool := newTool()
			reg.Add(tool)
			raw := map[string]any{"action": "read-big"}
			for k, v := range tc.args {
				raw[k] = v
			}
			env := reg.Dispatch(context.Background(), tool, raw, Session{ID: "s"}, Runtime{})
			e, _ := env.Data.(map[string]any)
			if env.Success || e["error_code"] != errcode.PayloadTooLarge {
				t.Fatalf("want PAYLOAD_TOO_LARGE, got %+v", env)
			}
			rec, _ := e["recovery"].(map[string]any)
			got, _ := rec["suggested_tool"].(string)
			if got != tc.wantTool {
				t.Errorf("recovery tool %q, want %q (%+v)", got, tc.wantTool, rec)
			}
			if args, _ := rec["suggested_args"].(map[string]any); tc.wantTool != "" && (args["of"] != "t read-big" || args["id"] != "x") {
				t.Errorf("recovery args %v", args)
			}
			if r, _ := e["remediation"].(string); !strings.HasPrefix(r, tc.wantRemedies) {
				t.Errorf("remediation %q, want it to start with %q", r, tc.wantRemedies)
			}
		})
	}
}
