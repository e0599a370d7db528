package specs

import (
	"reflect"
	"testing"
)

func TestStats(t *testing.T) {
	s := twoPhases(t)
	must[string](t)(AddTask(s, "task-1-1", TaskInput{Type: TypeSubtask, Title: "s", EstimatedHours: f64(2)}))
	must[string](t)(AddTask(s, "phase-2", TaskInput{Type: TypeResearch, Title: "r"}))
	_, err := Complete(s, "task-1-2", TransitionOptions{ActualHours: f64(1.5)})
	noErr(t, err)
	st := Stats(s)
	if st.Phases != 2 || st.Tasks != 5 || st.Subtasks != 1 || st.Verifications != 2 || st.Research != 1 || st.TotalNodes != 12 {
		t.Fatalf("%+v", st)
	}
	if st.MaxDepth != 3 || st.StatusCounts[StatusCompleted] != 1 || st.StatusCounts[StatusPending] != 6 || st.VerificationCoverage != 1 {
		t.Fatalf("%+v", st)
	}
	if st.EstimatedHours != 2 || st.ActualHours != 1.5 || st.Dependencies != 1 || st.TotalTasks != 7 || st.ProgressPercentage != 14 {
		t.Fatalf("%+v", st)
	}
}

func TestAnalyzeDeps(t *testing.T) {
	s := twoPhases(t)
	for _, tgt := range []string{"task-1-2", "task-1-3", "verify-1-1"} {
		noErr(t, AddDependency(s, "task-1-1", tgt, "blocks"))
	}
	noErr(t, AddDependency(s, "task-1-2", "task-1-3", "blocks"))
	a := AnalyzeDeps(s, 0)
	if a.Threshold != 3 || a.DependencyCount != 5 || len(a.Bottlenecks) != 1 || a.Bottlenecks[0].ID != "task-1-1" ||
		a.Bottlenecks[0].Blocks != 3 || a.Bottlenecks[0].Transitive != 3 || len(a.Cycles) != 0 || a.Deadlock != nil {
		t.Fatalf("%+v", a)
	}
	a = AnalyzeDeps(s, 1)
	if len(a.Bottlenecks) != 3 || a.Bottlenecks[1].ID != "phase-1" {
		t.Fatalf("%+v", a.Bottlenecks)
	}
	c := FromDocument(*loadFixture(t, "foundry_cycle.json"))
	a = AnalyzeDeps(c, 0)
	if len(a.Cycles) != 0 || len(a.Deadlock) == 0 {
		t.Fatalf("inherited deadlock only: %+v", a)
	}
	// A direct cycle (written by hand: mutations refuse it).
	e := c.Edit("task-2-1")
	e.Dependencies.BlockedBy = append(e.Dependencies.BlockedBy, "task-1-1")
	e = c.Edit("task-1-1")
	e.Dependencies.Blocks = append(e.Dependencies.Blocks, "task-2-1")
	a = AnalyzeDeps(c, 0)
	if !reflect.DeepEqual(a.Cycles, [][]string{{"task-1-1", "task-2-1"}}) {
		t.Fatalf("%+v", a.Cycles)
	}
}

func TestCompleteness(t *testing.T) {
	s := newTestSpec(t)
	if r := Completeness(s); r.Score != 0 || len(r.Categories) != 3 {
		t.Fatalf("%+v", r)
	}
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P", Description: "d"}, []TaskInput{
		{Title: "a", Description: "d", FilePath: "a.go"},
		{Title: "b"},
		{Title: "c", TaskCategory: "investigation", Description: "d"},
	}))
	r := Completeness(s)
	// titles 6/6, descriptions 3/4 (phase + 3 tasks), file paths 1/2 (c is an investigation)
	want := int(100*(0.25*1+0.40*0.75+0.35*0.5)/1.0 + 0.5)
	if r.Score != want || r.Categories[1].Present != 3 || r.Categories[2].Total != 2 || len(r.Issues) != 2 {
		t.Fatalf("score %d want %d: %+v", r.Score, want, r)
	}
}

func TestDuplicateDetection(t *testing.T) {
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P"}, []TaskInput{
		{Title: "Add the CSV export endpoint", Description: "stream rows"},
		{Title: "add the csv export endpoint!", Description: "something else entirely"},
		{Title: "Add CSV export endpoint handler tests"},
		{Title: "Write docs"},
	}))
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Q"})) // scaffold verify titles repeat: ignored
	r := DuplicateDetection(s, DuplicateOptions{})
	if r.Measure != "jaccard-token-set" || r.Threshold != 0.8 || len(r.Pairs) != 1 {
		t.Fatalf("%+v", r)
	}
	if p := r.Pairs[0]; p.A != "task-1-1" || p.B != "task-1-2" || p.Similarity != 1 {
		t.Fatalf("%+v", p)
	}
	r = DuplicateDetection(s, DuplicateOptions{Threshold: 0.5})
	if len(r.Pairs) != 3 {
		t.Fatalf("%+v", r.Pairs)
	}
	r = DuplicateDetection(s, DuplicateOptions{Threshold: 0.5, MaxPairs: 1})
	if len(r.Pairs) != 1 || !r.Truncated {
		t.Fatalf("%+v", r)
	}
	r = DuplicateDetection(s, DuplicateOptions{Scope: "descriptions"})
	if len(r.Pairs) != 0 {
		t.Fatalf("%+v", r)
	}
	// Brute force agrees with the prefix-filtered candidates.
	for _, th := range []float64{0.3, 0.5, 0.8, 1} {
		r := DuplicateDetection(s, DuplicateOptions{Threshold: th, Scope: "both", MaxPairs: 1000})
		brute := 0
		var texts []struct {
			id   string
			toks []string
		}
		for n := range ExecutionOrder(s, RootID) {
			if n.Type == TypeTask {
				texts = append(texts, struct {
					id   string
					toks []string
				}{n.ID, tokenSet(n.Title + " " + n.Description())})
			}
		}
		for i := range texts {
			for j := i + 1; j < len(texts); j++ {
				if jaccard(texts[i].toks, texts[j].toks) >= th-1e-9 {
					brute++
				}
			}
		}
		if len(r.Pairs) != brute {
			t.Fatalf("threshold %v: %d pairs, brute force %d", th, len(r.Pairs), brute)
		}
	}
}

func TestDiff(t *testing.T) {
	s := twoPhases(t)
	before := s.Document()
	_, err := Start(s, "task-1-1", TransitionOptions{Agent: "x"})
	noErr(t, err)
	must[string](t)(AddTask(s, "phase-2", TaskInput{Title: "new"}))
	_, err = RemoveTask(s, "task-1-3", false)
	noErr(t, err)
	after := s.Document()
	d := DiffDocuments(before, after)
	if !reflect.DeepEqual(d.Added, []string{"task-2-3"}) || !reflect.DeepEqual(d.Removed, []string{"task-1-3"}) {
		t.Fatalf("%+v", d)
	}
	var task *NodeDiff
	for i := range d.Modified {
		if d.Modified[i].ID == "task-1-1" {
			task = &d.Modified[i]
		}
	}
	if task == nil {
		t.Fatalf("%+v", d.Modified)
	}
	fields := map[string]FieldChange{}
	for _, c := range task.Changes {
		fields[c.Field] = c
	}
	if fields["status"].Old != "pending" || fields["status"].New != "in_progress" || fields["metadata.started_by"].New != "x" || fields["metadata.started_by"].Old != nil {
		t.Fatalf("%+v", task.Changes)
	}
	if len(d.Header) == 0 {
		t.Fatal("header changes")
	}
	if got := Diff(before.Hierarchy, before.Hierarchy); len(got.Added)+len(got.Removed)+len(got.Modified) != 0 {
		t.Fatal("self diff")
	}
}

// TestDuplicateDetectionRules pins each step of DuplicateDetection: the
// option defaults, which nodes are compared, the scope's text, the order of
// pairs and the cap.
func TestDuplicateDetectionRules(t *testing.T) {
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P"}, []TaskInput{
		{Title: "Add the CSV export endpoint", Description: "stream rows to the client"},
		{Title: "add the csv export endpoint!", Description: "stream rows to the client"},
		{Title: "Write user docs"},
		{Title: "write user docs"},
		{Title: "x"}, // no token longer than one character: not compared
		{Type: TypeVerify, Title: "Run tests", Description: "go test ./export"},
	}))
	must[string](t)(AddTask(s, "task-1-1", TaskInput{Type: TypeSubtask, Title: "Write user docs", Description: "go test ./export"}))
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Write user docs"})) // a phase is not compared; its scaffold verify nodes are skipped
	pair := func(a, b string, sim float64, field string) DuplicatePair {
		return DuplicatePair{A: a, B: b, Similarity: sim, Field: field}
	}
	tests := []struct {
		name string
		opts DuplicateOptions
		want DuplicateReport
	}{
		{"defaults: titles at 0.8, equal similarity in id order", DuplicateOptions{},
			DuplicateReport{Threshold: 0.8, Measure: "jaccard-token-set", Compared: 6, Pairs: []DuplicatePair{
				pair("task-1-1", "task-1-2", 1, "titles"), pair("task-1-1-1", "task-1-3", 1, "titles"),
				pair("task-1-1-1", "task-1-4", 1, "titles"), pair("task-1-3", "task-1-4", 1, "titles"),
			}}},
		{"a threshold above 1 means 0.8", DuplicateOptions{Threshold: 1.5, MaxPairs: 2},
			DuplicateReport{Threshold: 0.8, Measure: "jaccard-token-set", Compared: 6, Truncated: true, Pairs: []DuplicatePair{
				pair("task-1-1", "task-1-2", 1, "titles"), pair("task-1-1-1", "task-1-3", 1, "titles"),
			}}},
		{"descriptions: a verify node with a description is compared", DuplicateOptions{Threshold: -1, Scope: "descriptions"},
			DuplicateReport{Threshold: 0.8, Measure: "jaccard-token-set", Compared: 4, Pairs: []DuplicatePair{
				pair("task-1-1", "task-1-2", 1, "descriptions"), pair("task-1-1-1", "verify-1-1", 1, "descriptions"),
			}}},
		{"both: title and description together, most similar first", DuplicateOptions{Threshold: 0.3, Scope: "both"},
			DuplicateReport{Threshold: 0.3, Measure: "jaccard-token-set", Compared: 6, Pairs: []DuplicatePair{
				pair("task-1-1", "task-1-2", 1, "both"), pair("task-1-3", "task-1-4", 1, "both"),
				pair("task-1-1-1", "task-1-3", 0.5, "both"), pair("task-1-1-1", "task-1-4", 0.5, "both"),
				pair("task-1-1-1", "verify-1-1", 0.375, "both"),
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DuplicateDetection(s, tt.opts); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
