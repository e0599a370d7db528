package tools

import (
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// New builds the registry of every specd tool over d.
func New(d *Deps) *Registry {
	rec := d.errorRecorder()
	r := newRegistry(d.TokenBudget, rec)
	r.Add(healthTool(d))
	r.Add(serverTool(d, r))
	defer setActionFlags(r)
	if d.Specs != nil {
		r.Add(specTool(d).withExamples(specExamples))
		r.Add(extend(authoringTool(d), authoringFoundryParams, authoringFoundryActions(d)).withExamples(authoringExamples))
		r.Add(taskTool(d).withExamples(taskExamples))
		r.Add(verificationTool(d).withExamples(verificationExamples))
		r.Add(lifecycleTool(d).withExamples(lifecycleExamples))
		r.Add(journalTool(d).withExamples(journalExamples))
		r.Add(researchTool(d).withExamples(researchExamples))
		r.Add(errorTool(d, rec))
		r.Add(planTool(d))
		r.Add(environmentTool(d))
		r.Add(testRunTool(d))
		r.Add(prTool(d))
	}
	for _, t := range r.Tools() {
		acceptFoundryContext(t, d.Workspace)
		t.Refuse = unsupported(t.Name)
	}
	restrict(r, d)
	return r
}

// Instructions is the server's MCP instructions text.
const Instructions = "specd keeps your plan as specs (phases → tasks → subtasks → verify steps, with dependencies). " +
	"Every tool takes an action parameter and answers with a response-v2 envelope {success, data, error, meta}; " +
	"on failure data.recovery names the call to make next. Start with server(action=\"tools\") or health(action=\"readiness\")."

// NewMCPServer builds the MCP server with every tool installed. mcp-go's own
// input-schema validation stays off: our validator answers in envelopes.
func NewMCPServer(d *Deps) (*server.MCPServer, *Registry) {
	r := New(d)
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions(Instructions),
		server.WithRecovery(),
		server.WithLogging(),
	}
	if d.Specs != nil {
		opts = append(opts, server.WithResourceCapabilities(true, false), server.WithResourceRecovery(),
			server.WithCompletions(), server.WithResourceCompletionProvider(specCompletion{d}),
			server.WithPromptCapabilities(false), server.WithPromptCompletionProvider(promptCompletion{d}))
	}
	opts = append(opts, flagServerOptions(&d.Runtime)...)
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
