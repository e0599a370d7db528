package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// TestListDescriptionsLint holds the tools/list descriptions to what an
// agent needs there: when to use the tool, which other tool instead, a
// composition, and where the full per-action documentation is.
func TestListDescriptionsLint(t *testing.T) {
	reg := New(testDeps())
	reg.Add(specTool(testDeps()))
	for _, tool := range reg.Tools() {
		d := tool.MCPTool(nil).Description
		for _, want := range []string{"Use this when", " instead", "→", "server(action=schema, tool_name=" + tool.Name + ")"} {
			if !strings.Contains(d, want) {
				t.Errorf("%s: tools/list description lacks %q: %q", tool.Name, want, d)
			}
		}
		if strings.Contains(d, ": ") && strings.Index(d, ": ") < strings.Index(d, ". Use ") {
			t.Errorf("%s: tools/list description still lists the actions: %q", tool.Name, d)
		}
	}
}

// TestListInputSchemaIsFlatAndComplete: the tools/list input schema keeps
// mcptool.InputSchema's shape (flat, action an enum) and every parameter and
// action of the tool (only descriptions and default limits are left to server
// schema).
func TestListInputSchemaIsFlatAndComplete(t *testing.T) {
	reg := New(testDeps())
	reg.Add(specTool(testDeps()))
	reg.Add(taskTool(testDeps()))
	for _, tool := range reg.Tools() {
		s := tool.ListInputSchema()
		if s["additionalProperties"] != false || s["type"] != "object" || len(s["required"].([]string)) != 1 {
			t.Errorf("%s: not flat and strict: %v", tool.Name, s)
		}
		props := s["properties"].(map[string]any)
		if enum := props["action"].(map[string]any)["enum"].([]string); strings.Join(enum, ",") != strings.Join(tool.ActionNames(), ",") {
			t.Errorf("%s: action enum %v", tool.Name, enum)
		}
		if len(props) != len(tool.Params)+1 {
			t.Errorf("%s: %d properties for %d parameters", tool.Name, len(props)-1, len(tool.Params))
		}
		for _, p := range tool.Params {
			ps, ok := props[p.Name].(map[string]any)
			want := any(string(p.Type))
			if p.Type == mcptool.IntOrString {
				want = "[integer string]"
			}
			if !ok || fmt.Sprint(ps["type"]) != want {
				t.Errorf("%s %s: %v", tool.Name, p.Name, props[p.Name])
			}
			if d, ok := ps["description"].(string); ok && (len([]rune(d)) > mcptool.MaxListDescription || strings.Contains(d, "Used by")) {
				t.Errorf("%s %s: description %q", tool.Name, p.Name, d)
			}
		}
	}
}
