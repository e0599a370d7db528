package specs

import (
	"maps"
	"slices"
	"testing"
)

// TestWalkAndSubtree: one walk, pre-order in children order, each node at
// most once and missing nodes skipped; Subtree is its {id: node}.
func TestWalkAndSubtree(t *testing.T) {
	h := map[string]*Node{
		"p":   {ID: "p", Children: ChildListOf([]string{"a", "b", "gone"})},
		"a":   {ID: "a", Children: ChildListOf([]string{"a1", "a2"})},
		"a1":  {ID: "a1"},
		"a2":  {ID: "a2", Children: ChildListOf([]string{"a"})}, // a cycle back up
		"b":   {ID: "b", Children: ChildListOf([]string{"a1"})}, // a1 listed twice
		"out": {ID: "out"},
	}
	tests := []struct {
		root  string
		order []string
	}{
		{"p", []string{"p", "a", "a1", "a2", "b"}},
		{"a", []string{"a", "a1", "a2"}},
		{"a1", []string{"a1"}},
		{"gone", nil},
	}
	for _, tt := range tests {
		var got []string
		for n := range Walk(NodeIn(h), tt.root) {
			got = append(got, n.ID)
		}
		if !slices.Equal(got, tt.order) {
			t.Errorf("Walk(%s) = %v, want %v", tt.root, got, tt.order)
		}
		sub := Subtree(NodeIn(h), tt.root)
		keys := slices.Sorted(maps.Keys(sub))
		want := slices.Sorted(slices.Values(tt.order))
		if !slices.Equal(keys, want) {
			t.Errorf("Subtree(%s) = %v, want %v", tt.root, keys, want)
		}
		for id, n := range sub {
			if n != h[id] {
				t.Errorf("Subtree(%s)[%s] is not the node read", tt.root, id)
			}
		}
	}
}
