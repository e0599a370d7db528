package mcptool

import (
	"encoding/json"
	"strings"
)

// MaxListDescription is the longest parameter description tools/list
// carries (tests/toollist_test.go: the list under 20 KB, every tool); 0
// since the foundry tools were added: names and enums say it there, and
// server(action="schema", tool_name=…) always gives every description.
const MaxListDescription = 0

// listEnvelopeSchema is the output schema tools/list declares for every
// tool: the response-v2 envelope's four keys and their types (their being
// required is the contract's and the full schema's to say). The full
// envelope schema (core.EnvelopeSchema) would be nine copies of 1.9 KB in
// every agent's context; the answers still conform to it.
var listEnvelopeSchema = json.RawMessage(`{"type":"object","properties":{"success":{"type":"boolean"},"data":{"type":"object"},"error":{"type":["string","null"]},"meta":{"type":"object"}}}`)

// listSchema is p's entry in the tools/list input schema: its type, enum
// and numeric bounds, and its description only when it is one short
// sentence. Patterns (the id grammar on every id parameter) and length and
// item caps are left to the validator — whose INVALID_FORMAT and
// PAYLOAD_TOO_LARGE name the rule and the cap — and to server schema, which
// shows them all: they were a third of the list (tests/toollist_test.go:
// the whole list under 20 KB with every tool).
func (p Param) listSchema() map[string]any {
	s := p.schema(nil)
	for _, k := range []string{"description", "pattern", "maxLength", "minLength", "maxItems"} {
		delete(s, k)
	}
	if items, ok := s["items"].(map[string]any); ok {
		delete(items, "pattern")
		delete(items, "maxLength")
	}
	if d := listDescription(p.Description); d != "" {
		s["description"] = d
	}
	return s
}

// listDescription is d when it is a single sentence of at most
// maxListDescription characters, else "".
func listDescription(d string) string {
	d = strings.TrimSpace(d)
	if len([]rune(d)) > MaxListDescription || strings.Contains(strings.TrimSuffix(d, "."), ". ") {
		return ""
	}
	return d
}

// listToolDescription is t's description in tools/list: its first
// sentence cut before the colon that lists the actions (the action enum and
// server schema list them), the rest as written (which other tool to use
// instead, the typical composition as "Flow: …"), and where the per-action
// documentation is. server(action="tools"|"schema") answers with the description in full.
func (t *Tool) listToolDescription() string {
	d := t.Description
	if end := strings.Index(d, ". Use "); end > 0 {
		if colon := strings.Index(d[:end], ": "); colon > 0 {
			d = d[:colon] + d[end:]
		}
	}
	d = strings.Replace(d, "Typical composition: ", "Flow: ", 1)
	return d + " Docs: server(action=schema, tool_name=" + t.Name + ")."
}

// ListInputSchema is the flat input schema (InputSchema) as tools/list
// carries it: "action" as a bare enum, every parameter as listSchema gives
// it, both limited to what the tool offers (on a read-only server, its
// read actions and their parameters); required ["action"],
// additionalProperties false. InputSchema, with
// every description and its "Used by" list, is what server schema returns.
func (t *Tool) ListInputSchema() map[string]any {
	props := map[string]any{"action": map[string]any{"type": "string", "enum": t.OfferedActions()}}
	for _, p := range t.Params {
		if t.offersParam(p.Name) {
			props[p.Name] = p.listSchema()
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             []string{"action"},
		"additionalProperties": false,
	}
}
