package specs

import (
	"slices"
	"testing"
)

// TestCheckInvariantsRules breaks one invariant per row on a valid spec
// (phase-1 with task-1-1 and task-1-2) and expects its code.
func TestCheckInvariantsRules(t *testing.T) {
	for _, tc := range []struct {
		code   string
		break_ func(s *Spec)
	}{
		{"BAD_ROOT", func(s *Spec) { s.Edit(RootID).Parent = "phase-1" }},
		{"ID_MISMATCH", func(s *Spec) { s.Edit("task-1-1").ID = "task-9-9" }},
		{"BAD_TYPE", func(s *Spec) { s.Edit("task-1-1").Type = "bogus" }},
		{"BAD_STATUS", func(s *Spec) { s.Edit("task-1-1").Status = "bogus" }},
		{"ORPHAN", func(s *Spec) { s.Edit("task-1-1").Parent = "phase-9" }},
		{"PARENT_CHILD", func(s *Spec) { s.Edit("task-1-1").Parent = RootID }},
		{"PHASE_PARENT", func(s *Spec) { s.Edit("task-1-2").Type = TypePhase }},
		{"DUP_CHILD", func(s *Spec) { p := s.Edit("phase-1"); p.Children = p.Children.Inserted(p.Children.Len(), "task-1-1") }},
		{"MISSING_CHILD", func(s *Spec) { p := s.Edit("phase-1"); p.Children = p.Children.Inserted(p.Children.Len(), "task-1-9") }},
		{"SELF_EDGE", func(s *Spec) { s.Edit("task-1-1").Dependencies.Blocks = []string{"task-1-1"} }},
		{"DANGLING_EDGE", func(s *Spec) { s.Edit("task-1-1").Dependencies.BlockedBy = []string{"task-1-9"} }},
		{"EDGE_NOT_RECIPROCAL", func(s *Spec) { s.Edit("task-1-1").Dependencies.Blocks = []string{"task-1-2"} }},
		{"DUP_EDGE", func(s *Spec) { s.Edit("task-1-1").Dependencies.Depends = []string{"x", "x"} }},
		{"COUNTS", func(s *Spec) { s.Edit("phase-1").TotalTasks = 7 }},
		{"ROLLUP_STATUS", func(s *Spec) { s.Edit("phase-1").Status = StatusCompleted }},
		{"UNREACHABLE", func(s *Spec) { p := s.Edit("phase-1"); p.Children = ChildListOf([]string{"task-1-1"}) }},
		{"HEADER", func(s *Spec) { s.Header.TotalTasks = 9 }},
	} {
		t.Run(tc.code, func(t *testing.T) {
			s := newTestSpec(t)
			must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "p"}))
			must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"}))
			must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "b"}))
			if v := CheckInvariants(s); v != nil {
				t.Fatalf("valid spec: %v", v)
			}
			tc.break_(s)
			var codes []string
			for _, v := range CheckInvariants(s) {
				codes = append(codes, v.Code)
			}
			if !slices.Contains(codes, tc.code) {
				t.Fatalf("got %v, want %s among them", codes, tc.code)
			}
		})
	}
}
