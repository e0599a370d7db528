package specs

import (
	"strings"
	"testing"
)

// idPinSpec is a spec whose hierarchy is given as parent → children (node
// types follow the ids' prefixes; "custom" is a phase), built directly so
// that it can hold what authoring would not produce: gaps, leading zeros,
// ids that are not prefix-N, tasks moved in from other phases.
func idPinSpec(tree map[string][]string) *Spec {
	src := MemorySource{}
	typeOf := func(id string) NodeType {
		switch {
		case id == RootID:
			return TypeSpec
		case id == "custom" || strings.HasPrefix(id, "phase-"):
			return TypePhase
		case strings.HasPrefix(id, "verify-"):
			return TypeVerify
		case strings.HasPrefix(id, "research-"):
			return TypeResearch
		case strings.HasPrefix(id, "group-"):
			return TypeGroup
		case strings.Count(id, "-") > 2:
			return TypeSubtask
		}
		return TypeTask
	}
	for parent, kids := range tree {
		for _, id := range append([]string{parent}, kids...) {
			if src[id] == nil {
				src[id] = &Node{ID: id, Type: typeOf(id), Title: id, Status: StatusPending}
			}
		}
		src[parent].Children = ChildListOf(kids)
		for _, id := range kids {
			src[id].Parent = parent
		}
	}
	return NewSpecView(Header{SpecID: "pin"}, src)
}

// TestNewNodeIDSequencePinned pins the id rule of NewNodeID and NewPhaseID
// (one more than the largest number among the parent's children with the
// prefix, then the first free one in the whole spec) on unusual
// hierarchies, so that a faster way of finding that number keeps producing
// exactly these ids.
func TestNewNodeIDSequencePinned(t *testing.T) {
	s := idPinSpec(map[string][]string{
		RootID:      {"phase-1", "phase-3", "custom", "phase-x"},
		"phase-1":   {"task-1-1", "task-1-2", "task-1-10", "task-1-007", "task-1--5", "task-1-x", "task-2-5", "group-1-1", "research-1-2", "verify-1-1"},
		"task-1-2":  {"task-1-2-2", "task-1-2-1-1"},
		"group-1-1": {"task-1-12", "task-3-1"},
		"phase-3":   {},
		"task-2-5":  {"task-2-5-1"},
	})
	cases := []struct {
		parent string
		typ    NodeType
		want   string
	}{
		{"phase-1", TypeTask, "task-1-11"},        // max is 10 (007 is 7, "x" and "-5" are not counted); 12 lives in a group
		{"phase-1", TypeSubtask, "task-1-11"},     // a phase's subtask takes the task prefix
		{"phase-1", TypeVerify, "verify-1-2"},     // after verify-1-1
		{"phase-1", TypeResearch, "research-1-3"}, // after research-1-2
		{"phase-1", TypeGroup, "group-1-2"},       // after group-1-1
		{"group-1-1", TypeTask, "task-1-13"},      // a group's children: phase number of its phase
		{"task-1-2", TypeSubtask, "task-1-2-3"},   // extends the parent's id after its largest child
		{"task-1-2", TypeTask, "task-1-2-3"},      // a task under a task too
		{"task-1-2", TypeVerify, "verify-1-2"},    // a verify under a task: the phase's verify prefix, first free
		{"task-2-5", TypeSubtask, "task-2-5-2"},   // a task moved in from phase 2 keeps extending its own id
		{"task-1-10", TypeSubtask, "task-1-10-1"}, // a leaf
		{"phase-3", TypeTask, "task-3-2"},         // task-3-1 is taken elsewhere
		{"custom", TypeTask, "task-3-2"},          // a phase without a number: its position (3rd)
		{"phase-x", TypeVerify, "verify-4-1"},     // 4th child of the root
		{"task-1-2-1-1", TypeSubtask, "task-1-2-1-1-1"},
	}
	for _, c := range cases {
		if got := NewNodeID(s, c.parent, c.typ); got != c.want {
			t.Errorf("NewNodeID(%s, %s) = %s, want %s", c.parent, c.typ, got, c.want)
		}
	}
	if got := NewPhaseID(s); got != "phase-4" {
		t.Errorf("NewPhaseID = %s, want phase-4", got)
	}
	s2 := idPinSpec(map[string][]string{RootID: {"phase-1", "phase-3"}, "phase-1": {"task-4-1"}})
	if got := NewPhaseID(s2); got != "phase-5" {
		t.Errorf("NewPhaseID with task-4-1 taken = %s, want phase-5", got)
	}
}

// TestAddTaskSequencePinned pins the ids and positions of a run of adds
// (the answer's position is the node's index among its parent's children)
// and of adds after a removal, a move and an explicit position.
func TestAddTaskSequencePinned(t *testing.T) {
	s := newTestSpec(t)
	p := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "One"}))
	type step struct {
		parent string
		in     TaskInput
		id     string
		pos    int
	}
	steps := []step{
		{p.PhaseID, TaskInput{Title: "a"}, "task-1-1", 0},
		{p.PhaseID, TaskInput{Title: "b"}, "task-1-2", 1},
		{p.PhaseID, TaskInput{Title: "v", Type: TypeVerify}, "verify-1-3", 4},
		{p.PhaseID, TaskInput{Title: "c", Position: at(0)}, "task-1-3", 0},
		{p.PhaseID, TaskInput{Title: "r", Type: TypeResearch}, "research-1-1", 3},
		{"task-1-2", TaskInput{Title: "s", Type: TypeSubtask}, "task-1-2-1", 0},
		{p.PhaseID, TaskInput{Title: "d"}, "task-1-4", 4},
	}
	for _, st := range steps {
		got, err := AddTaskView(s, st.parent, st.in)
		noErr(t, err)
		if got.TaskID != st.id || got.Position != st.pos {
			t.Fatalf("add %q under %s = %s at %d, want %s at %d", st.in.Title, st.parent, got.TaskID, got.Position, st.id, st.pos)
		}
		if i := indexOf(s.Node(st.parent).Children.Slice(), got.TaskID); i != got.Position {
			t.Fatalf("%s is at %d, answer says %d", got.TaskID, i, got.Position)
		}
	}
	// Removing the largest frees its number; moving one out does too.
	_, err := RemoveTask(s, "task-1-4", false)
	noErr(t, err)
	if got := must[AddedTask](t)(AddTaskView(s, p.PhaseID, TaskInput{Title: "e"})); got.TaskID != "task-1-4" {
		t.Fatalf("after removing task-1-4: %s", got.TaskID)
	}
	p2 := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Two"}))
	noErr(t, MoveTask(s, "task-1-4", p2.PhaseID, nil))
	if got := must[AddedTask](t)(AddTaskView(s, p.PhaseID, TaskInput{Title: "f"})); got.TaskID != "task-1-5" {
		t.Fatalf("after moving task-1-4 out: %s (task-1-4 still exists elsewhere)", got.TaskID)
	}
	if got := must[AddedTask](t)(AddTaskView(s, p2.PhaseID, TaskInput{Title: "g"})); got.TaskID != "task-2-1" || got.Position != 1 {
		t.Fatalf("phase-2 add: %s at %d", got.TaskID, got.Position)
	}
	mustNoViolations(t, s, "pinned adds")
}
