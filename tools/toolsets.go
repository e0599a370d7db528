package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/specd/specd/core/mcptool"
)

// ToolNames are the names of every tool New can build, sorted; --toolsets
// chooses among them (a test keeps the list equal to the registry's).
var ToolNames = []string{"authoring", "environment", "error", "health", "journal", "lifecycle", "plan", "pr", "research", "review", "server", "spec", "task", "test", "verification"}

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
// read-only every tool offers only its read actions, and a tool without any
// is removed.
func restrict(r *mcptool.Registry, d *Deps) {
	var names []string
	if len(d.Toolsets) > 0 {
		names = append(append(names, d.Toolsets...), alwaysOn...)
	}
	r.Restrict(names, d.ReadOnly)
}
