package mcptool

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// withNextCall makes every failure name a call the agent can make next
// (as given): an error whose handler set no recovery.suggested_tool gets
// the default of its type, keeping its fuzzy matches. A validation error's
// next call is the schema of the call's action (server schema with
// tool_name and action_name; the whole tool's when action is ""), which
// lists its parameters, types, enums and bounds. INTERNAL_ERROR's is
// server context, which reports the store, the workspace and the
// configuration the fault most likely lies in. Other codes in
// core.NoNextCall keep none; errors of other types must set their own
// recovery where they are raised (the contract test finds those that do
// not).
func withNextCall(t *Tool, action string, e *core.Error) *core.Error {
	if e == nil || e.NamesCall() {
		return e
	}
	if e.Code == errcode.Internal {
		return e.WithRecovery("server", map[string]any{"action": "context"}, nil)
	}
	if _, exempt := core.NoNextCall[e.Code]; exempt {
		return e
	}
	info, _ := errcode.Lookup(e.Code)
	if info.Type != errcode.TypeValidation {
		return e
	}
	if _, known := t.Action(action); !known {
		action = ""
	}
	return e.WithRecovery("server", schemaCall(t, action), e.Matches())
}
