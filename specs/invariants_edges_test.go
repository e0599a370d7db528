package specs

import (
	"strings"
	"testing"
)

// TestCheckInvariantsEdgeFindings pins the edge findings on both sides of
// hand-broken edges: self edges, dangling targets, missing reverse halves
// and duplicates, in node order and blocked_by before blocks.
func TestCheckInvariantsEdgeFindings(t *testing.T) {
	s := twoPhases(t)
	e := s.Edit("task-1-1")
	e.Dependencies.BlockedBy = append(e.Dependencies.BlockedBy, "task-1-1", "task-9-9", "task-1-2")
	e.Dependencies.Blocks = append(e.Dependencies.Blocks, "task-1-1", "task-8-8", "task-1-3")
	e = s.Edit("task-2-1")
	e.Dependencies.Depends = append(e.Dependencies.Depends, "task-1-1", "task-1-1")
	var got []string
	for _, v := range CheckInvariants(s) {
		if strings.Contains(v.Code, "EDGE") {
			got = append(got, v.String())
		}
	}
	want := []string{
		"SELF_EDGE task-1-1: blocked by itself",
		"DANGLING_EDGE task-1-1: blocked_by target task-9-9 does not exist",
		"EDGE_NOT_RECIPROCAL task-1-1: blocked by task-1-2 but task-1-2.blocks lacks it",
		"SELF_EDGE task-1-1: blocks itself",
		"DANGLING_EDGE task-1-1: blocks target task-8-8 does not exist",
		"EDGE_NOT_RECIPROCAL task-1-1: blocks task-1-3 but task-1-3.blocked_by lacks it",
		"DUP_EDGE task-2-1: duplicate dependency entries",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
