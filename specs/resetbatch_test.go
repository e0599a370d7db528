package specs

import (
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
)

// TestResetTasks: reset-batch's task_ids resets the named tasks in
// progress whatever their age; any id that cannot be reset fails the call
// before anything changes; without ids the stale rule applies.
func TestResetTasks(t *testing.T) {
	s := twoPhases(t)
	for _, id := range []string{"task-1-1", "task-1-2"} {
		if _, err := Start(s, id, TransitionOptions{Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	now := testClock().Now()
	for _, c := range []struct {
		name string
		ids  []string
		code string
	}{
		{"none", []string{}, errcode.MissingRequired},
		{"twice", []string{"task-1-1", "task-1-1"}, errcode.InvalidFormat},
		{"unknown", []string{"task-1-1", "task-9-9"}, errcode.TaskNotFound},
		{"not in progress", []string{"task-1-1", "task-1-3"}, errcode.InvalidTransition},
		{"a phase", []string{"phase-1"}, errcode.InvalidTransition},
	} {
		before := docJSON(t, s)
		_, err := ResetBatchOf(s, &appended{}, now, c.ids, 24, TransitionOptions{})
		mustCode(t, err, c.code)
		if docJSON(t, s) != before {
			t.Fatalf("%s: a refused reset changed the spec", c.name)
		}
	}
	// Without ids, fresh tasks are not stale: nothing is reset.
	b := must[ResetBatch](t)(ResetBatchOf(s, &appended{}, now, nil, 24, TransitionOptions{}))
	if b.Count != 0 {
		t.Fatalf("stale rule reset fresh tasks: %+v", b)
	}
	j := &appended{}
	b = must[ResetBatch](t)(ResetBatchOf(s, j, now.Add(time.Minute), []string{"task-1-2"}, 24, TransitionOptions{Agent: "b"}))
	if b.Count != 1 || b.Reset[0].TaskID != "task-1-2" || s.Node("task-1-2").Status != StatusPending || s.Node("task-1-1").Status != StatusInProgress {
		t.Fatalf("reset by id: %+v", b)
	}
	if len(j.entries) != 1 || j.entries[0].TaskID != "task-1-2" {
		t.Fatalf("journal: %+v", j.entries)
	}
	mustNoViolations(t, s, "reset by id")
}
