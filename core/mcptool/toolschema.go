package mcptool

import (
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
)

// ToolSchema is one tool's published contract, as server(action="schema")
// answers it: description, annotations, input schema and, per action, its
// contract with its answer schema when the action's answer is typed.
type ToolSchema struct {
	ToolName    string             `json:"tool_name"`
	Description string             `json:"description"`
	Annotations mcp.ToolAnnotation `json:"annotations"`
	InputSchema map[string]any     `json:"input_schema"`
	Actions     []ActionSchema     `json:"actions"`
}

// Schema is the contract of tool toolName, with only action actionName
// when that is given (and an input schema of that action's parameters
// only: the recovery of a refused call reads one action, about 1–4 KB, not
// the whole tool's). Errors: NOT_FOUND (field tool_name, with the allowed
// names, fuzzy matches and server tools as recovery; or field action_name,
// with server schema of the tool as recovery).
func (r *Registry) Schema(toolName, actionName string) (ToolSchema, *Tool, error) {
	t, ok := r.Tool(toolName)
	if !ok {
		return ToolSchema{}, nil, core.NewError(errcode.NotFound, fmt.Sprintf("There is no tool %q.", toolName),
			map[string]any{"field": "tool_name", "received": toolName, "allowed": r.Names()}).
			WithRecovery("server", map[string]any{"action": "tools"}, fuzzy.Rank(toolName, r.Names(), 5))
	}
	actions := t.Describe()
	if actionName != "" {
		a, ok := t.Action(actionName)
		if !ok {
			return ToolSchema{}, nil, core.NewError(errcode.NotFound, fmt.Sprintf("%s has no action %q.", t.Name, actionName),
				map[string]any{"field": "action_name", "received": actionName, "allowed": t.ActionNames()}).
				WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, fuzzy.Rank(actionName, t.ActionNames(), 5))
		}
		actions = slices.DeleteFunc(actions, func(as ActionSchema) bool { return as.Name != a.Name })
		return ToolSchema{ToolName: t.Name, Description: t.Description, Annotations: t.Annotations(), InputSchema: t.actionInputSchema(a), Actions: actions}, t, nil
	}
	return ToolSchema{ToolName: t.Name, Description: t.Description, Annotations: t.Annotations(), InputSchema: t.InputSchema(), Actions: actions}, t, nil
}

// Degrade is a ToolSchema answer over the token budget: the same without
// the actions' answer_schema (the largest part of a big tool's), with a
// CONTENT_TRUNCATED warning naming the call that gives one action's in
// full; ok false when even that is over.
func (s ToolSchema) Degrade(f Fit) (any, []core.MetaOption, bool, error) {
	short := s
	short.Actions = make([]ActionSchema, len(s.Actions))
	for i, a := range s.Actions {
		a.AnswerSchema = nil
		short.Actions[i] = a
	}
	meta := []core.MetaOption{core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
		fmt.Sprintf("answer_schema left out of every action to fit the token budget; server(action=\"schema\", tool_name=%q, action_name=…) gives one action's.", s.ToolName),
		map[string]any{"dropped": "answer_schema", "tool_name": s.ToolName})}
	return short, meta, f.Measure(short, meta) <= f.Budget, nil
}

// actionInputSchema is the input schema of a alone: "action" (a's name)
// and a's parameters, with a's required ones; the parameters' descriptions
// are left to the action's own parameters list, which has them.
func (t *Tool) actionInputSchema(a *Action) map[string]any {
	props := map[string]any{
		"action": map[string]any{"type": "string", "enum": []string{a.Name}, "description": a.Summary},
	}
	for _, name := range a.Params() {
		if p, ok := t.Param(name); ok {
			ps := p.schema(nil)
			delete(ps, "description")
			props[name] = ps
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             append([]string{"action"}, a.Required...),
		"additionalProperties": false,
	}
}
