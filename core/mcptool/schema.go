package mcptool

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/mcp"
)

// InputSchema is a tool's flat input schema: one object with
// "action" (enum of kebab-case names) plus the union of every action's
// parameters, each described with "Used by: …"; required ["action"];
// additionalProperties false; no root composition keywords and no $schema.
func (t *Tool) InputSchema() map[string]any {
	props := map[string]any{
		"action": map[string]any{
			"type":        "string",
			"enum":        t.ActionNames(),
			"description": "The operation to perform. " + t.actionSummaries(),
		},
	}
	for _, p := range t.Params {
		props[p.Name] = p.schema(t.usedBy(p.Name))
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             []string{"action"},
		"additionalProperties": false,
	}
}

func (t *Tool) actionSummaries() string {
	parts := make([]string, len(t.Actions))
	for i, a := range t.Actions {
		parts[i] = a.Name + ": " + a.Summary
	}
	return strings.Join(parts, " ")
}

func (t *Tool) usedBy(name string) []string {
	var out []string
	for _, a := range t.Actions {
		for _, r := range a.Required {
			if r == name {
				out = append(out, a.Name+" (required)")
			}
		}
		for _, o := range a.Optional {
			if o == name {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// schema is p's JSON Schema in the tool's input schema; usedBy (the
// actions that take p) is appended to its description.
func (p Param) schema(usedBy []string) map[string]any {
	s := map[string]any{"type": string(p.Type)}
	if p.Type == IntOrString {
		s["type"] = []string{"integer", "string"}
	}
	desc := p.Description
	if len(usedBy) > 0 {
		desc += " Used by: " + strings.Join(usedBy, ", ") + "."
	}
	s["description"] = strings.TrimSpace(desc)
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	if p.Min != nil {
		s["minimum"] = *p.Min
	}
	if p.Max != nil && !p.Clamp {
		s["maximum"] = *p.Max
	}
	switch p.Type {
	case String:
		p.addStringBounds(s)
	case Array:
		p.addArrayBounds(s)
	}
	return s
}

// addStringBounds puts the caps of string parameter p into its schema s:
// maxLength (10,000 unless declared), and minLength and pattern when
// declared.
func (p Param) addStringBounds(s map[string]any) {
	if p.MaxLength > 0 {
		s["maxLength"] = p.MaxLength
	} else {
		s["maxLength"] = 10_000
	}
	if p.MinLength > 0 {
		s["minLength"] = p.MinLength
	}
	if p.Pattern != "" {
		s["pattern"] = p.Pattern
	}
}

// addArrayBounds puts the caps of array parameter p into its schema s:
// maxItems (1,000 unless declared) and, when declared, the items' type
// (with the pattern of string items).
func (p Param) addArrayBounds(s map[string]any) {
	if p.MaxItems > 0 {
		s["maxItems"] = p.MaxItems
	} else {
		s["maxItems"] = 1000
	}
	if p.Items != "" {
		items := map[string]any{"type": string(p.Items)}
		if p.Items == String && p.Pattern != "" {
			items["pattern"] = p.Pattern
		}
		s["items"] = items
	}
}

// Annotations are the tool's MCP hints, the most cautious over the actions
// it offers (on a read-only server, its read actions only):
// read-only only if every action is; destructive if any is; idempotent only
// if every action is; open-world if any is. All four are always set (mcp-go's
// NewTool defaults would otherwise claim destructive and open-world).
func (t *Tool) Annotations() mcp.ToolAnnotation {
	readOnly, destructive, idempotent, openWorld := true, false, true, false
	for i := range t.Actions {
		a := &t.Actions[i]
		if !t.offered(a) {
			continue // not offered on a read-only server
		}
		readOnly = readOnly && a.SideEffects != EffectWrite
		destructive = destructive || a.Destructive
		idempotent = idempotent && a.Idempotent
		openWorld = openWorld || a.OpenWorld
	}
	return mcp.ToolAnnotation{
		Title:           t.Title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(openWorld),
	}
}

// ActionSchema is the per-action metadata server(action="schema") returns.
type ActionSchema struct {
	Name        string           `json:"name"`
	Summary     string           `json:"summary"`
	Parameters  []ParameterBrief `json:"parameters"`
	Required    []string         `json:"required"`
	SideEffects string           `json:"side_effects"`
	Idempotent  bool             `json:"idempotent"`
	Destructive bool             `json:"destructive"`
	LatencyHint string           `json:"latency_hint"`
	Flag        string           `json:"feature_flag,omitempty"`
	Available   bool             `json:"available"`
	Reason      string           `json:"unavailable_reason,omitempty"` // why not, for this caller
	// AnswerSchema is the JSON Schema of data in a successful answer,
	// generated from Action.Answer; absent while the action's answer is
	// not typed.
	AnswerSchema *jsonschema.Schema `json:"answer_schema,omitempty"`
}

// ParameterBrief describes one parameter of an action.
type ParameterBrief struct {
	Name        string         `json:"name"`
	Required    bool           `json:"required"`
	Schema      map[string]any `json:"schema"`
	Description string         `json:"description"`
}

// Describe returns the per-action metadata of t, in declaration order.
func (t *Tool) Describe() []ActionSchema {
	out := make([]ActionSchema, 0, len(t.Actions))
	for _, a := range t.Actions {
		as := ActionSchema{
			Name: a.Name, Summary: a.Summary, Required: append([]string{}, a.Required...),
			SideEffects: a.SideEffects, Idempotent: a.Idempotent, Destructive: a.Destructive,
			LatencyHint: a.Latency, Flag: a.Flag, Available: true,
			Parameters: []ParameterBrief{}, AnswerSchema: AnswerSchema(a.Answer),
		}
		if !t.offered(&a) {
			as.Available, as.Reason = false, readOnlyReason
		}
		req := map[string]bool{}
		for _, r := range a.Required {
			req[r] = true
		}
		for _, name := range a.Params() {
			p, _ := t.Param(name)
			sch := p.schema(nil)
			delete(sch, "description")
			as.Parameters = append(as.Parameters, ParameterBrief{Name: name, Required: req[name], Schema: sch, Description: p.Description})
		}
		out = append(out, as)
	}
	return out
}

// MCPTool builds the mcp.Tool as tools/list shows it (lean.go): the
// description with the pointer to server schema, the lean flat input
// schema, outputSchema as given, honest annotations.
func (t *Tool) MCPTool(outputSchema json.RawMessage) mcp.Tool {
	in, _ := json.Marshal(t.ListInputSchema())
	return mcp.Tool{
		Name:            t.Name,
		Title:           t.Title,
		Description:     t.listToolDescription(),
		RawInputSchema:  in,
		RawOutputSchema: outputSchema,
		Annotations:     t.Annotations(),
	}
}

// answerSchemas memoises answer schemas by Go type: they are generated by
// reflection and never change while the process runs.
var answerSchemas sync.Map // reflect.Type → *jsonschema.Schema

// answerTypeSchemas overrides the generator where it would mislead or fail:
// a json.RawMessage is any JSON value, not an array of bytes; a JSON Schema
// inside an answer (server schema's answer_schema) is an object, since its
// own type is recursive.
var answerTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage]():   {},
	reflect.TypeFor[jsonschema.Schema](): {Type: "object"},
}

// AnswerSchema is the JSON Schema of the typed answer v (nil for nil, or for
// a type the generator cannot describe, which a test rules out for every
// registered action).
func AnswerSchema(v any) *jsonschema.Schema {
	if v == nil {
		return nil
	}
	t := reflect.TypeOf(v)
	if s, ok := answerSchemas.Load(t); ok {
		return s.(*jsonschema.Schema)
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: answerTypeSchemas})
	if err != nil {
		return nil
	}
	optionalEmbedded(t, s)
	answerSchemas.Store(t, s)
	return s
}

// optionalEmbedded corrects the generated schema of t for embedded pointer
// structs (an answer's optional part, such as execute's *ExecuteOutcome):
// the generator flattens their fields into the parent and requires them,
// but a nil pointer leaves every one of them out. Their fields are made
// optional, recursively through fields, slices and maps.
func optionalEmbedded(t reflect.Type, s *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		optionalEmbedded(t.Elem(), s.Items)
	case reflect.Map:
		optionalEmbedded(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		optionalFields(t, s, false)
	}
}

// optionalFields walks the fields t contributes to schema s (embedded
// structs contribute theirs); under an embedded pointer (optional true)
// each field leaves s.Required.
func optionalFields(t reflect.Type, s *jsonschema.Schema, optional bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if (!f.IsExported() && !f.Anonymous) || name == "-" {
			continue
		}
		if inner, ok := embeddedStruct(f, name); ok {
			optionalFields(inner, s, optional || f.Type.Kind() == reflect.Pointer)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if optional {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
		}
		optionalEmbedded(f.Type, s.Properties[name])
	}
}

// embeddedStruct is the struct whose fields the embedded field f (JSON
// name jsonName) contributes to its parent, through a pointer too; ok is
// false for a field that is not embedded, has a JSON name, or is no
// struct.
func embeddedStruct(f reflect.StructField, jsonName string) (reflect.Type, bool) {
	if !f.Anonymous || jsonName != "" {
		return nil, false
	}
	inner := f.Type
	if inner.Kind() == reflect.Pointer {
		inner = inner.Elem()
	}
	return inner, inner.Kind() == reflect.Struct
}
