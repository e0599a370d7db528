package board

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/specd/specd/cmd/specd/planview"
)

var update = flag.Bool("update", false, "rewrite testdata/graphs.golden")

// graphSpec is a spec of one phase whose tasks t0…t(n-1) carry the given
// blocks edges (from index → to indexes).
func graphSpec(n int, blocks map[int][]int) *planview.Spec {
	s := &planview.Spec{Nodes: map[string]*planview.Node{}}
	phase := &planview.Node{ID: "phase-1", Type: "phase", Status: "in_progress"}
	statuses := []string{"pending", "in_progress", "completed", "blocked"}
	for i := 0; i < n; i++ {
		t := &planview.Node{ID: fmt.Sprintf("task-1-%d-with-a-long-name", i), Type: "task", Status: statuses[i%len(statuses)]}
		phase.Children = append(phase.Children, t)
		s.Nodes[t.ID] = t
	}
	for from, tos := range blocks {
		for _, to := range tos {
			phase.Children[from].Blocks = append(phase.Children[from].Blocks, phase.Children[to].ID)
		}
	}
	s.Phases = []*planview.Node{phase}
	s.Nodes[phase.ID] = phase
	return s
}

// TestLayoutGraphGolden pins the dependency graph's layout: no graph
// without edges, columns by longest prerequisite chain, rows within a
// column, the cut past maxGraphNodes, a cycle that stops growing.
func TestLayoutGraphGolden(t *testing.T) {
	chain := map[int][]int{}
	for i := 0; i < 59; i++ {
		chain[i] = []int{i + 1}
	}
	cases := []struct {
		name string
		spec *planview.Spec
	}{
		{"no-edges", graphSpec(3, nil)},
		{"diamond", graphSpec(5, map[int][]int{0: {1, 2}, 1: {3}, 2: {3}, 3: {4}, 4: {}})},
		{"fan-out", graphSpec(8, map[int][]int{0: {1, 2, 3, 4, 5, 6, 7}})},
		{"cycle", graphSpec(4, map[int][]int{0: {1}, 1: {2}, 2: {0}, 3: {1}})},
		{"cut", graphSpec(60, chain)},
	}
	got := map[string]*graph{}
	for _, c := range cases {
		g := layoutGraph(c.spec)
		got[c.name] = g
		if g != nil {
			_ = g.String()
		}
	}
	raw, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "graphs.golden")
	if *update {
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(want) {
		t.Errorf("layoutGraph changed; got:\n%s", raw)
	}
}
