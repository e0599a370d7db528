package mcptool

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// withNextCall makes every failure name a call the agent can make next
// (contract §3): an error whose handler set no recovery.suggested_tool gets
// the default of its type, keeping its fuzzy matches. A validation error's
// next call is the tool's schema (server schema with tool_name), which
// lists every action's parameters, types, enums and bounds. Codes in
// core.NoNextCall keep none; errors of other types must set their own
// recovery where they are raised (the contract test finds those that do
// not).
func withNextCall(t *Tool, e *core.Error) *core.Error {
	if e == nil || e.NamesCall() {
		return e
	}
	if _, exempt := core.NoNextCall[e.Code]; exempt {
		return e
	}
	info, _ := errcode.Lookup(e.Code)
	if info.Type != errcode.TypeValidation {
		return e
	}
	return e.WithRecovery("server", map[string]any{"action": "schema", "tool_name": t.Name}, e.Matches())
}
