package mcptool

import (
	"context"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestRegistrySchema: a tool's contract, one action's on request, and
// NOT_FOUND naming the field and the server call that lists what exists.
func TestRegistrySchema(t *testing.T) {
	r := &Registry{}
	tool := testTool(func(context.Context, *Request) Result { return OK(nil) })
	tool.Actions = append(tool.Actions, Action{Name: "look", Summary: "looks", SideEffects: EffectRead, Latency: LatencyFast, Handler: tool.Actions[0].Handler})
	r.Add(tool)
	tests := []struct {
		name, tool, action string
		actions            int
		field, recovery    string
	}{
		{"whole tool", "t", "", 2, "", ""},
		{"one action", "t", "do-it", 1, "", ""},
		{"unknown tool", "x", "", 0, "tool_name", "tools"},
		{"unknown action", "t", "undo", 0, "action_name", "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, tl, err := r.Schema(tt.tool, tt.action)
			if tt.field == "" {
				if err != nil || tl == nil || s.ToolName != "t" || len(s.Actions) != tt.actions || s.InputSchema == nil {
					t.Fatalf("schema %+v, %v", s, err)
				}
				return
			}
			e := core.AsError(err)
			if e == nil || e.Code != errcode.NotFound || e.Details["field"] != tt.field || e.Recovery == nil ||
				e.Recovery.Tool != "server" || e.Recovery.Args["action"] != tt.recovery {
				t.Fatalf("error %v", err)
			}
		})
	}
}
