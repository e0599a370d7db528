package specs

import (
	"errors"
	"testing"
)

// taskJournal is a JournalReader holding entries by task (newest first);
// failOn makes TaskEntries fail for that task.
type taskJournal struct {
	appended
	byTask map[string][]JournalEntry
	failOn string
}

func (j *taskJournal) TaskEntries(taskID string, _ uint64, limit int, _ func(*JournalEntry) bool) ([]JournalEntry, bool, error) {
	if taskID == j.failOn {
		return nil, false, errors.New("journal down")
	}
	es := j.byTask[taskID]
	return es[:min(limit, len(es))], len(es) > limit, nil
}

// TestSurroundings covers what Surroundings reads: the previous sibling
// and its newest entry, the parent only when it is work, the phase, the
// task's newest entries (at most PrepareJournalEntries) and the journal's
// errors.
func TestSurroundings(t *testing.T) {
	s := twoPhases(t)
	sub := must[string](t)(AddTask(s, "task-1-2", TaskInput{Type: TypeSubtask, Title: "s1"}))
	sub2 := must[string](t)(AddTask(s, "task-1-2", TaskInput{Type: TypeSubtask, Title: "s2"}))
	entry := func(title string) JournalEntry { return JournalEntry{Title: title} }
	j := &taskJournal{byTask: map[string][]JournalEntry{
		"task-1-1": {entry("a2"), entry("a1")},
		"task-1-2": {entry("b4"), entry("b3"), entry("b2"), entry("b1")},
		sub:        {entry("s1")},
	}}

	ts, err := Surroundings(s, j, s.Node("task-1-2"))
	noErr(t, err)
	if ts.Previous == nil || ts.Previous.ID != "task-1-1" || ts.PreviousEntry == nil || ts.PreviousEntry.Title != "a2" ||
		ts.Parent != nil || ts.Phase == nil || ts.Phase.ID != "phase-1" || len(ts.Journal) != 3 || ts.Journal[0].Title != "b4" {
		t.Fatalf("task-1-2: %+v", ts)
	}
	ts, err = Surroundings(s, j, s.Node(sub2))
	noErr(t, err)
	if ts.Previous == nil || ts.Previous.ID != sub || ts.PreviousEntry == nil || ts.PreviousEntry.Title != "s1" ||
		ts.Parent == nil || ts.Parent.ID != "task-1-2" || len(ts.Journal) != 0 || !ts.Deps.CanStart {
		t.Fatalf("%s: %+v", sub2, ts)
	}
	ts, err = Surroundings(s, j, s.Node("task-1-1"))
	noErr(t, err)
	if ts.Previous != nil || ts.PreviousEntry != nil || ts.Parent != nil || len(ts.Journal) != 2 {
		t.Fatalf("task-1-1: %+v", ts)
	}
	ts, err = Surroundings(s, j, s.Node("task-1-3"))
	noErr(t, err)
	if ts.Previous == nil || ts.Previous.ID != "task-1-2" || ts.PreviousEntry == nil || ts.PreviousEntry.Title != "b4" {
		t.Fatalf("task-1-3: %+v", ts)
	}
	if ts, err = Surroundings(s, j, s.Node("task-2-1")); err != nil || ts.Previous != nil || ts.PreviousEntry != nil {
		t.Fatalf("task-2-1: %+v %v", ts, err)
	}
	j.failOn = "task-1-2"
	if _, err := Surroundings(s, j, s.Node("task-1-2")); err == nil {
		t.Fatal("own entries: want the journal's error")
	}
	ts, err = Surroundings(s, j, s.Node("task-1-3"))
	if err == nil || ts.Previous == nil || ts.PreviousEntry != nil || ts.Journal != nil {
		t.Fatalf("previous entry: want the journal's error, got %+v %v", ts, err)
	}
}
