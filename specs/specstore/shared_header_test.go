package specstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/specd/specd/specs"
)

// Concurrent writers and readers of one spec share its cached header and
// nodes read-only: writers that change the spec's metadata or add tasks
// and readers race on nothing (run with -race), and every write is kept.
func TestConcurrentWritesShareCachedHeaderReadOnly(t *testing.T) {
	r, _ := repoOver(t)
	ctx := context.Background()
	id := createSpec(t, r, "shared header")
	var phase string
	if _, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		p, err := specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
		phase = p.PhaseID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				_, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					if err := specs.UpdateFrontmatter(sp, "description", fmt.Sprintf("w%d r%d", w, i)); err != nil {
						return err
					}
					_, err := specs.AddAssumption(sp, fmt.Sprintf("assumption %d.%d", w, i))
					return err
				})
				errs <- err
				_, err = r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					_, err := specs.AddTaskView(sp, phase, specs.TaskInput{Title: fmt.Sprintf("task %d.%d", w, i)})
					return err
				})
				errs <- err
				errs <- r.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
					_ = fmt.Sprint(sp.Header.Metadata) // reads every value
					return nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
		if got := len(sp.Header.MetaStrings("assumptions")); got != workers*rounds {
			t.Errorf("%d assumptions kept, want %d", got, workers*rounds)
		}
		if got := sp.Node(phase).Children.Len(); got < workers*rounds {
			t.Errorf("%d children under the phase, want at least %d", got, workers*rounds)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A write's view starts on the cached header without copying it: a write
// that changes the spec's metadata and then fails leaves the cached header
// as it was, so the next write sees the stored metadata, not the failed
// write's.
func TestFailedWriteLeavesCachedHeader(t *testing.T) {
	r, _ := repoOver(t)
	ctx := context.Background()
	id := createSpec(t, r, "failed write")
	if _, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		return specs.UpdateFrontmatter(sp, "description", "stored")
	}); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused after the change")
	if _, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		if err := specs.UpdateFrontmatter(sp, "description", "never stored"); err != nil {
			return err
		}
		if _, err := specs.AddAssumption(sp, "never stored"); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("write answered %v", err)
	}
	res, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		if got := sp.Header.Metadata["description"]; got != "stored" {
			t.Errorf("the next write sees description %v, want stored", got)
		}
		if got := sp.Header.MetaStrings("assumptions"); len(got) != 0 {
			t.Errorf("the next write sees assumptions %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 0 {
		t.Errorf("a write that changes nothing reports %v", res.Changes)
	}
}

// Every path that writes a spec's header metadata (frontmatter with nested
// values, the spec lists, find-replace, hours, fix), each mixed with the
// others and then committed, refused or run dry, and a rollback, leaves
// the header the next write starts from (the cached one) equal to the
// stored header.
func TestCachedHeaderMatchesStoredAfterEveryHeaderWrite(t *testing.T) {
	r, _ := repoOver(t)
	ctx := context.Background()
	id := createSpec(t, r, "adhoc")
	k := 0
	uniq := func(p string) string { k++; return fmt.Sprint(p, k) }
	writers := []func(sp *specs.Spec) error{
		func(sp *specs.Spec) error {
			return specs.UpdateFrontmatter(sp, "nested_x", map[string]any{"a": []any{map[string]any{"b": uniq("c")}}})
		},
		func(sp *specs.Spec) error { _, err := specs.AddAssumption(sp, uniq("a")); return err },
		func(sp *specs.Spec) error {
			_, err := specs.AddRisk(sp, specs.Risk{Description: uniq("r")})
			return err
		},
		func(sp *specs.Spec) error {
			_, err := specs.AddRevision(sp, specs.Revision{Changelog: "c"})
			return err
		},
		func(sp *specs.Spec) error {
			to := "adhoc" // the title and the description change case each time
			if k++; k%2 == 0 {
				to = "ADHOC"
			}
			_, err := specs.FindReplace(sp, specs.FindReplaceInput{Find: "adhoc", Replace: to, IgnoreCase: true})
			return err
		},
		func(sp *specs.Spec) error { specs.RecalculateHours(sp, specs.EstimatedHoursKey); return nil },
		func(sp *specs.Spec) error { specs.FixSpec(sp, nil); return nil },
		func(sp *specs.Spec) error { return specs.UpdateFrontmatter(sp, "description", uniq("adhoc ")) },
	}
	headerOf := func(read func(fn func(sp *specs.Spec)) error) string {
		var out []byte
		if err := read(func(sp *specs.Spec) { out, _ = json.Marshal(sp.Header) }); err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	check := func(stage string) {
		t.Helper()
		stored := headerOf(func(fn func(sp *specs.Spec)) error {
			return r.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error { fn(sp); return nil })
		})
		cached := headerOf(func(fn func(sp *specs.Spec)) error {
			_, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error { fn(sp); return nil })
			return err
		})
		if stored != cached {
			t.Fatalf("after %s the next write starts from\n%s\nnot the stored\n%s", stage, cached, stored)
		}
	}
	refused := errors.New("refused")
	for round := range 2 {
		for i := range writers {
			for _, mode := range []string{"commit", "refuse", "dry run"} {
				_, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{DryRun: mode == "dry run"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					for j := range writers {
						if err := writers[(i+j)%len(writers)](sp); err != nil {
							return err
						}
					}
					if mode == "refuse" {
						return refused
					}
					return nil
				})
				if mode == "refuse" && !errors.Is(err, refused) || mode != "refuse" && err != nil {
					t.Fatalf("round %d writer %d %s: %v", round, i, mode, err)
				}
				check(fmt.Sprintf("round %d writer %d %s", round, i, mode))
			}
		}
		var v int64
		if err := r.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error { v = sp.Header.Version; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := r.RollbackSpec(ctx, id, v-2, specs.RepoWriteOptions{}, func() string { return "2026-03-04T05:06:08Z" }); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round %d rollback", round))
	}
}
