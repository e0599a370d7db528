package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestPrompts lists the three prompts, gets each for a real spec, checks
// the errors of a bad spec or phase, and completes their arguments.
func TestPrompts(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		id := data(call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Prompt demo"}))["spec_id"].(string)
		call(t, c, "authoring", map[string]any{"action": "phase-add", "spec_id": id, "title": "Build it"})

		list, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range list.Prompts {
			if p.Description == "" {
				t.Errorf("prompt %s has no description", p.Name)
			}
			names = append(names, p.Name)
		}
		if got := strings.Join(names, ","); got != "complete_phase,review_spec,start_feature" {
			t.Fatalf("prompts: %s", got)
		}

		get := func(name string, args map[string]string) (string, error) {
			req := mcp.GetPromptRequest{}
			req.Params.Name, req.Params.Arguments = name, args
			res, err := c.GetPrompt(ctx, req)
			if err != nil {
				return "", err
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != mcp.RoleUser {
				t.Fatalf("%s: messages %+v", name, res.Messages)
			}
			return res.Messages[0].Content.(mcp.TextContent).Text, nil
		}
		for _, tc := range []struct {
			name string
			args map[string]string
			want string
		}{
			{"start_feature", map[string]string{"spec_id": id}, `Start working on the feature "Prompt demo"`},
			{"complete_phase", map[string]string{"spec_id": id, "phase_id": "phase-1"}, `Complete phase phase-1 "Build it"`},
			{"review_spec", map[string]string{"spec_id": id}, "Review the spec " + id},
		} {
			text, err := get(tc.name, tc.args)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !strings.Contains(text, tc.want) {
				t.Fatalf("%s: %q not in:\n%s", tc.name, tc.want, text)
			}
		}
		for _, tc := range []struct {
			name string
			args map[string]string
			code string
		}{
			{"start_feature", map[string]string{"spec_id": "nope-2026-01-01-001"}, "SPEC_NOT_FOUND"},
			{"review_spec", map[string]string{"spec_id": "../etc"}, "INVALID_FORMAT"},
			{"complete_phase", map[string]string{"spec_id": id, "phase_id": "phase-7"}, "PHASE_NOT_FOUND"},
			{"complete_phase", map[string]string{"spec_id": id}, "MISSING_REQUIRED"},
			{"review_spec", nil, "MISSING_REQUIRED"},
		} {
			if _, err := get(tc.name, tc.args); err == nil || !strings.Contains(err.Error(), tc.code) {
				t.Fatalf("%s %v: want %s, got %v", tc.name, tc.args, tc.code, err)
			}
		}

		complete := func(prompt, arg, value string, context map[string]string) []string {
			req := mcp.CompleteRequest{}
			req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: prompt}
			req.Params.Argument.Name, req.Params.Argument.Value = arg, value
			req.Params.Context.Arguments = context
			res, err := c.Complete(ctx, req)
			if err != nil {
				t.Fatalf("complete %s.%s: %v", prompt, arg, err)
			}
			return res.Completion.Values
		}
		if got := complete("review_spec", "spec_id", "prompt", nil); len(got) != 1 || got[0] != id {
			t.Fatalf("spec_id completion: %v", got)
		}
		if got := complete("complete_phase", "phase_id", "ph", map[string]string{"spec_id": id}); len(got) != 1 || got[0] != "phase-1" {
			t.Fatalf("phase_id completion: %v", got)
		}
		if got := complete("complete_phase", "phase_id", "", nil); len(got) != 0 {
			t.Fatalf("phase_id completion without a spec: %v", got)
		}
	})
}

// TestLoggingSetLevel: logging/setLevel (2025-11-25) is accepted with an
// empty result, as the conformance suite's logging-set-level asks.
func TestLoggingSetLevel(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, false), mcp.ProtocolVersion20251125)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.SetLevelRequest{}
	req.Params.Level = mcp.LoggingLevelInfo
	//lint:ignore SA1019 logging/setLevel is the 2025-11-25 protocol's, the one the conformance suite checks
	if err := c.SetLevel(ctx, req); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
}
