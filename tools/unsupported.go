package tools

import (
	"fmt"
	"maps"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// modelCall is a foundry-mcp action that needs a language model, and the
// deterministic call (if any) that does its job in specd.
type modelCall struct {
	why     string
	next    *core.NextCall // the recovery (nil: server schema of the called tool)
	instead string         // what to do, one sentence
}

// digestInstead is the recovery of the research actions that would have a
// model read sources: research digest-create builds a digest of a source
// the agent fetched itself, deterministically.
var digestInstead = modelCall{why: "it has a language model research the question",
	next:    &core.NextCall{Tool: "research", Args: toResearchDigestCreate.Args(digestCreateArgs{sourceParams: sourceParams{Text: new("<the source text you fetched>")}, Query: "<your question>"})},
	instead: "Fetch the sources yourself and build a deterministic digest of each with research(action=\"digest-create\")."}

// The recoveries several model-backed actions share (cloned per refusal).
var (
	digestListNext   = digestListCall()
	prSchemaNext     = serverSchemaCall("pr")
	capabilitiesNext = toServerCapabilities.Call(noArgs{})
)

// modelCalls are foundry-mcp's model-backed actions, by tool and action (README
// "Coming from foundry-mcp", Not offered). They are not offered (not in the
// action enum): specd calls no language model, the agent calling it is one. A
// call answers NOT_SUPPORTED with a recovery that runs as given.
var modelCalls = map[string]map[string]modelCall{
	"research": {
		"chat":          {why: "it asks a language model", instead: "Answer the question yourself; keep what you learn with journal(action=\"add\") or research(action=\"digest-create\")."},
		"consensus":     {why: "it polls several language models", instead: "Weigh the options yourself; record the decision with journal(action=\"add\", entry_type=\"decision\")."},
		"thinkdeep":     {why: "it has a language model investigate", instead: "Investigate yourself; research(action=\"digest-create\") keeps evidence with locators."},
		"ideate":        {why: "it has a language model brainstorm", instead: "Brainstorm yourself; capture ideas with authoring(action=\"intake-add\")."},
		"deep-research": digestInstead, "deep-research-status": digestInstead, "deep-research-report": digestInstead,
		"deep-research-list": {why: "deep research sessions are model runs", next: &digestListNext,
			instead: "List the digests you stored with research(action=\"digest-list\")."},
		"deep-research-delete": {why: "deep research sessions are model runs", next: &digestListNext,
			instead: "Delete a stored digest with research(action=\"digest-delete\")."},
		"thread-list": {why: "threads are model conversations", next: &digestListNext, instead: "specd keeps digests, not conversations: research(action=\"digest-list\")."},
		"thread-get":  {why: "threads are model conversations", next: &digestListNext, instead: "specd keeps digests, not conversations: research(action=\"digest-list\")."},
		"thread-delete": {why: "threads are model conversations", next: &digestListNext,
			instead: "specd keeps digests, not conversations: research(action=\"digest-list\")."},
	},
	"pr": {
		"create": {why: "foundry writes the pull request description with a language model", next: &prSchemaNext,
			instead: "Call pr(action=\"get-context\", spec_id) and open the pull request yourself (e.g. gh pr create)."},
	},
	"server": {
		"llm-status": {why: "specd calls no language model (it has no provider to report on)", next: &capabilitiesNext,
			instead: "server(action=\"capabilities\") reports what this server does offer."},
	},
}

// unsupported is the Tool.Refuse of tool: NOT_SUPPORTED for a call of one
// of foundry-mcp's model-backed actions of tool (named by the raw action
// argument, in any case and with _ or -), with a recovery that runs as
// given: the deterministic equivalent, or server schema of tool. It
// refuses nothing else, and is nil for a tool without such actions.
func unsupported(tool string) func(action string) *core.Error {
	calls := modelCalls[tool]
	if len(calls) == 0 {
		return nil
	}
	return func(action string) *core.Error {
		name := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(action)), "_", "-")
		mc, ok := calls[name]
		if !ok {
			return nil
		}
		e := core.NewError(errcode.NotSupported,
			fmt.Sprintf("%s %s is not offered: %s, and specd calls no language model (the agent calling it is one).", tool, name, mc.why),
			core.DetailsOf(notOffered(tool, name))).
			WithRemediation(mc.instead)
		if mc.next == nil {
			return e.WithNext(serverSchemaCall(tool), nil)
		}
		return e.WithNext(core.NextCall{Tool: mc.next.Tool, Args: maps.Clone(mc.next.Args)}, nil)
	}
}
