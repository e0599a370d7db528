package specs

import (
	"reflect"
	"testing"
	"time"
)

func TestCompareIDs(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"task-1-2", "task-1-10", -1},
		{"task-1-10", "task-1-2", 1},
		{"task-1-2", "task-1-2", 0},
		{"task-2-1", "task-10-1", -1},
		{"phase-9", "phase-10", -1},
		{"task-1", "task-1-1", -1},
		{"task-1-2-1", "task-1-10", -1},
		{"a", "b", -1},
		{"task-01", "task-1", -1}, // numeric tie falls back to bytes
		{"verify-1-1", "task-1-1", 1},
		{"", "a", -1},
		{"", "", 0},
		{"1", "a", -1},            // a digit against a letter compares bytes
		{"task-1", "task-1a", -1}, // the longer rest is greater
		{"a10", "a9b", 1},
		{"00", "0", 1},     // equal numbers, then bytes
		{"a01b", "a1a", 1}, // equal numbers, the rest decides
		{"x007y", "x7y", -1},
		{"task-100", "task-99-1", 1},
	}
	for _, c := range cases {
		if got := CompareIDs(c.a, c.b); got != c.want {
			t.Errorf("CompareIDs(%q,%q)=%d want %d", c.a, c.b, got, c.want)
		}
		if got := CompareIDs(c.b, c.a); got != -c.want {
			t.Errorf("CompareIDs(%q,%q)=%d want %d (antisymmetry)", c.b, c.a, got, -c.want)
		}
	}
	ids := []string{"task-1-10", "task-1-2", "phase-10", "phase-2", "task-1-1", "task-1-2-1"}
	SortIDs(ids)
	want := []string{"phase-2", "phase-10", "task-1-1", "task-1-2", "task-1-2-1", "task-1-10"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("SortIDs = %v want %v", ids, want)
	}
}

func TestSlugAndSpecID(t *testing.T) {
	cases := map[string]string{
		"My Feature":           "my-feature",
		"  --Hello, World!-- ": "hello-world",
		"Ünïcode ß":            "n-code",
		"":                     "spec",
		"!!!":                  "spec",
		"API v2.0 (beta)":      "api-v2-0-beta",
	}
	for in, want := range cases {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q)=%q want %q", in, got, want)
		}
	}
	now := time.Date(2025, 3, 4, 23, 59, 0, 0, time.FixedZone("x", -3600))
	taken := map[string]bool{}
	exists := func(id string) bool { return taken[id] }
	id1 := GenerateSpecID("My Feature", now, exists)
	if id1 != "my-feature-2025-03-05-001" {
		t.Fatalf("got %s", id1)
	}
	taken[id1] = true
	if id2 := GenerateSpecID("my feature", now, exists); id2 != "my-feature-2025-03-05-002" {
		t.Fatalf("got %s", id2)
	}
}

func TestNodeIDs(t *testing.T) {
	s := newTestSpec(t)
	p1 := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "One"}))
	if p1.PhaseID != "phase-1" || !reflect.DeepEqual(p1.VerifyIDs, []string{"verify-1-1", "verify-1-2"}) {
		t.Fatalf("phase ids: %+v", p1)
	}
	a := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"}))
	b := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "b"}))
	sub := must[string](t)(AddTask(s, b, TaskInput{Type: TypeSubtask, Title: "b.1"}))
	sub2 := must[string](t)(AddTask(s, sub, TaskInput{Type: TypeSubtask, Title: "b.1.1"}))
	r := must[string](t)(AddTask(s, "phase-1", TaskInput{Type: TypeResearch, Title: "r"}))
	v := must[string](t)(AddTask(s, "phase-1", TaskInput{Type: TypeVerify, Title: "v"}))
	got := []string{a, b, sub, sub2, r, v}
	want := []string{"task-1-1", "task-1-2", "task-1-2-1", "task-1-2-1-1", "research-1-1", "verify-1-3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ids %v want %v", got, want)
	}
	// Children order: tasks before the trailing verify nodes.
	want = []string{"task-1-1", "task-1-2", "research-1-1", "verify-1-1", "verify-1-2", "verify-1-3"}
	if got := s.Node("phase-1").Children.Slice(); !reflect.DeepEqual(got, want) {
		t.Fatalf("children %v want %v", got, want)
	}
	// Removing the last task does not reuse a taken id elsewhere.
	_, err := RemoveTask(s, a, false)
	noErr(t, err)
	p2 := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Two"}))
	if p2.PhaseID != "phase-2" {
		t.Fatal(p2.PhaseID)
	}
	noErr(t, MoveTask(s, b, "phase-2", at(0)))
	if id := must[string](t)(AddTask(s, "phase-2", TaskInput{Title: "c"})); id != "task-2-1" {
		t.Fatalf("got %s", id)
	}
	// task-1-2 now lives in phase-2; a new phase-1 task must not collide.
	if id := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "d"})); id != "task-1-3" && id != "task-1-1" {
		t.Fatalf("got %s", id)
	}
	mustNoViolations(t, s, "ids")
}
