package tests

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
	"github.com/specd/specd/tools"
)

var benchSizes = []int{100, 1_000, 10_000}

// seeded numbers seeded specs so their ids differ (tests seed in parallel).
var seeded atomic.Int64

// seedSpec stores one spec of n tasks in 10 phases straight through the
// domain and one store transaction.
func seedSpec(b testing.TB, st *specstore.Repo, n int) string {
	b.Helper()
	clock := core.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	sp, err := specs.NewSpec(specs.NewSpecInput{Name: fmt.Sprintf("bench %d spec %d", n, seeded.Add(1)), Mission: "m"}, clock, func(string) bool { return false })
	if err != nil {
		b.Fatal(err)
	}
	per := max(n/10, 1)
	for p := 0; p < 10; p++ {
		in := make([]specs.TaskInput, per)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("Task %d.%d: implement the thing", p, i), Description: "Do the work and test it.",
				TaskCategory: "implementation", FilePath: fmt.Sprintf("pkg/p%d/f%d.go", p, i)}
		}
		if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("Phase %d", p), VerifyScaffold: true}, in); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.ImportSpec(context.Background(), sp, nil, false); err != nil {
		b.Fatal(err)
	}
	return sp.Header.SpecID
}

type benchEnv struct {
	reg  *mcptool.Registry
	deps *tools.Deps
}

func (e benchEnv) run(b *testing.B, tool string, args map[string]any) {
	t, _ := e.reg.Tool(tool)
	env := e.reg.Dispatch(context.Background(), t, args, mcptool.Session{ID: "bench"}, e.deps.Runtime)
	if !env.Success {
		b.Fatalf("%s %v: %v", tool, args, env.Data)
	}
}

func newBenchEnv(b *testing.B) (benchEnv, *specstore.Repo) {
	deps := newDeps(b, false)
	return benchEnv{reg: tools.New(deps), deps: deps}, deps.Specs.(*specstore.Repo)
}

// BenchmarkSpecReads: spec get (budgeted), validate, a history page and a
// task-metadata update (one stored mutation) at 100, 1,000 and 10,000 tasks
// in one spec.
func BenchmarkSpecReads(b *testing.B) {
	for _, n := range benchSizes {
		env, st := newBenchEnv(b)
		id := seedSpec(b, st, n)
		b.Run(fmt.Sprintf("get/tasks=%d", n), func(b *testing.B) {
			for b.Loop() {
				env.run(b, "spec", map[string]any{"action": "get", "spec_id": id})
			}
		})
		b.Run(fmt.Sprintf("validate/tasks=%d", n), func(b *testing.B) {
			for b.Loop() {
				env.run(b, "spec", map[string]any{"action": "validate", "spec_id": id})
			}
		})
		b.Run(fmt.Sprintf("history-page/tasks=%d", n), func(b *testing.B) {
			for b.Loop() {
				env.run(b, "spec", map[string]any{"action": "history", "spec_id": id, "limit": 10.0})
			}
		})
		b.Run(fmt.Sprintf("metadata-update/tasks=%d", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				_, err := st.MutateSpec(context.Background(), id, specs.RepoWriteOptions{Action: "bench"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					_, err := specs.UpdateMetadata(sp, "task-5-1", map[string]any{"status_note": fmt.Sprint(i)})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSpecListFirstPage lists the first page of 1,000 specs × 10 tasks.
func BenchmarkSpecListFirstPage(b *testing.B) {
	env, st := newBenchEnv(b)
	for i := 0; i < 1000; i++ {
		seedSpec(b, st, 10)
	}
	for _, limit := range []int{25, 100} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for b.Loop() {
				env.run(b, "spec", map[string]any{"action": "list", "limit": limit})
			}
		})
	}
}
