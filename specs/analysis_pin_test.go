package specs

import (
	"reflect"
	"testing"
)

// TestBlockedByCyclesComponents checks the cycle components of a hand-made
// blocked_by graph: two separate cycles (one of three nodes reached
// through a node outside it), a self edge, an edge to a missing node and
// acyclic edges, each component in natural order and sorted by first id.
func TestBlockedByCyclesComponents(t *testing.T) {
	s := twoPhases(t)
	block := func(waiter string, prereqs ...string) {
		e := s.Edit(waiter)
		e.Dependencies.BlockedBy = append(e.Dependencies.BlockedBy, prereqs...)
	}
	block("task-2-2", "task-2-1")
	block("task-2-1", "task-1-3", "task-9-9")
	block("task-1-3", "task-1-2")
	block("task-1-2", "task-2-1", "task-1-1")
	block("task-1-1", "verify-1-1")
	block("verify-2-1", "verify-2-1")
	block("verify-1-1", "phase-2")
	block("phase-2", "verify-1-1")
	got := blockedByCycles(s, s.IDs())
	want := [][]string{{"phase-2", "verify-1-1"}, {"task-1-2", "task-1-3", "task-2-1"}, {"verify-2-1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cycles %v, want %v", got, want)
	}
}

// TestStatsWithoutPhasesAndVerifyOutside counts a verify node outside any
// phase (it adds no verification coverage) and skips hours that are not
// positive numbers (a number given as text counts).
func TestStatsWithoutPhasesAndVerifyOutside(t *testing.T) {
	s := twoPhases(t)
	n := buildNode(TaskInput{Type: TypeVerify, Title: "loose"})
	n.ID, n.Parent = "verify-0-1", "group-x"
	s.Put(n)
	g := newPendingNode(TypeGroup, "g")
	g.ID, g.Parent, g.Children = "group-x", RootID, ChildListOf([]string{"verify-0-1"})
	s.Put(g)
	r := s.Edit(RootID)
	r.Children = r.Children.Inserted(r.Children.Len(), "group-x")
	s.Edit("task-1-1").SetMeta("estimated_hours", -2.0)
	s.Edit("task-1-2").SetMeta("estimated_hours", "3")
	s.Edit("task-1-3").SetMeta("actual_hours", 1.25)
	st := Stats(s)
	if st.Verifications != 3 || st.Groups != 1 || st.VerificationCoverage != 1 || st.EstimatedHours != 3 || st.ActualHours != 1.25 || st.MaxDepth != 2 {
		t.Fatalf("%+v", st)
	}
}
