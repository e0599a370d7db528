package specs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestNextTask(t *testing.T) {
	s := twoPhases(t)
	seq := []string{}
	for i := 0; i < 10; i++ {
		r := NextTask(s)
		if !r.Found {
			if !r.SpecComplete || r.Hint == "" {
				t.Fatalf("end: %+v", r)
			}
			break
		}
		seq = append(seq, r.TaskID)
		_, err := Start(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
		_, err = Complete(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
	}
	want := []string{"task-1-1", "task-1-2", "task-1-3", "verify-1-1", "task-2-1", "task-2-2", "verify-2-1"}
	if !reflect.DeepEqual(seq, want) {
		t.Fatalf("order %v want %v", seq, want)
	}
}

func TestNextTaskRules(t *testing.T) {
	s := twoPhases(t)
	// Verify nodes wait for the rest of the phase; dependencies are honoured.
	noErr(t, AddDependency(s, "task-1-2", "task-1-1", "blocks"))
	if r := NextTask(s); r.TaskID != "task-1-2" {
		t.Fatal(r.TaskID)
	}
	_, err := Start(s, "task-1-2", TransitionOptions{})
	noErr(t, err)
	// In-progress phase first; task-1-1 is blocked by task-1-2 (in progress).
	if r := NextTask(s); r.TaskID != "task-1-3" {
		t.Fatal(r.TaskID)
	}
	_, err = Block(s, "task-1-3", TransitionOptions{Reason: "waiting"})
	noErr(t, err)
	r := NextTask(s)
	if r.Found {
		t.Fatalf("found %s", r.TaskID)
	}
	if r.SpecComplete || !reflect.DeepEqual(r.InProgress, []string{"task-1-2"}) || len(r.Blocked) < 2 || r.Hint == "" {
		t.Fatalf("%+v", r)
	}
	got := map[string][]string{}
	for _, b := range r.Blocked {
		got[b.TaskID] = b.WaitingOn
	}
	if !reflect.DeepEqual(got["task-1-1"], []string{"task-1-2"}) || !reflect.DeepEqual(got["task-2-1"], []string{"phase-1"}) {
		t.Fatalf("blocked %+v", r.Blocked)
	}
	// An unlinked later phase is picked while phase-1 is stuck.
	no := false
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Free", LinkPrevious: &no}, []TaskInput{{Title: "f"}}))
	if r := NextTask(s); r.TaskID != "task-3-1" || r.PhaseID != "phase-3" {
		t.Fatalf("%+v", r)
	}
	// Empty spec.
	e := NextTask(newTestSpec(t))
	if e.Found || e.SpecComplete || e.Hint == "" || e.Blocked == nil || e.InProgress == nil {
		t.Fatalf("%+v", e)
	}
}

func TestExecutionOrder(t *testing.T) {
	s := twoPhases(t)
	must[string](t)(AddTask(s, "task-1-1", TaskInput{Type: TypeSubtask, Title: "s"}))
	var ids []string
	for n := range ExecutionOrder(s, "phase-1") {
		ids = append(ids, n.ID)
	}
	want := []string{"phase-1", "task-1-1", "task-1-1-1", "task-1-2", "task-1-3", "verify-1-1"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatal(ids)
	}
	count := 0
	for range ExecutionOrder(s, RootID) {
		count++
		if count == 3 {
			break
		}
	}
}

func TestLifecycle(t *testing.T) {
	s := twoPhases(t)
	cases := []struct {
		to    Lifecycle
		force bool
		code  string
		warn  bool
	}{
		{LifecyclePending, false, "", true},
		{LifecycleCompleted, false, errcode.InvalidTransition, false},
		{LifecycleActive, false, "", false},
		{LifecycleCompleted, false, errcode.InvalidTransition, false},
		{LifecycleCompleted, true, "", true},
		{LifecyclePending, false, errcode.InvalidTransition, false},
		{LifecycleArchived, false, "", false},
		{LifecycleCompleted, false, errcode.InvalidTransition, false},
		{LifecycleActive, false, "", false},
		{"deleted", false, errcode.InvalidFormat, false},
	}
	for i, c := range cases {
		w, err := MoveLifecycle(s, c.to, c.force)
		if core.CodeOf(err) != c.code {
			t.Fatalf("case %d →%s: %v", i, c.to, err)
		}
		if c.code == "" && s.Header.Lifecycle != c.to {
			t.Fatalf("case %d: %s", i, s.Header.Lifecycle)
		}
		if (len(w) > 0) != c.warn {
			t.Fatalf("case %d: warnings %v", i, w)
		}
		if c.to == LifecycleArchived && c.code == "" && (s.Root().Status != StatusArchived || s.Header.Status != StatusArchived) {
			t.Fatal("archive must mark the root archived")
		}
		mustNoViolations(t, s, "lifecycle")
	}
	if s.Root().Status != StatusPending {
		t.Fatal("leaving archived recomputes the root")
	}
	// 100% completes without force.
	for n := range ExecutionOrder(s, RootID) {
		if n.IsWorkLeaf() {
			_, err := Complete(s, n.ID, TransitionOptions{Force: true})
			noErr(t, err)
		}
	}
	_, err := MoveLifecycle(s, LifecycleCompleted, false)
	noErr(t, err)
	if !reflect.DeepEqual(AllowedLifecycleMoves(""), []Lifecycle{LifecycleActive, LifecycleArchived}) {
		t.Fatal("allowed")
	}
}

// TestActionableSkipsFailedTasksAndNextNamesThem: a failed task is not
// actionable (for next or for a batch); when only failed work remains, next
// lists it with its retry count and reason and the hint names it; reopen
// makes it actionable again, in its place.
func TestActionableSkipsFailedTasksAndNextNamesThem(t *testing.T) {
	s := twoPhases(t)
	_, err := Start(s, "task-1-1", TransitionOptions{})
	noErr(t, err)
	_, err = Fail(s, "task-1-1", TransitionOptions{Reason: "tests fail"})
	noErr(t, err)
	actionable := func() []string {
		var ids []string
		for _, n := range Actionable(s) {
			ids = append(ids, n.ID)
		}
		return ids
	}
	if got := actionable(); len(got) == 0 || got[0] != "task-1-2" || NextTask(s).TaskID != got[0] {
		t.Fatalf("actionable %v, next %s", got, NextTask(s).TaskID)
	}
	for _, id := range []string{"task-1-2", "task-1-3"} {
		_, err = Complete(s, id, TransitionOptions{})
		noErr(t, err)
	}
	if got := actionable(); len(got) != 0 {
		t.Fatalf("only the failed task is left in phase-1 (phase-2 waits for it), actionable %v", got)
	}
	r := NextTask(s)
	if r.Found || len(r.Failed) != 1 || r.Failed[0] != (FailedTask{TaskID: "task-1-1", RetryCount: 1, Reason: "tests fail"}) ||
		!strings.Contains(r.Hint, "task-1-1") || !strings.Contains(r.Hint, "reopen") {
		t.Fatalf("%+v", r)
	}
	_, err = Reopen(s, "task-1-1", TransitionOptions{Reason: "retry"})
	noErr(t, err)
	if got := actionable(); len(got) != 1 || got[0] != "task-1-1" {
		t.Fatalf("after reopen: %v", got)
	}
}

// withCleanup is s's document with a pending task "cleanup" whose id names
// no parent: under spec-root when underRoot, else an orphan (no parent, in
// no children list).
func withCleanup(s *Spec, underRoot bool) Document {
	d := s.Document()
	n := &Node{ID: "cleanup", Type: TypeTask, Title: "Clean up", Status: StatusPending, Children: ChildListOf([]string{}), Metadata: map[string]any{},
		Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}}
	if underRoot {
		n.Parent = RootID
		d.Hierarchy[RootID].Children = d.Hierarchy[RootID].Children.Inserted(d.Hierarchy[RootID].Children.Len(), "cleanup")
	}
	d.Hierarchy["cleanup"] = n
	return d
}

// A task under spec-root that can start is named by next, with the phase
// to move it into (the first one next walks), ahead of the blocked tasks;
// moved there, next offers it.
func TestNextNamesAnUnplacedTask(t *testing.T) {
	s := FromDocument(withCleanup(twoPhases(t), true))
	for _, id := range []string{"task-1-1", "task-1-2", "task-1-3"} {
		_, err := Block(s, id, TransitionOptions{Reason: "waiting"})
		noErr(t, err)
	}
	r := NextTask(s)
	if r.Found || !reflect.DeepEqual(r.Unplaced, []string{"cleanup"}) || r.IntoPhase != "phase-1" ||
		!strings.Contains(r.Hint, "cleanup") || !strings.Contains(r.Hint, "phase-1") {
		t.Fatalf("%+v", r)
	}
	if got := Nothing(s, r).Next; *got != (NextStep{Kind: StepIntoPhase, SpecID: s.Header.SpecID, TaskID: "cleanup", Parent: "phase-1"}) {
		t.Fatalf("next step %+v", got)
	}
	noErr(t, MoveTask(s, "cleanup", "phase-1", nil))
	if r := NextTask(s); !r.Found || r.TaskID != "cleanup" || r.PhaseID != "phase-1" {
		t.Fatalf("after the move: %+v", r)
	}
}

// With no phase open, the step is spec fix, which makes a phase for it.
func TestNextUnplacedWithoutAPhase(t *testing.T) {
	s := FromDocument(withCleanup(newTestSpec(t), true))
	r := NextTask(s)
	if r.Found || r.IntoPhase != "" || Nothing(s, r).Next.Kind != StepFixSpec {
		t.Fatalf("%+v", r)
	}
	d := s.Document()
	fixed := Fix(&d, FixOptions{Clock: testClock()}).Document
	if p := fixed.Hierarchy["phase-1"]; p == nil || p.Type != TypePhase || p.Title != "Phase 1" || fixed.Hierarchy["cleanup"].Parent != "phase-1" {
		t.Fatalf("fix: phase-1 %+v, cleanup under %q", p, fixed.Hierarchy["cleanup"].Parent)
	}
	s = FromDocument(*fixed)
	mustNoViolations(t, s, "fixed")
	if r := NextTask(s); !r.Found || r.TaskID != "cleanup" {
		t.Fatalf("after fix: %+v", r)
	}
}

// An orphan whose id names no parent joins the first open phase; with
// every phase done, a new one numbered after them.
func TestFixPutsAnOrphanInAPhase(t *testing.T) {
	s := twoPhases(t)
	d := withCleanup(s, false)
	if got := Fix(&d, FixOptions{Clock: testClock()}).Document.Hierarchy["cleanup"].Parent; got != "phase-1" {
		t.Fatalf("open phases: cleanup under %q, want phase-1", got)
	}
	for {
		r := NextTask(s)
		if !r.Found {
			break
		}
		_, err := Start(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
		_, err = Complete(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
	}
	d = withCleanup(s, false)
	fixed := Fix(&d, FixOptions{Clock: testClock()}).Document
	if p := fixed.Hierarchy["phase-3"]; p == nil || p.Title != "Phase 3" || fixed.Hierarchy["cleanup"].Parent != "phase-3" ||
		!reflect.DeepEqual(fixed.Hierarchy[RootID].Children.Slice(), []string{"phase-1", "phase-2", "phase-3"}) {
		t.Fatalf("every phase done: phase-3 %+v, cleanup under %q", p, fixed.Hierarchy["cleanup"].Parent)
	}
	s = FromDocument(*fixed)
	mustNoViolations(t, s, "fixed")
	if r := NextTask(s); !r.Found || r.TaskID != "cleanup" || r.PhaseID != "phase-3" {
		t.Fatalf("after fix: %+v", r)
	}
}

// A phase whose status is a synonym still to be fixed (todo) is open: the
// orphan joins it rather than a new phase.
func TestFixOrphanJoinsASynonymOpenPhase(t *testing.T) {
	d := withCleanup(twoPhases(t), false)
	d.Hierarchy["phase-1"].Status = "todo"
	fixed := Fix(&d, FixOptions{Clock: testClock()}).Document
	if got := fixed.Hierarchy["cleanup"].Parent; got != "phase-1" || fixed.Hierarchy["phase-3"] != nil {
		t.Fatalf("cleanup under %q (phase-3 %v), want phase-1", got, fixed.Hierarchy["phase-3"])
	}
}

// next's step for a task under spec-root with no phase to walk is spec
// fix, which must not move it into a phase blocked by an unfinished
// prerequisite (here the task itself): there next still would not offer
// it. Fix makes a new phase instead, and next offers the task.
func TestFixOrphanSkipsABlockedPhase(t *testing.T) {
	s := twoPhases(t)
	for {
		r := NextTask(s)
		if !r.Found || r.PhaseID != "phase-1" {
			break
		}
		_, err := Start(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
		_, err = Complete(s, r.TaskID, TransitionOptions{})
		noErr(t, err)
	}
	s = FromDocument(withCleanup(s, true))
	noErr(t, AddDependency(s, "phase-2", "cleanup", "blocked_by"))
	if r := NextTask(s); r.IntoPhase != "" || Nothing(s, r).Next.Kind != StepFixSpec {
		t.Fatalf("next: %+v", r)
	}
	d := s.Document()
	fixed := Fix(&d, FixOptions{Clock: testClock()}).Document
	if got := fixed.Hierarchy["cleanup"].Parent; got != "phase-3" {
		t.Fatalf("cleanup under %q, want the new phase-3", got)
	}
	if r := NextTask(FromDocument(*fixed)); !r.Found || r.TaskID != "cleanup" {
		t.Fatalf("after fix: %+v", r)
	}
}

// A subtask left under spec-root (foundry's orphan fix puts it there) may
// not be moved into a phase with task move (INVALID_PARENT), so next's step
// for it is spec fix, which may place it; the step must run as given.
func TestNextUnplacedSubtaskStepRuns(t *testing.T) {
	d := withCleanup(twoPhases(t), true)
	d.Hierarchy["cleanup"].Type = TypeSubtask
	s := FromDocument(d)
	for _, id := range []string{"task-1-1", "task-1-2", "task-1-3"} {
		_, err := Block(s, id, TransitionOptions{Reason: "waiting"})
		noErr(t, err)
	}
	r := NextTask(s)
	step := Nothing(s, r).Next
	if step.Kind == StepIntoPhase {
		noErr(t, MoveTask(s, step.TaskID, step.Parent, nil))
	} else if step.Kind != StepFixSpec {
		t.Fatalf("step %+v", step)
	}
	if step.Kind == StepFixSpec {
		d = s.Document()
		s = FromDocument(*Fix(&d, FixOptions{Clock: testClock()}).Document)
	}
	if r := NextTask(s); !r.Found || r.TaskID != "cleanup" {
		t.Fatalf("after %s: %+v", step.Kind, r)
	}
}
