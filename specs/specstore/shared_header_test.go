package specstore_test

import (
	"context"
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
		if got := len(sp.Node(phase).Children); got < workers*rounds {
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
