package tools

import (
	"strings"
	"testing"
)

// TestListDescriptionsLint holds the tools/list descriptions to what an
// agent needs there: when to use the tool, which other tool instead, a
// composition, and where the full per-action documentation is.
func TestListDescriptionsLint(t *testing.T) {
	reg := New(testDeps())
	reg.Add(specTool(testDeps()))
	for _, tool := range reg.Tools() {
		d := tool.MCPTool(listEnvelopeSchema).Description
		for _, want := range []string{"Use this when", " instead", "→", `server(action="schema", tool_name="` + tool.Name + `")`} {
			if !strings.Contains(d, want) {
				t.Errorf("%s: tools/list description lacks %q: %q", tool.Name, want, d)
			}
		}
		if strings.Contains(d, ": ") && strings.Index(d, ": ") < strings.Index(d, ". Use ") {
			t.Errorf("%s: tools/list description still lists the actions: %q", tool.Name, d)
		}
	}
}

func TestListDescription(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Short one.", "Short one."},
		{"Two sentences. Second.", ""},
		{strings.Repeat("x", maxListDescription+1), ""},
	} {
		if got := listDescription(tc.in); got != tc.want {
			t.Errorf("listDescription(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
