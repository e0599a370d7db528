package tools

import (
	"context"
	"runtime"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
)

const serverDescription = `Use this when you need to discover what specd offers: tools (every tool with its actions, paged), schema (one tool's parameters and per-action side effects, idempotence, latency), capabilities (response version, limits, page sizes, token budget, flags, transports) and context (version, store path, workspace), flags (rollout health per feature flag and variant). ` +
	`Use health instead to check that the store is usable. ` +
	`Typical composition: server tools → server schema(tool_name) → the tool call. Read-only.`

func f64(v float64) *float64 { return &v }

func serverTool(d *Deps, reg *mcptool.Registry) *mcptool.Tool {
	return &mcptool.Tool{
		Name:        "server",
		Title:       "specd server",
		Description: serverDescription,
		Params: []mcptool.Param{
			{Name: "tool_name", Type: mcptool.String, MaxLength: 100, Description: "Name of the tool to describe."},
			{Name: "action_name", Type: mcptool.String, MaxLength: 100, Description: "schema: describe only this action."},
			{Name: "cursor", Type: mcptool.String, MaxLength: 1000, Description: "Opaque cursor from meta.pagination.cursor of the previous page."},
			{Name: "limit", Type: mcptool.Integer, Min: f64(1), Max: f64(float64(core.PageList.Max)), Clamp: true, Description: "Page size (default 100, max 1000)."},
			{Name: "category", Type: mcptool.String},
			{Name: "tag", Type: mcptool.String},
			{Name: "include_deprecated", Type: mcptool.Boolean},
			{Name: "include_llm", Type: mcptool.Boolean},
			{Name: "include_workflow", Type: mcptool.Boolean},
			{Name: "include_workspace", Type: mcptool.Boolean},
			{Name: "include_capabilities", Type: mcptool.Boolean},
		},
		Actions: []mcptool.Action{
			{
				Name: "tools", Summary: "Lists the tools with their actions, descriptions, category and tags, paged by tool name; category and tag filter them.",
				Optional: []string{"cursor", "limit", "category", "tag", "include_deprecated"}, SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast,
				Example: mcptool.ArgsOf(serverToolsArgs{pageArgs: pageArgs{Limit: new(1)}}), Answer: ServerToolsAnswer{}, Typed: mcptool.Typed(serverTools(reg)),
			},
			{
				Name: "schema", Summary: "Describes one tool: its input schema, its MCP annotations and, per action (or only action_name), parameters, required ones, side effects, idempotence, latency hint and answer_schema; over the token budget the answer schemas are left out (a warning names the call that gives one).",
				Required: []string{"tool_name"}, Optional: []string{"action_name"}, SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast,
				Example: mcptool.ArgsOf(serverSchemaArgs{ToolName: "health"}), Answer: ServerSchemaAnswer{}, Typed: mcptool.Typed(d.serverSchema(reg)),
			},
			{
				Name: "capabilities", Summary: "Response version, input limits, page sizes, token budget, feature flags and transports.",
				SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(noArgs{}),
				Answer: CapabilitiesAnswer{}, Typed: withoutArgs(d.serverCapabilities(reg)),
			},
			{
				Name: "context", Summary: "Server version, store path (relative to the workspace), configuration source, this caller's session and, unless turned off (include_*: false), the workspace folder name, workflow, llm (specd calls none) and capabilities.",
				Optional:    []string{"include_llm", "include_workflow", "include_workspace", "include_capabilities"},
				SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(serverContextArgs{}),
				Answer: ContextAnswer{}, Typed: mcptool.Typed(d.serverContext(reg)),
			},
			flagsAction(d),
		},
	}
}

// ServerToolsAnswer is server tools' answer: one page of tools by name,
// and every category there is (foundry's categories).
type ServerToolsAnswer struct {
	Tools      []ToolInfo `json:"tools"`
	Categories []string   `json:"categories"`
}

// ToolInfo is one tool of server tools.
type ToolInfo struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Category    string   `json:"category"`
	Tags        []string `json:"tags"`
	Actions     []string `json:"actions"`
}

// matches reports whether the tool is of category and has tag, each when
// given (not empty).
func (t ToolInfo) matches(category, tag string) bool {
	return (category == "" || t.Category == category) && (tag == "" || slices.Contains(t.Tags, tag))
}

// serverTools pages the tools by name, only those of category and with tag
// when given (toolCategory, toolTags); the total counts the matching ones.
// include_deprecated changes nothing: no tool is deprecated.
func serverTools(reg *mcptool.Registry) func(context.Context, *mcptool.Request, serverToolsArgs) mcptool.Result {
	return func(ctx context.Context, r *mcptool.Request, args serverToolsArgs) mcptool.Result {
		category, tag := args.Category, args.Tag
		p, err := mcptool.OpenPage(r, "server", "tools", "", core.PageList, toServerTools.Args(serverToolsArgs{}), category, tag)
		if err != nil {
			return mcptool.Fail(err)
		}
		a := ServerToolsAnswer{Tools: []ToolInfo{}, Categories: []string{}}
		more, total := false, 0
		for _, t := range reg.Tools() {
			info := ToolInfo{Name: t.Name, Title: t.Title, Description: t.Description, Category: toolCategory(t.Name), Tags: toolTags(t), Actions: t.OfferedActions()}
			if !slices.Contains(a.Categories, info.Category) {
				a.Categories = append(a.Categories, info.Category)
			}
			if !info.matches(category, tag) {
				continue
			}
			total++
			if t.Name <= p.After {
				continue
			}
			if len(a.Tools) == p.Limit {
				more = true
				continue
			}
			a.Tools = append(a.Tools, info)
		}
		slices.Sort(a.Categories)
		next := ""
		if len(a.Tools) > 0 {
			next = p.Cursor(a.Tools[len(a.Tools)-1].Name, more)
		}
		return mcptool.OK(a, core.WithPagination(next, p.Limit, &total))
	}
}

// ServerSchemaAnswer is server schema's answer (mcptool.Registry.Schema).
type ServerSchemaAnswer = mcptool.ToolSchema

// serverSchema answers one tool's contract, with the actions this caller
// cannot call marked unavailable (markAvailability); over the token budget
// the answer schemas go first (ToolSchema.Degrade).
func (d *Deps) serverSchema(reg *mcptool.Registry) func(context.Context, *mcptool.Request, serverSchemaArgs) mcptool.Result {
	return func(ctx context.Context, r *mcptool.Request, args serverSchemaArgs) mcptool.Result {
		ans, t, err := reg.Schema(args.ToolName, args.ActionName)
		if err != nil {
			return mcptool.Fail(err)
		}
		markAvailability(ctx, d, t, r.Session, ans.Actions)
		res := mcptool.OK(ans)
		res.Degrade = ans
		return res
	}
}

// CapabilitiesAnswer is server capabilities' answer.
type CapabilitiesAnswer struct {
	ResponseVersion string    `json:"response_version"`
	Limits          Limits    `json:"limits"`
	PageSizes       PageSizes `json:"page_sizes"`
	TokenBudget     int       `json:"token_budget"`
	Flags           any       `json:"flags"`
	Transports      []string  `json:"transports"`
	Tools           []string  `json:"tools"`
}

// Limits are the input limits every call is held to.
type Limits struct {
	RequestBytes   int   `json:"request_bytes"`
	StringChars    int   `json:"string_chars"`
	ArrayItems     int   `json:"array_items"`
	NestingDepth   int   `json:"nesting_depth"`
	LargeTextBytes int   `json:"large_text_bytes"`
	DeadlineMS     int64 `json:"deadline_ms"`
}

// PageSizes are the default and maximum page sizes per kind of listing.
type PageSizes struct {
	Lists   PageSize `json:"lists"`
	Tasks   PageSize `json:"tasks"`
	Journal PageSize `json:"journal"`
	History PageSize `json:"history"`
}

// PageSize is one listing's default and maximum limit.
type PageSize struct {
	Default int `json:"default"`
	Max     int `json:"max"`
}

func pageSize(l core.PageLimits) PageSize { return PageSize{Default: l.Default, Max: l.Max} }

func (d *Deps) serverCapabilities(reg *mcptool.Registry) mcptool.Handler {
	return func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		return mcptool.OK(CapabilitiesAnswer{
			ResponseVersion: core.Version,
			Limits: Limits{RequestBytes: core.MaxRequestBytes, StringChars: core.MaxStringChars, ArrayItems: core.MaxArrayItems,
				NestingDepth: core.MaxNesting, LargeTextBytes: core.MaxLargeText, DeadlineMS: d.Runtime.Deadline.Milliseconds()},
			PageSizes: PageSizes{Lists: pageSize(core.PageList), Tasks: pageSize(core.PageTasks),
				Journal: pageSize(core.PageJournal), History: pageSize(core.PageHistory)},
			TokenBudget: d.TokenBudget,
			Flags:       flagsList(ctx, d, r.Session),
			Transports:  d.Transports,
			Tools:       reg.Names(),
		})
	}
}

// ContextAnswer is server context's answer. Paths are shown relative to
// the workspace (the workspace by its folder name), never absolute. As in
// foundry, workspace_root, workflow, llm and capabilities are there unless
// include_workspace, include_workflow, include_llm or include_capabilities
// is false.
type ContextAnswer struct {
	ServerVersion string              `json:"server_version"`
	GoVersion     string              `json:"go_version"`
	StorePath     string              `json:"store_path"`
	WorkspaceRoot *string             `json:"workspace_root,omitempty"`
	ConfigSource  string              `json:"config_source"`
	ConfigSources map[string]string   `json:"config_sources"`
	Session       SessionInfo         `json:"session"`
	Workflow      *WorkflowInfo       `json:"workflow,omitempty"`
	LLM           *LLMInfo            `json:"llm,omitempty"`
	Capabilities  *CapabilitiesAnswer `json:"capabilities,omitempty"`
}

// WorkflowInfo is how specd takes part in the agent's workflow (foundry's
// workflow section holds its git settings).
type WorkflowInfo struct {
	Git        string `json:"git"`
	Journaling string `json:"journaling"`
}

// LLMInfo answers foundry's include_llm: specd calls no language model.
type LLMInfo struct {
	Configured bool   `json:"configured"`
	Note       string `json:"note"`
}

// contextWorkflow and contextLLM are server context's fixed sections.
var (
	contextWorkflow = WorkflowInfo{Git: "specd never commits, pushes or branches; the agent does.",
		Journaling: "Task transitions journal themselves; journal list-unjournaled lists completed tasks waiting for an entry."}
	contextLLM = LLMInfo{Configured: false, Note: "specd calls no language model: the agent calling it is one. Model-backed foundry actions are not offered."}
)

// SessionInfo is the calling session as the server sees it.
type SessionInfo struct {
	ID            string `json:"id"`
	ClientName    string `json:"client_name"`
	ClientVersion string `json:"client_version"`
}

func (d *Deps) serverContext(reg *mcptool.Registry) func(context.Context, *mcptool.Request, serverContextArgs) mcptool.Result {
	capabilities := d.serverCapabilities(reg)
	return func(ctx context.Context, r *mcptool.Request, args serverContextArgs) mcptool.Result {
		sources := d.ConfigSources
		if sources == nil {
			sources = map[string]string{}
		}
		a := ContextAnswer{
			ServerVersion: d.Version, GoVersion: runtime.Version(),
			StorePath:    showServerPath(d.Workspace, d.Store.Path()),
			ConfigSource: d.ConfigSource, ConfigSources: sources,
			Session: SessionInfo{ID: r.Session.ID, ClientName: r.Session.ClientName, ClientVersion: r.Session.ClientVersion},
		}
		include := func(given *bool) bool { return given == nil || *given }
		if include(args.IncludeWorkspace) {
			root := showServerPath("", d.Workspace)
			a.WorkspaceRoot = &root
		}
		if include(args.IncludeWorkflow) {
			a.Workflow = &contextWorkflow
		}
		if include(args.IncludeLLM) {
			a.LLM = &contextLLM
		}
		if include(args.IncludeCapabilities) {
			c := capabilities(ctx, r).Data.(CapabilitiesAnswer)
			a.Capabilities = &c
		}
		return mcptool.OK(a)
	}
}

// The server tool's typed arguments (mcptool.Typed).
type (
	serverToolsArgs struct {
		pageArgs
		Category          string `arg:"category"`
		Tag               string `arg:"tag"`
		IncludeDeprecated bool   `arg:"include_deprecated"`
	}
	serverSchemaArgs struct {
		ToolName   string `arg:"tool_name,required"`
		ActionName string `arg:"action_name"`
	}
	// serverContextArgs: each part is included unless turned off (nil:
	// not given).
	serverContextArgs struct {
		IncludeLLM          *bool `arg:"include_llm"`
		IncludeWorkflow     *bool `arg:"include_workflow"`
		IncludeWorkspace    *bool `arg:"include_workspace"`
		IncludeCapabilities *bool `arg:"include_capabilities"`
	}
)

// withoutArgs is h as the handler of an action that takes no arguments.
func withoutArgs(h mcptool.Handler) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, r *mcptool.Request, _ noArgs) mcptool.Result { return h(ctx, r) })
}
