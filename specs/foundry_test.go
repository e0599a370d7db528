package specs

import (
	"fmt"
	"testing"
)

// TestRecalculateHours: phases get the sum over their work leaves
// (subtasks count, their parent task does not; non-positive values count
// as none), the spec the sum over phases; a second run changes nothing.
func TestRecalculateHours(t *testing.T) {
	s := newTestSpec(t)
	p1 := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P1"}, []TaskInput{
		{Title: "a", TaskCategory: "investigation", EstimatedHours: f64(2)},
		{Title: "b", TaskCategory: "investigation", EstimatedHours: f64(1.25)},
	}))
	p2 := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P2"}, []TaskInput{{Title: "c", TaskCategory: "investigation", EstimatedHours: f64(0)}}))
	parent := p1.TaskIDs[0]
	must[string](t)(AddTask(s, parent, TaskInput{Type: TypeSubtask, Title: "a.1", EstimatedHours: f64(0.5)}))
	s.Edit(p2.PhaseID).SetMeta(EstimatedHoursKey, 9.0)

	rep := RecalculateHours(s, EstimatedHoursKey)
	want := map[string]float64{p1.PhaseID: 1.75, p2.PhaseID: 0} // a's 2 h is replaced by its subtask's 0.5 h
	for _, ph := range rep.Phases {
		if ph.Hours != want[ph.PhaseID] || !ph.Changed {
			t.Errorf("%s: %+v, want %v hours, changed", ph.PhaseID, ph, want[ph.PhaseID])
		}
		if got, _ := s.Node(ph.PhaseID).MetaFloat(EstimatedHoursKey); got != want[ph.PhaseID] {
			t.Errorf("%s stored %v", ph.PhaseID, got)
		}
	}
	if rep.Total != 1.75 || rep.Changed != 3 || fmt.Sprint(s.Header.Metadata[EstimatedHoursKey]) != "1.75" {
		t.Fatalf("report %+v, spec metadata %v", rep, s.Header.Metadata[EstimatedHoursKey])
	}
	if again := RecalculateHours(s, EstimatedHoursKey); again.Changed != 0 {
		t.Fatalf("second run changed %d", again.Changed)
	}
}

func TestReviewPlan(t *testing.T) {
	for _, tc := range []struct {
		name, md, template string
		missing, empty     int
		placeholders       int
		ready              bool
	}{
		{"fresh simple", PlanMarkdown("X", "simple"), "simple", 0, 0, 4, false},
		{"fresh detailed", PlanMarkdown("X", "detailed"), "detailed", 0, 0, 5, false},
		{"filled", "# X\n## Objective\nGo.\n## Scope\nAll.\n## Tasks\n1. a\n## Success Criteria\n- ok\n", "simple", 0, 0, 0, true},
		{"missing and empty", "# X\n## Objective\n\n## Tasks\n1. a\n", "simple", 2, 1, 0, false},
		{"no title", "## Objective\nGo.\n## Scope\nAll.\n## Tasks\n1.\n## Success Criteria\n-\n", "simple", 0, 0, 0, false},
	} {
		r := ReviewPlan(tc.md)
		if r.Template != tc.template || len(r.Missing) != tc.missing || len(r.Empty) != tc.empty || r.Placeholders != tc.placeholders || r.Ready != tc.ready {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}

func TestPlanSlug(t *testing.T) {
	for in, want := range map[string]string{"Notes Inbox!": "notes-inbox", "../etc/passwd": "etc-passwd", "  ": "", "A_b 2": "a-b-2"} {
		if got := PlanSlug(in); got != want {
			t.Errorf("PlanSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPhaseTemplatesApply(t *testing.T) {
	for _, name := range PhaseTemplateNames() {
		tm, ok := PhaseTemplateByName(name)
		if !ok || tm.Name != name || len(tm.Tasks) == 0 {
			t.Fatalf("%s: %+v", name, tm)
		}
		tm.Tasks[0]["title"] = "changed" // a copy: the shipped template is untouched
		if again, _ := PhaseTemplateByName(name); again.Tasks[0]["title"] == "changed" {
			t.Fatalf("%s: PhaseTemplateByName returns the shared map", name)
		}
	}
}
