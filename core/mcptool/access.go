package mcptool

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
)

// Access is a shared server's hook into every call (core/httpguard
// implements it; nil on stdio and the CLI, where every call passes).
type Access interface {
	// Charge spends one call of the caller's rate budget: opts go on the
	// answer whatever its outcome (meta.rate_limit); an error refuses the
	// call (RATE_LIMIT_EXCEEDED).
	Charge(ctx context.Context) (opts []core.MetaOption, err *core.Error)
	// Permit decides whether the caller's role may run the action, from the
	// registry's side effects (FORBIDDEN naming the role).
	Permit(ctx context.Context, tool, action, sideEffects string) *core.Error
	// KeyID is the caller's API key id, its identity for flags and logs.
	KeyID(ctx context.Context) string
	// Done hears every finished call (metrics): outcome is "ok" or the
	// error code; served is the flag decisions the call was served under
	// (the session's response contract first; none without flags).
	Done(ctx context.Context, tool, action, outcome string, d time.Duration, served []FlagDecision)
}

// ResourceRateLimit is the server option that charges every resources/read
// served by a handler to the caller's rate budget, the one bucket tool calls
// spend (rt.Access.Charge, read at each read, so Access may be set after the
// option is made). An empty bucket refuses the read with a JSON-RPC error
// whose message starts "RATE_LIMIT_EXCEEDED:" and ends with the seconds to
// wait (a JSON-RPC error carries no envelope data to put them in); the
// handler does not run. Without Access (stdio, the CLI) reads pass.
func ResourceRateLimit(rt *Runtime) server.ServerOption {
	return server.WithResourceHandlerMiddleware(func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
		return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			if rt.Access != nil {
				if _, e := rt.Access.Charge(ctx); e != nil {
					return nil, fmt.Errorf("%s: %s Wait %v seconds, then read again", e.Code, e.Message, e.Details["retry_after_seconds"])
				}
			}
			return next(ctx, req)
		}
	})
}

// charge runs the rate hook; the options stay on call for every envelope.
func (rt *Runtime) charge(ctx context.Context, call *core.Call) *core.Error {
	if rt.Access == nil {
		return nil
	}
	opts, err := rt.Access.Charge(ctx)
	call.Extra = append(call.Extra, opts...)
	return err
}

// permit runs the role hook for a.
func (rt *Runtime) permit(ctx context.Context, t *Tool, a *Action) *core.Error {
	if rt.Access == nil {
		return nil
	}
	return rt.Access.Permit(ctx, t.Name, a.Name, a.SideEffects)
}

// done reports a finished call to the hook: outcome is "ok" or the error
// code.
func (rt *Runtime) done(ctx context.Context, call *core.Call, served []FlagDecision, env core.Envelope) {
	if rt.Access == nil {
		return
	}
	outcome := "ok"
	if m, ok := env.Data.(map[string]any); ok && !env.Success {
		outcome, _ = m["error_code"].(string)
	}
	rt.Access.Done(ctx, call.Tool, call.Action, outcome, rt.Now().Sub(call.Start), served)
}

// keyID is the caller's key id, "" without a hook.
func (rt *Runtime) keyID(ctx context.Context) string {
	if rt.Access == nil {
		return ""
	}
	return rt.Access.KeyID(ctx)
}
