package specs

import (
	"fmt"
	"testing"
)

var benchSizes = []int{100, 1000, 10000}

// benchSpec builds a committed spec with n tasks in phases of up to 100
// tasks (each with the verify scaffold, phases linked in a chain) and the
// first half of the phases completed. It returns the header and the source.
func benchSpec(tb testing.TB, n int) (Header, MemorySource) {
	tb.Helper()
	s, err := NewSpec(NewSpecInput{Name: "bench"}, testClock(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	perPhase := 100
	if n < perPhase {
		perPhase = n
	}
	phases := n / perPhase
	for p := 1; p <= phases; p++ {
		tasks := make([]TaskInput, perPhase)
		for i := range tasks {
			tasks[i] = TaskInput{Title: fmt.Sprintf("Task %d of phase %d", i+1, p), Description: "Do the thing", FilePath: "x.go"}
		}
		if _, err := AddPhaseBulk(s, PhaseInput{Title: fmt.Sprintf("Phase %d", p), VerifyScaffold: true}, tasks); err != nil {
			tb.Fatal(err)
		}
	}
	for p := 1; p <= phases/2; p++ {
		for _, id := range s.Node(fmt.Sprintf("phase-%d", p)).Children.All() {
			s.Edit(id).Status = StatusCompleted
		}
	}
	RecomputeAll(s)
	put, _ := s.Changes()
	src := MemorySource{}
	src.Apply(put, nil)
	return s.Header.Clone(), src
}

func BenchmarkAddTask(b *testing.B) {
	for _, n := range benchSizes {
		h, src := benchSpec(b, n)
		last := fmt.Sprintf("phase-%d", src[RootID].Children.Len())
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				s := NewSpecView(h, src)
				if _, err := AddTask(s, last, TaskInput{Title: "one more"}); err != nil {
					b.Fatal(err)
				}
				s.Changes()
			}
		})
	}
}

func BenchmarkComplete(b *testing.B) {
	for _, n := range benchSizes {
		h, src := benchSpec(b, n)
		target := NextTask(NewSpecView(h, src)).TaskID
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				s := NewSpecView(h, src)
				if _, err := Complete(s, target, TransitionOptions{}); err != nil {
					b.Fatal(err)
				}
				s.Changes()
			}
		})
	}
}

func BenchmarkNextTask(b *testing.B) {
	for _, n := range benchSizes {
		h, src := benchSpec(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if r := NextTask(NewSpecView(h, src)); !r.Found {
					b.Fatal("nothing found")
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, n := range benchSizes {
		h, src := benchSpec(b, n)
		doc := NewSpecView(h, src).Document()
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if r := Validate(&doc); !r.IsValid {
					b.Fatalf("%+v", r.Diagnostics[0])
				}
			}
		})
	}
}

func TestBenchSpecIsValid(t *testing.T) {
	h, src := benchSpec(t, 300)
	s := NewSpecView(h, src)
	mustNoViolations(t, s, "bench spec")
	if s.Header.TotalTasks != 306 || s.Header.ProgressPercentage != 33 {
		t.Fatalf("%+v", s.Header)
	}
}

// BenchmarkAddTaskLongPhase adds a task to a phase of n tasks in a view
// over the nodes that built it (as the store's node cache serves them):
// the next id under a long phase (NewNodeID) and the insertion into its
// children, before the phase's verify nodes (as in make load). B/op and
// allocs/op do not grow with the phase (ChildList copies a tail of at
// most 64 ids).
func BenchmarkAddTaskLongPhase(b *testing.B) {
	for _, n := range []int{100, 8000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, err := NewSpec(NewSpecInput{Name: "bench"}, testClock(), nil)
			if err != nil {
				b.Fatal(err)
			}
			tasks := make([]TaskInput, n)
			for i := range tasks {
				tasks[i] = TaskInput{Title: fmt.Sprint("task ", i)}
			}
			res, err := AddPhaseBulk(s, PhaseInput{Title: "Load", VerifyScaffold: true}, tasks)
			if err != nil {
				b.Fatal(err)
			}
			put, _ := s.Changes()
			src := MemorySource{}
			src.Apply(put, nil)
			b.ReportAllocs()
			for b.Loop() {
				v := NewSpecView(s.Header, src)
				v.Clock = s.Clock
				if _, err := AddTask(v, res.PhaseID, TaskInput{Title: "one more"}); err != nil {
					b.Fatal(err)
				}
				v.Changes()
			}
		})
	}
}

// BenchmarkAddPhaseBulk adds a phase of n tasks in one call.
func BenchmarkAddPhaseBulk(b *testing.B) {
	for _, n := range []int{200, 1000, 5000} {
		tasks := make([]TaskInput, n)
		for i := range tasks {
			tasks[i] = TaskInput{Title: fmt.Sprint("task ", i)}
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := NewSpec(NewSpecInput{Name: "bench"}, testClock(), nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := AddPhaseBulk(s, PhaseInput{Title: "Bulk", VerifyScaffold: true}, tasks); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
