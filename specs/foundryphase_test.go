package specs

import (
	"reflect"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestAddPhaseBulkFoundryFields covers the phase-add-bulk inputs foundry-mcp
// callers send (README "Coming from foundry-mcp"): the verify scaffold only
// when asked, details as the description, "category" in the defaults, the
// phase's estimate.
func TestAddPhaseBulkFoundryFields(t *testing.T) {
	tests := []struct {
		name  string
		phase PhaseInput
		tasks []TaskInput
		code  string // "" = success
		field string // the error's field
		check func(t *testing.T, s *Spec, res PhaseResult)
	}{
		{name: "no scaffold by default", phase: PhaseInput{Title: "P"}, tasks: []TaskInput{{Title: "a"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if len(res.VerifyIDs) != 0 || s.Node(res.PhaseID).Children.Len() != 1 {
					t.Fatalf("%+v children %v", res, s.Node(res.PhaseID).Children)
				}
			}},
		{name: "scaffold when asked", phase: PhaseInput{Title: "P", VerifyScaffold: true, TestCommand: "make test"}, tasks: []TaskInput{{Title: "a"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if len(res.VerifyIDs) != 2 || s.Node(res.VerifyIDs[0]).Title != ScaffoldRunTestsTitle || s.Node(res.VerifyIDs[0]).MetaString("command") != "make test" {
					t.Fatalf("%+v", res)
				}
			}},
		{name: "details become the description", phase: PhaseInput{Title: "P"},
			tasks: []TaskInput{{Title: "a", Details: []string{"first", "second"}}, {Title: "b", Description: "own", Details: []string{"ignored"}}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if d := s.Node(res.TaskIDs[0]).MetaString("description"); d != "first\nsecond" {
					t.Fatalf("description %q", d)
				}
				if d := s.Node(res.TaskIDs[1]).MetaString("description"); d != "own" {
					t.Fatalf("description %q", d)
				}
			}},
		{name: "category default is task_category", phase: PhaseInput{Title: "P", MetadataDefaults: map[string]any{"category": "research", "estimated_hours": 2.0}},
			tasks: []TaskInput{{Title: "a"}, {Title: "b", TaskCategory: "decision"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				a, b := s.Node(res.TaskIDs[0]), s.Node(res.TaskIDs[1])
				if a.MetaString("task_category") != "research" || b.MetaString("task_category") != "decision" {
					t.Fatalf("categories %v %v", a.Metadata, b.Metadata)
				}
				if _, ok := a.Metadata["category"]; ok {
					t.Fatal("category stored under foundry's key")
				}
				if h, _ := a.MetaFloat("estimated_hours"); h != 2 {
					t.Fatalf("estimated_hours %v", h)
				}
			}},
		{name: "one acceptance criterion as text", phase: PhaseInput{Title: "P", MetadataDefaults: map[string]any{"acceptance_criteria": "It works"}},
			tasks: []TaskInput{{Title: "a"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if got := toStrings(s.Node(res.TaskIDs[0]).Metadata["acceptance_criteria"]); !reflect.DeepEqual(got, []string{"It works"}) {
					t.Fatalf("acceptance_criteria %v", got)
				}
			}},
		{name: "explicit task_category default wins", phase: PhaseInput{Title: "P", MetadataDefaults: map[string]any{"category": "research", "task_category": "decision"}},
			tasks: []TaskInput{{Title: "a"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if c := s.Node(res.TaskIDs[0]).MetaString("task_category"); c != "decision" {
					t.Fatalf("task_category %q", c)
				}
			}},
		{name: "bad default is refused", phase: PhaseInput{Title: "P", MetadataDefaults: map[string]any{"category": "coding"}},
			tasks: []TaskInput{{Title: "a"}}, code: errcode.InvalidFormat, field: "metadata_defaults.task_category"},
		{name: "reserved default is refused", phase: PhaseInput{Title: "P", MetadataDefaults: map[string]any{"status": "completed"}},
			tasks: []TaskInput{{Title: "a"}}, code: errcode.Validation, field: "metadata_defaults.status"},
		{name: "phase estimate", phase: PhaseInput{Title: "P", EstimatedHours: f64(6.5)}, tasks: []TaskInput{{Title: "a"}},
			check: func(t *testing.T, s *Spec, res PhaseResult) {
				if h, ok := s.Node(res.PhaseID).MetaFloat("estimated_hours"); !ok || h != 6.5 {
					t.Fatalf("estimated_hours %v %v", h, ok)
				}
			}},
		{name: "negative phase estimate", phase: PhaseInput{Title: "P", EstimatedHours: f64(-1)}, tasks: []TaskInput{{Title: "a"}},
			code: errcode.InvalidFormat, field: "phase.estimated_hours"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSpec(t)
			before := docJSON(t, s)
			res, err := AddPhaseBulk(s, tt.phase, tt.tasks)
			if tt.code != "" {
				if e := mustCode(t, err, tt.code); e.Details["field"] != tt.field {
					t.Fatalf("field %v, want %q", e.Details["field"], tt.field)
				}
				if docJSON(t, s) != before {
					t.Fatal("a refused call changed the spec")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s, res)
			mustNoViolations(t, s, tt.name)
		})
	}
}

// TestAddPhaseEstimate: phase-add's estimated_hours is stored on the phase;
// a negative one is refused before anything changes.
func TestAddPhaseEstimate(t *testing.T) {
	s := newTestSpec(t)
	res := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "P", EstimatedHours: f64(3)}))
	if h, ok := s.Node(res.PhaseID).MetaFloat("estimated_hours"); !ok || h != 3 {
		t.Fatalf("estimated_hours %v %v", h, ok)
	}
	before := docJSON(t, s)
	_, err := AddPhase(s, PhaseInput{Title: "Q", EstimatedHours: f64(-2)})
	if e := mustCode(t, err, errcode.InvalidFormat); e.Details["field"] != "estimated_hours" {
		t.Fatalf("field %v", e.Details["field"])
	}
	if docJSON(t, s) != before {
		t.Fatal("refused phase-add changed the spec")
	}
}

// threeChained is a spec with phase-1 → phase-2 → phase-3 (each blocked by
// the one before, as phase-add links them).
func threeChained(t *testing.T) *Spec {
	t.Helper()
	s := newTestSpec(t)
	for _, title := range []string{"One", "Two", "Three"} {
		must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: title}))
	}
	return s
}

// TestMovePhaseLinked: with link_previous the chain follows the move (the
// positions here are MovePhase's).
func TestMovePhaseLinked(t *testing.T) {
	tests := []struct {
		name     string
		phase    string
		position int
		link     bool
		order    []string
		blocked  map[string][]string // phase → blocked_by after the move
		linked   int
		unlinked int
	}{
		{name: "last to first", phase: "phase-3", position: 0, link: true, order: []string{"phase-3", "phase-1", "phase-2"},
			blocked: map[string][]string{"phase-3": {}, "phase-1": {"phase-3"}, "phase-2": {"phase-1"}}, linked: 1, unlinked: 1},
		{name: "first to last", phase: "phase-1", position: 2, link: true, order: []string{"phase-2", "phase-3", "phase-1"},
			blocked: map[string][]string{"phase-2": {}, "phase-3": {"phase-2"}, "phase-1": {"phase-3"}}, linked: 1, unlinked: 1},
		{name: "middle to last", phase: "phase-2", position: 2, link: true, order: []string{"phase-1", "phase-3", "phase-2"},
			blocked: map[string][]string{"phase-1": {}, "phase-3": {"phase-1"}, "phase-2": {"phase-3"}}, linked: 2, unlinked: 2},
		{name: "without link_previous", phase: "phase-3", position: 0, order: []string{"phase-3", "phase-1", "phase-2"},
			blocked: map[string][]string{"phase-3": {"phase-2"}, "phase-1": {}, "phase-2": {"phase-1"}}},
		{name: "same place", phase: "phase-2", position: 1, link: true, order: []string{"phase-1", "phase-2", "phase-3"},
			blocked: map[string][]string{"phase-1": {}, "phase-2": {"phase-1"}, "phase-3": {"phase-2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := threeChained(t)
			res := must[PhaseMove](t)(MovePhaseLinked(s, tt.phase, tt.position, tt.link))
			if !reflect.DeepEqual(res.Phases, tt.order) {
				t.Fatalf("order %v, want %v", res.Phases, tt.order)
			}
			for id, want := range tt.blocked {
				got := s.Node(id).Dependencies.BlockedBy
				if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
					t.Errorf("%s blocked_by %v, want %v", id, got, want)
				}
			}
			if len(res.Linked) != tt.linked || len(res.Unlinked) != tt.unlinked {
				t.Errorf("linked %v unlinked %v", res.Linked, res.Unlinked)
			}
			mustNoViolations(t, s, tt.name)
		})
	}
}

// TestFindReplaceIgnoreCase: case_sensitive false matches any letter case,
// and a literal replacement stays literal; the default is case-sensitive.
func TestFindReplaceIgnoreCase(t *testing.T) {
	tests := []struct {
		name  string
		in    FindReplaceInput
		n     int
		title string
	}{
		{name: "case-sensitive by default", in: FindReplaceInput{Find: "ALPHA", Replace: "beta"}, n: 0, title: "Alpha alpha"},
		{name: "ignore case", in: FindReplaceInput{Find: "ALPHA", Replace: "beta", IgnoreCase: true}, n: 2, title: "beta beta"},
		{name: "literal replacement stays literal", in: FindReplaceInput{Find: "alpha", Replace: "$1x", IgnoreCase: true, Scope: "titles"}, n: 2, title: "$1x $1x"},
		{name: "regex in any case", in: FindReplaceInput{Find: `^a(l)pha`, Replace: "${1}", Regex: true, IgnoreCase: true, Scope: "titles"}, n: 1, title: "l alpha"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestSpec(t)
			p := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Alpha alpha"}))
			res := must[FindReplaceResult](t)(FindReplace(s, tt.in))
			if res.Replacements != tt.n || s.Node(p.PhaseID).Title != tt.title {
				t.Fatalf("replacements %d title %q, want %d %q", res.Replacements, s.Node(p.PhaseID).Title, tt.n, tt.title)
			}
		})
	}
}

// TestAssumptionsOfType: the filter reads the [type] tag in any case.
func TestAssumptionsOfType(t *testing.T) {
	s := newTestSpec(t)
	must[AddedAssumption](t)(AddTaggedAssumption(s, "constraint", "Runs on Linux"))
	must[AddedAssumption](t)(AddTaggedAssumption(s, "requirement", "Needs Go 1.26"))
	must[AddedAssumption](t)(AddTaggedAssumption(s, "", "Untagged"))
	for kind, want := range map[string][]string{
		"":            {"[constraint] Runs on Linux", "[requirement] Needs Go 1.26", "Untagged"},
		"Constraint":  {"[constraint] Runs on Linux"},
		"requirement": {"[requirement] Needs Go 1.26"},
		"other":       {},
	} {
		if got := AssumptionsOfType(s, kind); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, want %v", kind, got, want)
		}
	}
}

// TestStateOfFoundryKeys: lifecycle state carries foundry's task counts and
// can_archive.
func TestStateOfFoundryKeys(t *testing.T) {
	s := threeChained(t)
	RecomputeHeader(s)
	st := StateOf(s)
	if st.TotalTasks != s.Header.TotalTasks || st.TotalTasks == 0 || st.CompletedTasks != 0 || !st.CanArchive {
		t.Fatalf("%+v", st)
	}
	if _, err := MoveLifecycle(s, LifecycleArchived, false); err != nil {
		t.Fatal(err)
	}
	if st := StateOf(s); !st.CanArchive {
		t.Fatalf("archived: %+v", st)
	}
}
