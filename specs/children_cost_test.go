package specs

import (
	"fmt"
	"runtime"
	"testing"
)

// TestAddTaskMemoryDoesNotGrowWithThePhase: a task add to a phase (before
// its verify nodes, in a view over the stored nodes, as every write
// starts) allocates about as much at 8,000 tasks as at 100: the phase's
// children list is not copied (ChildList). Bytes are counted, not time.
func TestAddTaskMemoryDoesNotGrowWithThePhase(t *testing.T) {
	small, large := addTaskBytes(t, 100), addTaskBytes(t, 8000)
	if large > small+2048 {
		t.Fatalf("a task add allocates %.0f bytes at 8,000 tasks, %.0f at 100", large, small)
	}
}

// addTaskBytes is the bytes a task add to a phase of n tasks allocates,
// averaged over a few adds, each in a fresh view of the same nodes.
func addTaskBytes(t *testing.T, n int) float64 {
	s, err := NewSpec(NewSpecInput{Name: "cost"}, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([]TaskInput, n)
	for i := range tasks {
		tasks[i] = TaskInput{Title: fmt.Sprint("task ", i)}
	}
	res, err := AddPhaseBulk(s, PhaseInput{Title: "Load", VerifyScaffold: true}, tasks)
	if err != nil {
		t.Fatal(err)
	}
	put, _ := s.Changes()
	src := MemorySource{}
	src.Apply(put, nil)
	const runs = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		v := NewSpecView(s.Header, src)
		v.Clock = s.Clock
		if _, err := AddTask(v, res.PhaseID, TaskInput{Title: "one more"}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / runs
}
