package tools

import (
	"context"
	"fmt"
	"runtime"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

const serverDescription = `Use this when you need to discover what specd offers: tools (every tool with its actions, paged), schema (one tool's parameters and per-action side effects, idempotence, latency), capabilities (response version, limits, page sizes, token budget, flags, transports) and context (version, store path, workspace), flags (rollout health per feature flag and variant). ` +
	`Use health instead to check that the store is usable. ` +
	`Typical composition: server tools → server schema(tool_name) → the tool call. Read-only.`

func f64(v float64) *float64 { return &v }

func serverTool(d *Deps, reg *Registry) *Tool {
	return &Tool{
		Name:        "server",
		Title:       "specd server",
		Description: serverDescription,
		Params: []Param{
			{Name: "tool_name", Type: String, MaxLength: 100, Description: "Name of the tool to describe."},
			{Name: "cursor", Type: String, MaxLength: 1000, Description: "Opaque cursor from meta.pagination.cursor of the previous page."},
			{Name: "limit", Type: Integer, Min: f64(1), Max: f64(float64(core.PageList.Max)), Description: "Page size (default 100, max 1000)."},
		},
		Actions: []Action{
			{
				Name: "tools", Summary: "Lists the tools with their actions and descriptions, paged by tool name.",
				Optional: []string{"cursor", "limit"}, SideEffects: EffectNone, Idempotent: true, Latency: LatencyFast,
				Example: map[string]any{"limit": 1},
				Handler: func(ctx context.Context, r *Request) Result {
					fp := core.Fingerprint("server", "tools", "")
					after, err := core.DecodeCursor(r.Args.String("cursor"), fp)
					if err != nil {
						return Fail(err.WithRecovery("server", map[string]any{"action": "tools"}, nil))
					}
					limit := r.Args.IntOr("limit", core.PageList.Default)
					all := reg.Tools()
					items := []map[string]any{}
					next := ""
					for _, t := range all {
						if t.Name <= after {
							continue
						}
						if len(items) == limit {
							next = core.EncodeCursor(items[len(items)-1]["name"].(string), fp)
							break
						}
						items = append(items, map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "actions": t.ActionNames()})
					}
					total := len(all)
					return OK(map[string]any{"tools": items}, core.WithPagination(next, limit, &total))
				},
			},
			{
				Name: "schema", Summary: "Describes one tool: its input schema, its MCP annotations and, per action, parameters, required ones, side effects, idempotence and latency hint.",
				Required: []string{"tool_name"}, SideEffects: EffectNone, Idempotent: true, Latency: LatencyFast,
				Example: map[string]any{"tool_name": "health"},
				Handler: func(ctx context.Context, r *Request) Result {
					name := r.Args.String("tool_name")
					t, ok := reg.Tool(name)
					if !ok {
						return Fail(core.NewError(errcode.NotFound, fmt.Sprintf("There is no tool %q.", name),
							map[string]any{"field": "tool_name", "received": name, "allowed": reg.Names()}).
							WithRecovery("server", map[string]any{"action": "tools"}, fuzzy.Rank(name, reg.Names(), 5)))
					}
					actions := t.Describe()
					markAvailability(ctx, d, t, r.Session, actions)
					return OK(map[string]any{
						"tool_name":    t.Name,
						"description":  t.Description,
						"annotations":  t.Annotations(),
						"input_schema": t.InputSchema(),
						"actions":      actions,
					})
				},
			},
			{
				Name: "capabilities", Summary: "Response version, input limits, page sizes, token budget, feature flags and transports.",
				SideEffects: EffectNone, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					return OK(map[string]any{
						"response_version": core.Version,
						"limits": map[string]any{
							"request_bytes":    core.MaxRequestBytes,
							"string_chars":     core.MaxStringChars,
							"array_items":      core.MaxArrayItems,
							"nesting_depth":    core.MaxNesting,
							"large_text_bytes": core.MaxLargeText,
							"deadline_ms":      d.Runtime.Deadline.Milliseconds(),
						},
						"page_sizes": map[string]any{
							"lists":   map[string]int{"default": core.PageList.Default, "max": core.PageList.Max},
							"tasks":   map[string]int{"default": core.PageTasks.Default, "max": core.PageTasks.Max},
							"journal": map[string]int{"default": core.PageJournal.Default, "max": core.PageJournal.Max},
							"history": map[string]int{"default": core.PageHistory.Default, "max": core.PageHistory.Max},
						},
						"token_budget": d.TokenBudget,
						"flags":        flagsList(ctx, d, r.Session),
						"transports":   d.Transports,
						"tools":        reg.Names(),
					})
				},
			},
			{
				Name: "context", Summary: "Server version, store path (relative to the workspace), workspace folder name, configuration source and this caller's session.",
				SideEffects: EffectNone, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					return OK(map[string]any{
						"server_version": d.Version,
						"go_version":     runtime.Version(),
						"store_path":     showServerPath(d.Workspace, d.Store.Path()),
						"workspace_root": showServerPath("", d.Workspace),
						"config_source":  d.ConfigSource,
						"config_sources": d.ConfigSources,
						"session": map[string]any{
							"id": r.Session.ID, "client_name": r.Session.ClientName, "client_version": r.Session.ClientVersion,
						},
					})
				},
			},
			flagsAction(d),
		},
	}
}
