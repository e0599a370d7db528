package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
	"github.com/specd/specd/tools"
)

// Task benchmarks: the task tool's hot actions through the dispatcher over
// a real store in a temporary directory, at 100, 1,000 and 10,000 tasks in
// one spec (10 phases of n/10 tasks, each with its verify scaffold, built
// through the domain and stored in one transaction). Run with
//
//	go test ./tests -run '^$' -bench BenchmarkTask -benchtime 2000x
//
// Stores are opened with MaxHold of an hour so that the numbers measure the
// operations, not the store's periodic release of the file (see
// BenchmarkTaskNextAsShipped for the cost of that release in a busy loop).

var taskBenchSizes = []int{100, 1_000, 10_000}

// taskBenchDoc builds the benchmark spec; with halfPhase, the first half of
// phase-1's tasks are completed (journal entries included), so next and
// prepare must skip finished work.
func taskBenchDoc(b testing.TB, n int, halfPhase bool) (*specs.Spec, []specs.JournalEntry) {
	b.Helper()
	clock := core.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	sp, err := specs.NewSpec(specs.NewSpecInput{Name: fmt.Sprintf("task bench %d", n), Mission: "m"}, clock, func(string) bool { return false })
	if err != nil {
		b.Fatal(err)
	}
	per := max(n/10, 1)
	link := false
	for p := 0; p < 10; p++ {
		in := make([]specs.TaskInput, per)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("Task %d.%d: implement the thing", p, i), Description: "Do the work and test it.",
				TaskCategory: "implementation", FilePath: fmt.Sprintf("pkg/p%d/f%d.go", p, i), AcceptanceCriteria: []string{"tests pass"}}
		}
		if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("Phase %d", p), LinkPrevious: &link, TestCommand: "go test ./...", VerifyScaffold: true}, in); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := specs.MoveLifecycle(sp, specs.LifecycleActive, false); err != nil {
		b.Fatal(err)
	}
	var journal []specs.JournalEntry
	if halfPhase {
		for i := 1; i <= per/2; i++ {
			res, err := specs.Complete(sp, fmt.Sprintf("task-1-%d", i), specs.TransitionOptions{Agent: "seed", Note: "done"})
			if err != nil {
				b.Fatal(err)
			}
			journal = append(journal, *res.Entry)
		}
	}
	return sp, journal
}

type taskBench struct {
	reg  *mcptool.Registry
	deps *tools.Deps
	st   *specstore.Repo
}

func newTaskBench(b testing.TB, opts ...func(*store.Options)) *taskBench {
	b.Helper()
	o := store.Options{Path: filepath.Join(b.TempDir(), ".specd", "specd.db"), MaxHold: time.Hour}
	for _, f := range opts {
		f(&o)
	}
	st, err := store.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	repo := specstore.New(st, nil)
	deps := &tools.Deps{Store: st, Specs: repo, Version: "bench", Workspace: b.TempDir(), TokenBudget: core.DefaultTokenBudget,
		Runtime: mcptool.Runtime{Deadline: time.Minute}}
	return &taskBench{reg: tools.New(deps), deps: deps, st: repo}
}

// seed stores a copy of the benchmark spec under a fresh id and returns it.
func (e *taskBench) seed(b testing.TB, n int, halfPhase bool, copyNo int) string {
	b.Helper()
	sp, journal := taskBenchDoc(b, n, halfPhase)
	doc := sp.Document()
	doc.SpecID = fmt.Sprintf("%s-%d", doc.SpecID, copyNo)
	c := specs.FromDocument(doc)
	if err := e.st.ImportSpec(context.Background(), c, journal, false); err != nil {
		b.Fatal(err)
	}
	return doc.SpecID
}

func (e *taskBench) run(b testing.TB, tool string, args map[string]any) map[string]any {
	t, _ := e.reg.Tool(tool)
	env := e.reg.Dispatch(context.Background(), t, args, mcptool.Session{ID: "bench"}, e.deps.Runtime)
	if !env.Success {
		b.Fatalf("%s %v: %v", tool, args, env.Data)
	}
	d, _ := env.Data.(map[string]any)
	return d
}

// leafIDs lists the work leaves of the spec in execution order (tasks only
// when onlyTasks).
func leafIDs(b testing.TB, st *specstore.Repo, specID string, onlyTasks bool) []string {
	var out []string
	err := st.ReadSpec(context.Background(), specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		for n := range specs.ExecutionOrder(sp, specs.RootID) {
			if n.IsWorkLeaf() && n.Status == specs.StatusPending && (!onlyTasks || n.Type == specs.TypeTask) {
				out = append(out, n.ID)
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkTaskReads: next, prepare, info, the first list page and
// prepare-batch on a fresh spec and on one whose current phase is half done.
func BenchmarkTaskReads(b *testing.B) {
	for _, n := range taskBenchSizes {
		for _, half := range []bool{false, true} {
			e := newTaskBench(b)
			id := e.seed(b, n, half, 0)
			state := "fresh"
			if half {
				state = "half-phase"
			}
			mid := fmt.Sprintf("task-5-%d", max(n/20, 1))
			for _, bc := range []struct {
				name string
				tool string
				args map[string]any
			}{
				{"next", "task", map[string]any{"action": "next", "spec_id": id}},
				{"prepare", "task", map[string]any{"action": "prepare", "spec_id": id}},
				{"info", "task", map[string]any{"action": "info", "spec_id": id, "task_id": mid}},
				{"list-first-page", "task", map[string]any{"action": "list", "spec_id": id}},
				{"prepare-batch", "task", map[string]any{"action": "prepare-batch", "spec_id": id}},
			} {
				if half && (bc.name == "info" || bc.name == "list-first-page") {
					continue // unaffected by progress
				}
				b.Run(fmt.Sprintf("%s/%s/tasks=%d", bc.name, state, n), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						e.run(b, bc.tool, bc.args)
					}
				})
			}
		}
	}
}

// BenchmarkTaskWrites: start (pending tasks in execution order) and
// complete (pending leaves in execution order; complete from pending costs
// what complete from in_progress does), each one stored mutation with its
// journal entry. When a spec runs out of pending work a fresh copy is
// seeded with the timer stopped.
func BenchmarkTaskWrites(b *testing.B) {
	for _, n := range taskBenchSizes {
		for _, action := range []string{"start", "complete"} {
			b.Run(fmt.Sprintf("%s/tasks=%d", action, n), func(b *testing.B) {
				e := newTaskBench(b)
				copyNo := 0
				var id string
				var todo []string
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if len(todo) == 0 {
						b.StopTimer()
						copyNo++
						id = e.seed(b, n, false, copyNo)
						todo = leafIDs(b, e.st, id, action == "start")
						b.StartTimer()
					}
					e.run(b, "task", map[string]any{"action": action, "spec_id": id, "task_id": todo[0]})
					todo = todo[1:]
				}
			})
		}
	}
}

// BenchmarkTaskNextAsShipped is next on 1,000 tasks with the store's
// default timings: a busy process gives the file up every MaxHold (250 ms)
// and waits out one lock poll before reopening it, which a tight loop pays
// for.
func BenchmarkTaskNextAsShipped(b *testing.B) {
	e := newTaskBench(b, func(o *store.Options) { o.MaxHold = 0 })
	id := e.seed(b, 1_000, false, 0)
	for b.Loop() {
		e.run(b, "task", map[string]any{"action": "next", "spec_id": id})
	}
}

// BenchmarkTaskStdioClaimComplete1000 is a sequential client over stdio
// (the built binary) doing next(claim:true) → complete until 1,000 tasks
// are done; the metric s/1000-tasks is the total time. Run with
// -benchtime 1x.
func BenchmarkTaskStdioClaimComplete1000(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		db := filepath.Join(b.TempDir(), ".specd", "specd.db")
		st, err := store.Open(store.Options{Path: db})
		if err != nil {
			b.Fatal(err)
		}
		sp, _ := taskBenchDoc(b, 1_000, false)
		if err := specstore.New(st, nil).ImportSpec(context.Background(), sp, nil, false); err != nil {
			b.Fatal(err)
		}
		_ = st.Close()
		c := stdioOnStore(b, db, protocols[0])
		specID := sp.Header.SpecID
		b.StartTimer()
		start := time.Now()
		done := 0
		for {
			d := taskOK(b, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
			if d["found"] != true {
				if d["spec_complete"] != true {
					b.Fatalf("stuck: %v", d)
				}
				break
			}
			taskOK(b, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": d["task_id"]})
			done++
		}
		if done < 1_000 {
			b.Fatalf("completed %d", done)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/run")
		b.ReportMetric(float64(done), "leaves")
		_ = c.Close()
	}
}
