package mcptool

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// result is the wire answer of env for this session: the response-v2
// envelope, or the legacy v1 shape when response_contract_v2 is off for it.
func (rt *Runtime) result(ctx context.Context, sess Session, env core.Envelope) *mcp.CallToolResult {
	if rt.contractV2(ctx, sess) {
		return ToResult(env)
	}
	return LegacyResult(env)
}

// LegacyResult is the v1 shape of env (response_contract_v2 off; see
// README): on success the bare data object as JSON text, plus cursor and
// has_more at its top level when the answer is paged; on failure
// {"error": message, "error_code": CODE} with isError. Text content only,
// never structuredContent. Validation, storage and error codes are the
// envelope's; only the wire shape differs.
func LegacyResult(env core.Envelope) *mcp.CallToolResult {
	var out any
	if env.Success {
		out = env.Data
		if p := env.Meta.Pagination; p != nil {
			m := map[string]any{}
			if b, err := json.Marshal(env.Data); err == nil {
				_ = json.Unmarshal(b, &m)
			}
			if m == nil {
				m = map[string]any{}
			}
			m["cursor"], m["has_more"] = p.Cursor, p.HasMore
			out = m
		}
	} else {
		code := errcode.Internal
		if m, ok := env.Data.(map[string]any); ok {
			if c, ok := m["error_code"].(string); ok {
				code = c
			}
		}
		msg := ""
		if env.Error != nil {
			msg = *env.Error
		}
		out = map[string]any{"error": msg, "error_code": code}
	}
	b, err := json.Marshal(out)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": "Internal error while encoding the answer to " + env.Meta.RequestID + ".", "error_code": errcode.Internal})
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: string(b)}}, IsError: true}
	}
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.TextContent{Type: "text", Text: string(b)}},
		IsError: !env.Success,
	}
}

// sessionFromContext identifies the caller from the context alone (tools/list
// and initialize have no tool-call request): the same identity sessionOf
// gives a tool call, with client info from the session or, in protocol
// 2026-07-28, from the request's _meta.
func sessionFromContext(ctx context.Context, rt Runtime) Session {
	s := Session{ID: rt.ProcessSession, KeyID: rt.keyID(ctx)}
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		if id := cs.SessionID(); id != "" && id != stdioSessionID {
			s.ID = id
		}
		if ci, ok := cs.(server.SessionWithClientInfo); ok {
			info := ci.GetClientInfo()
			s.ClientName, s.ClientVersion = info.Name, info.Version
		}
	}
	if s.ClientName == "" {
		if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
			s.ClientName, s.ClientVersion = info.ClientInfo.Name, info.ClientInfo.Version
		}
	}
	return s
}

// legacyToolList serves a v1 session a tools/list without outputSchema (a
// client that validates structuredContent against a declared output schema
// would reject every v1 answer). It rewrites the answer after the list is
// made (a hook, not a tool filter: mcp-go runs tool filters on every
// tools/call too, where they have nothing to do).
func legacyToolList(rt *Runtime) func(context.Context, any, *mcp.ListToolsRequest, *mcp.ListToolsResult) {
	return func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res == nil || rt.contractV2(ctx, sessionFromContext(ctx, *rt)) {
			return
		}
		out := make([]mcp.Tool, len(res.Tools))
		for i, t := range res.Tools {
			t.RawOutputSchema = nil
			t.OutputSchema = mcp.ToolOutputSchema{}
			out[i] = t
		}
		res.Tools = out
	}
}

// FlagServerOptions are the MCP server options of feature flags: the
// per-session hooks and the v1 tools/list. It settles rt's defaults first,
// so the hooks and the tool handlers share one process session id.
func FlagServerOptions(rt *Runtime) []server.ServerOption {
	rt.Defaults()
	if rt.Flags == nil {
		return nil
	}
	return []server.ServerOption{withFlagHooks(rt)}
}
