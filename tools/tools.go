// Package tools declares specd's MCP tools: one file per tool with its
// action table, descriptions and thin handlers that bind the validated
// arguments, call one domain or service function and wrap the typed
// result. The machinery that turns these tables into MCP tools (schemas,
// validation, dispatch, budgets, pages) is package core/mcptool.
package tools

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// New builds the registry of every specd tool over d.
func New(d *Deps) *mcptool.Registry {
	rec := d.errorRecorder()
	r := mcptool.NewRegistry(d.TokenBudget, rec)
	r.NarrowWith(specGetInstead)
	r.StepCallsWith(refusalCall)
	r.CandidatesWith(d.missingCandidates)
	r.ServeArchiveWith("research", "archive-get")
	r.Add(healthTool(d))
	r.Add(serverTool(d, r))
	defer setActionFlags(r)
	if d.Specs != nil {
		r.Add(specTool(d).WithExamples(specExamples))
		r.Add(extend(authoringTool(d), authoringFoundryParams, authoringFoundryActions(d)).WithExamples(authoringExamples))
		r.Add(taskTool(d).WithExamples(taskExamples))
		r.Add(verificationTool(d).WithExamples(verificationExamples))
		r.Add(lifecycleTool(d).WithExamples(lifecycleExamples))
		r.Add(journalTool(d).WithExamples(journalExamples))
		r.Add(researchTool(d).WithExamples(researchExamples))
		r.Add(errorTool(d, rec))
		r.Add(planTool(d))
		r.Add(environmentTool(d))
		r.Add(testRunTool(d))
		r.Add(prTool(d))
		r.Add(reviewTool(d))
	}
	for _, t := range r.Tools() {
		acceptFoundryContext(t, d.Workspace)
		t.Refuse = refusals(t.Name)
	}
	restrict(r, d)
	return r
}

// specGetInstead is the Narrower of specd's tools: a read about one spec
// (spec_id) whose answer cannot fit is narrowed by reading the spec with
// spec get, which fits any budget by degrading; spec get itself, and reads
// about no spec, have no such call.
func specGetInstead(tool, action string, args mcptool.Args) (string, map[string]any, string, bool) {
	id := args.String("spec_id")
	if id == "" || tool == "spec" && action == "get" {
		return "", nil, "", false
	}
	c := toSpecGet.Call(specGetArgs{specArgs: specOf(id)})
	return c.Tool, c.Args, "Read the spec with spec get, which fits any budget by degrading, and narrow this call.", true
}

// Instructions is the server's MCP instructions text.
const Instructions = "specd keeps your plan as specs (phases → tasks → subtasks → verify steps, with dependencies). " +
	"Every tool takes an action parameter and answers with a response-v2 envelope {success, data, error, meta}; " +
	"on failure data.recovery names the call to make next. Start with server(action=\"tools\") or health(action=\"readiness\")."

// NewMCPServer builds the MCP server with every tool installed. mcp-go's own
// input-schema validation stays off: our validator answers in envelopes.
func NewMCPServer(d *Deps) (*server.MCPServer, *mcptool.Registry) {
	r := New(d)
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions(Instructions),
		server.WithRecovery(),
		server.WithLogging(),
	}
	if d.Specs != nil {
		opts = append(opts, server.WithResourceCapabilities(true, false), server.WithResourceRecovery(), mcptool.ResourceRateLimit(&d.Runtime),
			server.WithCompletions(), server.WithResourceCompletionProvider(specCompletion{d}),
			server.WithPromptCapabilities(false), server.WithPromptCompletionProvider(promptCompletion{d}))
	}
	opts = append(opts, mcptool.FlagServerOptions(&d.Runtime)...)
	s := server.NewMCPServer("specd", d.Version, opts...)
	r.Install(s, d.Runtime)
	installModelTools(s, &d.Runtime)
	if d.Specs != nil {
		installResources(s, d)
		installPrompts(s, d)
		installSubscriptions(s, d)
	}
	return s, r
}

// warn is a meta option adding one warning of severity "warning".
func warn(code, message string, ctx map[string]any) core.MetaOption {
	return core.WithWarning(code, core.SeverityWarning, message, ctx)
}

// errorSummary renders err for a status field: the code and message of a
// coded error, or "internal error" (never Go error text).
func errorSummary(err error) string {
	e := core.AsError(err)
	if e.Code == errcode.Internal {
		return "internal error"
	}
	return e.Code + ": " + e.Message
}

// refusals is a tool's Refuse: foundry's model-backed actions
// (unsupported), the review tool's model-written reviews, and the task
// tool's removed session-* action names.
func refusals(tool string) func(action string) *core.Error {
	model := unsupported(tool)
	switch tool {
	case "task":
		return func(action string) *core.Error {
			if e := legacySession(action); e != nil {
				return e
			}
			if model != nil {
				return model(action)
			}
			return nil
		}
	case "review":
		return reviewRefusal
	}
	return model
}
