package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// modelTools are foundry-mcp's tools whose every action needs a language model
// (README "Coming from foundry-mcp", Not offered). specd does not offer them —
// they are not in tools/list, costing an agent nothing — but a foundry agent
// that calls one gets an envelope, not a protocol error: NOT_SUPPORTED naming
// what to do instead, with a recovery that runs as given.
var modelTools = map[string]struct {
	why, instead string
	// recovery builds the next call from the caller's arguments.
	recovery func(args map[string]any) core.NextCall
}{
	"provider": {
		why:      "it runs a language model provider",
		instead:  "specd calls no language model: the agent calling it is one. server(action=\"capabilities\") reports what this server offers.",
		recovery: func(map[string]any) core.NextCall { return toServerCapabilities.Call(noArgs{}) },
	},
}

// installModelTools registers the modelTools on s, unlisted (a tools/list
// hook drops them): each call answers NOT_SUPPORTED in the session's
// contract shape and is logged like any call.
func installModelTools(s *server.MCPServer, rt *mcptool.Runtime) {
	rt.Defaults()
	hideModelTools(s)
	for name, mt := range modelTools {
		s.AddTool(mcp.Tool{Name: name, Description: "Not offered: " + mt.why + ".", InputSchema: mcp.ToolInputSchema{Type: "object"}},
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := req.GetArguments()
				action, _ := args["action"].(string)
				action = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(action)), "_", "-")
				call := core.NewCall(name, action, rt.Now, rt.NewID)
				e := core.NewError(errcode.NotSupported,
					fmt.Sprintf("%s is not offered: %s, and specd calls no language model (the agent calling it is one).", strings.TrimSpace(name+" "+action), mt.why),
					core.DetailsOf(notOffered(name, action))).
					WithRemediation(mt.instead).WithNext(mt.recovery(args), nil)
				return rt.RefuseUnlisted(ctx, req, call, e), nil
			})
	}
}

// hideModelTools leaves the modelTools out of every tools/list answer (a
// tool filter would also refuse their calls).
func hideModelTools(s *server.MCPServer) {
	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	h.AddAfterListTools(func(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		res.Tools = slices.DeleteFunc(slices.Clone(res.Tools), func(t mcp.Tool) bool {
			_, hidden := modelTools[t.Name]
			return hidden
		})
	})
}
