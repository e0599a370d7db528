package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// ToolNames are the names of every tool New can build, sorted; --toolsets
// chooses among them (a test keeps the list equal to the registry's).
var ToolNames = []string{"authoring", "environment", "error", "health", "journal", "lifecycle", "plan", "pr", "research", "server", "spec", "task", "test", "verification"}

// alwaysOn are the tools every toolset includes: without them an agent
// cannot learn what the server offers or whether it is up.
var alwaysOn = []string{"health", "server"}

// ParseToolsets reads the --toolsets value: a comma list of tool names
// (spaces around names ignored, duplicates allowed); "" selects every tool
// (nil). An unknown name is an error naming it and the known ones.
func ParseToolsets(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(ToolNames, n) {
			return nil, fmt.Errorf("unknown tool %q (tools: %s)", n, strings.Join(ToolNames, ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// restrict applies Deps.Toolsets and Deps.ReadOnly to r: tools outside a
// non-empty toolset are removed (health and server always stay); under
// read-only every tool offers only its read actions (readOnly), and a tool
// without any is removed.
func (r *Registry) restrict(d *Deps) {
	if len(d.Toolsets) > 0 {
		kept := r.tools[:0]
		for _, t := range r.tools {
			if slices.Contains(d.Toolsets, t.Name) || slices.Contains(alwaysOn, t.Name) {
				kept = append(kept, t)
			}
		}
		r.tools = kept
	}
	kept := r.tools[:0]
	for _, t := range r.tools {
		t.readOnly = d.ReadOnly
		if len(t.offeredActions()) > 0 {
			kept = append(kept, t)
		}
	}
	r.tools = kept
}

// offered reports whether a is offered by t: every action, except the write
// actions of a tool on a read-only server.
func (t *Tool) offered(a *Action) bool {
	return !t.readOnly || a.SideEffects != EffectWrite
}

// offeredActions lists the names of the actions t offers, in declaration
// order.
func (t *Tool) offeredActions() []string {
	var out []string
	for i := range t.Actions {
		if t.offered(&t.Actions[i]) {
			out = append(out, t.Actions[i].Name)
		}
	}
	return out
}

// offersParam reports whether some offered action of t takes name.
func (t *Tool) offersParam(name string) bool {
	for i := range t.Actions {
		if t.offered(&t.Actions[i]) && t.Actions[i].takes(name) {
			return true
		}
	}
	return false
}

// readOnlyReason is why a write action is unavailable on a read-only server.
const readOnlyReason = "this server was started with --read-only (SPECD_READ_ONLY): only read actions are offered"

// refuseWrite is FORBIDDEN for a call of a write action on a read-only
// server (named by its raw action argument, before validation, so that no
// argument error hides the refusal); nil otherwise, and for names that are
// no action (validation reports those).
func (t *Tool) refuseWrite(raw map[string]any) *core.Error {
	name, _ := raw["action"].(string)
	a, ok := t.action(name)
	if !ok || t.offered(a) {
		return nil
	}
	return core.NewError(errcode.Forbidden,
		fmt.Sprintf("%s %s changes the store, and this server was started with --read-only: only read actions are offered.", t.Name, a.Name),
		map[string]any{"tool": t.Name, "action": a.Name, "read_only": true, "allowed": t.offeredActions()}).
		WithRemediation("Use a read action, or ask the operator to restart specd without --read-only (SPECD_READ_ONLY).").
		WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, nil)
}
