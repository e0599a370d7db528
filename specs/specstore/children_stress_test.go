package specstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestChildrenConcurrentViewsStress: writers that share the node cache's
// phase (one repository) add tasks near the end of a long phase, in the
// middle, remove and move tasks, while dry runs and mutations that fail
// after their edit extend the very same cached lists. Every committed
// write's children (as its fn left them) read back exactly at its version
// from the history, the current list is the last committed one, no id is
// listed twice, the invariants hold, and every new task gets the id
// NewNodeID's rule gives from the phase's children as they are (the
// child-number memo is never stale).
func TestChildrenConcurrentViewsStress(t *testing.T) {
	for _, rerun := range []bool{false, true} {
		t.Run(fmt.Sprint("rerun=", rerun), func(t *testing.T) {
			st := storetest.Open(t)
			r := New(st, nil)
			if rerun {
				r = New(&storetest.Rerun{Store: st, Every: 3}, nil)
			}
			childrenStress(t, r)
		})
	}
}

func childrenStress(t *testing.T, r *Repo) {
	ctx := context.Background()
	h, err := r.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "stress", Mission: "m"}, nil, exists)
		if err == nil {
			_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
		}
		for i := 0; err == nil && i < 150; i++ {
			_, err = specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint("seed ", i)})
		}
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	errFail := errors.New("fail after the edit")
	var mu sync.Mutex
	atVersion := map[int64][]string{}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 99))
			for step := range 120 {
				kind := rng.IntN(10)
				o := specs.RepoWriteOptions{DryRun: kind == 8}
				var after []string
				var dup string
				res, err := r.MutateSpec(ctx, h.SpecID, o, func(sp *specs.Spec, _ specs.JournalWriter) error {
					p := sp.Node("phase-1")
					before := p.Children.Slice()
					n := len(before)
					switch op := rng.IntN(10); {
					case op < 6 || n < 10: // a task add near the end
						want := nextTaskID(sp, before)
						id, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint(g, " ", step)})
						if err != nil {
							return err
						}
						if id != want {
							dup = id + " (want " + want + ")"
						}
					case op < 7: // an add in the middle
						want := nextTaskID(sp, before)
						pos := rng.IntN(n)
						id, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: "mid", Position: &pos})
						if err != nil {
							return err
						}
						if id != want {
							dup = id + " (want " + want + ")"
						}
					case op < 9: // a removal: often of the newest task
						x := before[rng.IntN(n)]
						if rng.IntN(2) == 0 {
							x = newestTask(before)
						}
						if _, err := specs.RemoveTask(sp, x, true); err != nil {
							return err
						}
					default: // a move within the phase
						x := before[rng.IntN(n)]
						pos := rng.IntN(n)
						if err := specs.MoveTask(sp, x, "phase-1", &pos); err != nil {
							return err
						}
					}
					after = slices.Clone(sp.Node("phase-1").Children.Slice())
					if kind == 9 {
						return errFail
					}
					return nil
				})
				if dup != "" {
					t.Errorf("writer %d step %d: new task %s, not the next number after the phase's children", g, step, dup)
				}
				switch {
				case kind == 9:
					if !errors.Is(err, errFail) {
						t.Errorf("writer %d step %d: a failed fn answered %v", g, step, err)
					}
				case err != nil:
					t.Errorf("writer %d step %d: %v", g, step, err)
				case !o.DryRun:
					mu.Lock()
					atVersion[res.Version] = after
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	var last int64
	for v := range atVersion {
		last = max(last, v)
	}
	if err := r.ReadSpec(ctx, h.SpecID, func(sp *specs.Spec, _ specs.JournalReader) error {
		got := sp.Node("phase-1").Children.Slice()
		if !slices.Equal(got, atVersion[last]) {
			t.Errorf("current children differ from version %d's from index %d", last, firstDiffIDs(got, atVersion[last]))
		}
		seen := map[string]bool{}
		for _, id := range got {
			if seen[id] {
				t.Errorf("child %s listed twice", id)
			}
			seen[id] = true
		}
		if vs := specs.CheckInvariants(sp); len(vs) > 0 {
			t.Errorf("invariants: %v", vs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	read := 0
	for v, want := range atVersion {
		err := r.ReadVersion(ctx, h.SpecID, v, func(vv specs.VersionView) error {
			got := vv.NodeAt("phase-1").Children.Slice()
			if !slices.Equal(got, want) {
				t.Errorf("version %d: children differ from index %d", v, firstDiffIDs(got, want))
			}
			read++
			return nil
		})
		if err != nil && v >= last-10 { // older ones may be pruned
			t.Errorf("version %d: %v", v, err)
		}
	}
	if read < 10 {
		t.Errorf("only %d versions read back", read)
	}
}

// nextTaskID is the id NewNodeID's rule gives a task added to phase-1
// whose children are kids, by reading every id: one more than the largest
// M of a child task-1-M, then the first such id sp does not hold.
func nextTaskID(sp *specs.Spec, kids []string) string {
	top := 0
	for _, id := range kids {
		var m int
		if _, err := fmt.Sscanf(id, "task-1-%d", &m); err == nil && id == fmt.Sprint("task-1-", m) {
			top = max(top, m)
		}
	}
	for m := top + 1; ; m++ {
		if id := fmt.Sprint("task-1-", m); !sp.Has(id) {
			return id
		}
	}
}

// newestTask is the child task-1-M of kids with the largest M.
func newestTask(kids []string) string {
	top, out := -1, kids[len(kids)-1]
	for _, id := range kids {
		var m int
		if _, err := fmt.Sscanf(id, "task-1-%d", &m); err == nil && id == fmt.Sprint("task-1-", m) && m > top {
			top, out = m, id
		}
	}
	return out
}

func firstDiffIDs(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
