package specstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/specd/specd/specs"
)

// BenchmarkMutateAddTask is the write path of `make load` below the tool
// layer: one MutateSpec that adds a task to a phase already holding
// `phase` tasks (the load's phases grow to thousands), on bbolt, each add
// its own durable commit. ns/op includes the disk's fsync (slow and noisy
// on a shared machine); cpu-ns/op is the process's CPU time (user+system)
// per add, the server's share, steadier than ns/op. Each add grows the
// phase, so compare the sizes at a fixed count (-benchtime 400x): B/op
// of the domain's and the store's own work does not grow with the phase
// (ChildList), what grows is bbolt's (a bigger tree and file) and the
// chunk sizes the phase's stored value lists (one byte per ~100 ids).
func BenchmarkMutateAddTask(b *testing.B) {
	for _, n := range []int{100, 8000} {
		b.Run(fmt.Sprintf("phase=%d", n), func(b *testing.B) {
			r, _ := repoOver(b)
			id := createSpec(b, r, "bench")
			ctx := context.Background()
			phase := ""
			if _, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "authoring.phase-add-bulk"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				tasks := make([]specs.TaskInput, n)
				for i := range tasks {
					tasks[i] = specs.TaskInput{Title: fmt.Sprintf("seed task %d", i)}
				}
				res, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "Load"}, tasks)
				phase = res.PhaseID
				return err
			}); err != nil {
				b.Fatal(err)
			}
			o := specs.RepoWriteOptions{Action: "authoring.task-add"}
			b.ReportAllocs()
			cpu0 := cpuTime()
			i := 0
			for b.Loop() {
				i++
				if _, err := r.MutateSpec(ctx, id, o, func(sp *specs.Spec, _ specs.JournalWriter) error {
					_, err := specs.AddTaskView(sp, phase, specs.TaskInput{Title: fmt.Sprintf("load task %d", i)})
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMutateAddTaskShared is the write path of `make load` as the
// shared server runs it: 16 goroutines adding tasks to the first phase of
// 4 specs, so concurrent MutateSpecs share commits (the store's group
// commit: savepoints, the undo log) as the HTTP server's do. allocs/op and
// B/op are per add and stable; cpu-ns/op as in BenchmarkMutateAddTask.
func BenchmarkMutateAddTaskShared(b *testing.B) {
	r, _ := repoOver(b)
	ctx := context.Background()
	const nSpecs = 4
	ids := make([]string, nSpecs)
	for i := range ids {
		ids[i] = createSpec(b, r, fmt.Sprintf("shared %d", i))
		if _, err := r.MutateSpec(ctx, ids[i], specs.RepoWriteOptions{Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			_, err := specs.AddPhase(sp, specs.PhaseInput{Title: "Load"})
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
	o := specs.RepoWriteOptions{Action: "authoring.task-add"}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8) // 16 writers on 2 cores
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			if _, err := r.MutateSpec(ctx, ids[i%nSpecs], o, func(sp *specs.Spec, _ specs.JournalWriter) error {
				_, err := specs.AddTaskView(sp, "phase-1", specs.TaskInput{Title: fmt.Sprintf("load task %d", i)})
				return err
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
