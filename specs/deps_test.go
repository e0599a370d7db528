package specs

import (
	"reflect"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// twoPhases builds phase-1 {task-1-1, task-1-2, task-1-3} and phase-2
// {task-2-1, task-2-2} (phase-2 blocked by phase-1), without scaffolds.
func twoPhases(t *testing.T) *Spec {
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "One"}, []TaskInput{{Title: "a"}, {Title: "b"}, {Title: "c"}, {Type: TypeVerify, Title: "v"}}))
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Two"}, []TaskInput{{Title: "d"}, {Title: "e"}, {Type: TypeVerify, Title: "v"}}))
	return s
}

func TestAddDependencyReciprocal(t *testing.T) {
	s := twoPhases(t)
	if got := s.Node("phase-2").Dependencies.BlockedBy; !reflect.DeepEqual(got, []string{"phase-1"}) {
		t.Fatalf("phase link: %v", got)
	}
	noErr(t, AddDependency(s, "task-1-1", "task-1-2", "")) // default blocks
	if !containsString(s.Node("task-1-2").Dependencies.BlockedBy, "task-1-1") || !containsString(s.Node("task-1-1").Dependencies.Blocks, "task-1-2") {
		t.Fatal("blocks edge not reciprocal")
	}
	noErr(t, AddDependency(s, "task-1-3", "task-1-2", "blocked_by"))
	if !containsString(s.Node("task-1-3").Dependencies.BlockedBy, "task-1-2") || !containsString(s.Node("task-1-2").Dependencies.Blocks, "task-1-3") {
		t.Fatal("blocked_by edge not reciprocal")
	}
	noErr(t, AddDependency(s, "task-2-1", "task-1-1", "depends"))
	mustCode(t, AddDependency(s, "task-2-1", "task-1-1", "depends"), errcode.DuplicateEntry)
	mustCode(t, AddDependency(s, "task-1-1", "task-1-2", "blocks"), errcode.DuplicateEntry)
	mustCode(t, AddDependency(s, "task-1-1", "task-1-1", "blocks"), errcode.SelfReference)
	e := mustCode(t, AddDependency(s, "task-1-1", "task-9-9", "blocks"), errcode.TaskNotFound)
	if e.Details["field"] != "target_id" || len(e.Matches()) == 0 {
		t.Fatalf("not found error: %+v", e)
	}
	mustCode(t, AddDependency(s, "nope", "task-1-1", "blocks"), errcode.TaskNotFound)
	mustCode(t, AddDependency(s, "task-1-1", "task-1-2", "before"), errcode.InvalidFormat)
	mustCode(t, AddDependency(s, RootID, "task-1-2", "blocks"), errcode.Validation)
	mustNoViolations(t, s, "deps")

	noErr(t, RemoveDependency(s, "task-1-1", "task-1-2", "blocks"))
	if containsString(s.Node("task-1-2").Dependencies.BlockedBy, "task-1-1") || containsString(s.Node("task-1-1").Dependencies.Blocks, "task-1-2") {
		t.Fatal("remove left a half edge")
	}
	mustCode(t, RemoveDependency(s, "task-1-1", "task-1-2", "blocks"), errcode.DependencyNotFound)
	noErr(t, RemoveDependency(s, "task-2-1", "task-1-1", "depends"))
	mustCode(t, RemoveDependency(s, "task-2-1", "task-1-1", "depends"), errcode.DependencyNotFound)
	noErr(t, RemoveDependency(s, "task-1-3", "task-1-2", "blocked_by"))
	mustNoViolations(t, s, "deps removed")
}

func TestCycleDetection(t *testing.T) {
	cases := []struct {
		name       string
		setup      [][3]string
		task, tgt  string
		typ        string
		wantCycle  bool
		cycleFirst string
	}{
		{name: "direct", setup: [][3]string{{"task-1-1", "task-1-2", "blocks"}}, task: "task-1-2", tgt: "task-1-1", typ: "blocks", wantCycle: true},
		{name: "transitive", setup: [][3]string{{"task-1-1", "task-1-2", "blocks"}, {"task-1-2", "task-1-3", "blocks"}}, task: "task-1-3", tgt: "task-1-1", typ: "blocks", wantCycle: true},
		{name: "inherited via phases", task: "task-1-3", tgt: "task-2-1", typ: "blocked_by", wantCycle: true, cycleFirst: "task-1-3"},
		{name: "inherited reversed", task: "task-2-1", tgt: "task-1-3", typ: "blocks", wantCycle: true},
		{name: "forward across phases ok", task: "task-2-1", tgt: "task-1-3", typ: "blocked_by"},
		{name: "task on its own phase", task: "task-1-1", tgt: "phase-1", typ: "blocked_by", wantCycle: true},
		{name: "phase on its own task", task: "phase-1", tgt: "task-1-1", typ: "blocked_by", wantCycle: true},
		{name: "phase 1 waits on phase 2", task: "phase-1", tgt: "phase-2", typ: "blocked_by", wantCycle: true},
		{name: "sibling ok", task: "task-1-1", tgt: "task-1-2", typ: "blocks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := twoPhases(t)
			for _, e := range c.setup {
				noErr(t, AddDependency(s, e[0], e[1], e[2]))
			}
			before := docJSON(t, s)
			err := AddDependency(s, c.task, c.tgt, c.typ)
			if !c.wantCycle {
				noErr(t, err)
				mustNoViolations(t, s, c.name)
				return
			}
			e := mustCode(t, err, errcode.CircularDependency)
			cycle, _ := e.Details["cycle"].([]string)
			if len(cycle) < 2 || cycle[0] != cycle[len(cycle)-1] {
				t.Fatalf("cycle %v", cycle)
			}
			if c.cycleFirst != "" && cycle[0] != c.cycleFirst {
				t.Fatalf("cycle %v", cycle)
			}
			if docJSON(t, s) != before {
				t.Fatal("refused edge changed the spec")
			}
			mustNoViolations(t, s, c.name)
		})
	}
}

func TestInheritedCycleExampleFromSpecModel(t *testing.T) {
	s := twoPhases(t)
	err := AddDependency(s, "task-1-3", "task-2-1", "blocked_by")
	e := mustCode(t, err, errcode.CircularDependency)
	want := []string{"task-1-3", "task-2-1", "phase-2", "phase-1", "task-1-3"}
	if got := e.Details["cycle"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("cycle %v want %v", got, want)
	}
}

func TestBlockersInheritedAndResearch(t *testing.T) {
	s := twoPhases(t)
	if got := Blockers(s, "task-2-2"); !reflect.DeepEqual(got, []string{"phase-1"}) {
		t.Fatalf("inherited blockers %v", got)
	}
	if !IsUnblocked(s, "task-1-1") || IsUnblocked(s, "task-2-1") {
		t.Fatal("IsUnblocked")
	}
	r := must[string](t)(AddTask(s, "phase-1", TaskInput{Type: TypeResearch, Title: "look", BlockingMode: "soft"}))
	noErr(t, AddDependency(s, r, "task-1-2", "blocks"))
	if !IsUnblocked(s, "task-1-2") {
		t.Fatal("soft research must not block")
	}
	_, err := UpdateMetadata(s, r, map[string]any{"blocking_mode": "hard"})
	noErr(t, err)
	if got := Blockers(s, "task-1-2"); !reflect.DeepEqual(got, []string{r}) {
		t.Fatalf("hard research must block: %v", got)
	}
	if Blockers(s, "nope") != nil {
		t.Fatal("unknown id")
	}
}

func TestFindDeadlock(t *testing.T) {
	d := loadFixture(t, "foundry_cycle.json")
	s := FromDocument(*d)
	cycle := FindDeadlock(s)
	if len(cycle) == 0 {
		t.Fatal("expected a deadlock")
	}
	if vs := CheckInvariants(s); len(vs) != 1 || vs[0].Code != "CYCLE" {
		t.Fatalf("invariants %v", vs)
	}
	if FindDeadlock(twoPhases(t)) != nil {
		t.Fatal("false positive")
	}
}
