package mcptool

import (
	"fmt"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Restrict keeps the tools of r named in names (every tool when names is
// empty); under readOnly every tool offers only its read actions, and a
// tool without any is removed. Call it once, after every Add.
func (r *Registry) Restrict(names []string, readOnly bool) {
	if len(names) > 0 {
		kept := r.tools[:0]
		for _, t := range r.tools {
			if slices.Contains(names, t.Name) {
				kept = append(kept, t)
			}
		}
		r.tools = kept
	}
	kept := r.tools[:0]
	for _, t := range r.tools {
		t.readOnly = readOnly
		if len(t.OfferedActions()) > 0 {
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

// OfferedActions lists the names of the actions t offers, in declaration
// order.
func (t *Tool) OfferedActions() []string {
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
	a, ok := t.Action(name)
	if !ok || t.offered(a) {
		return nil
	}
	return core.NewError(errcode.Forbidden,
		fmt.Sprintf("%s %s changes the store, and this server was started with --read-only: only read actions are offered.", t.Name, a.Name),
		map[string]any{"tool": t.Name, "action": a.Name, "read_only": true, "allowed": t.OfferedActions()}).
		WithRemediation("Use a read action, or ask the operator to restart specd without --read-only (SPECD_READ_ONLY).").
		WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, nil)
}
