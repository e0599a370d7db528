package specs

import (
	"slices"
	"strings"
)

// Authoring inputs foundry-mcp callers send that specd reads its own way
// (README "Coming from foundry-mcp").

// AssumptionsOfType are the assumptions tagged "[kind] " (as
// AddTaggedAssumption stores them; the kind in any letter case), all of
// them when kind is empty. Never nil.
func AssumptionsOfType(s *Spec, kind string) []string {
	out := []string{}
	prefix := "[" + strings.ToLower(strings.TrimSpace(kind)) + "] "
	for _, a := range Assumptions(s) {
		if kind == "" || strings.HasPrefix(strings.ToLower(a), prefix) {
			out = append(out, a)
		}
	}
	return out
}

// containsLifecycle reports whether l is in list.
func containsLifecycle(list []Lifecycle, l Lifecycle) bool { return slices.Contains(list, l) }
