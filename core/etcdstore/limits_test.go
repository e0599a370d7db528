package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// A member started with etcd's default limits (--max-txn-ops 128,
// --max-request-bytes 1.5 MiB) and stores with specd's default options:
// what a user of a stock or managed cluster has.
func defaultLimits(t *testing.T) (ep string, open func(mod func(*etcdstore.Options)) *etcdstore.Store) {
	t.Helper()
	ep = etcdtest.StartDefault(t)
	prefix := fmt.Sprintf("/specd-limits/%d", prefixes.Add(1))
	return ep, func(mod func(*etcdstore.Options)) *etcdstore.Store {
		return openStore(t, ep, func(o *etcdstore.Options) {
			o.Prefix = prefix
			if mod != nil {
				mod(o)
			}
		})
	}
}

func newSpec(t *testing.T, r *specstore.Repo) string {
	t.Helper()
	h, err := r.CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "limits", Mission: "m"}, clock, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}

// addBulk adds one phase of n tasks in one mutation (phase-add-bulk).
func addBulk(r *specstore.Repo, id string, n int, o specs.RepoWriteOptions) error {
	_, err := r.MutateSpec(context.Background(), id, o, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		in := make([]specs.TaskInput, n)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("task %d", i), Description: "Do the work and test it."}
		}
		_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "bulk"}, in)
		return err
	})
	return err
}

// counts reads a spec's task nodes and the header's total.
func counts(t *testing.T, r *specstore.Repo, id string) (nodes, total int, version int64) {
	t.Helper()
	err := r.ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
		for _, nid := range sp.IDs() {
			if n := sp.Node(nid); n != nil && n.Type == specs.TypeTask {
				nodes++
			}
		}
		total, version = sp.Header.TotalTasks, sp.Header.Version
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return nodes, total, version
}

// stagedKeys counts the keys of large changes' redo log under the prefix.
func stagedKeys(t *testing.T, st *etcdstore.Store) (staged, pending int64) {
	t.Helper()
	get := func(k string, opts ...clientv3.OpOption) int64 {
		resp, err := st.Client().Get(context.Background(), k, append(opts, clientv3.WithCountOnly())...)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Count
	}
	return get(st.Prefix()+"/!staged/", clientv3.WithPrefix()), get(st.Prefix() + "/!pending")
}

// TestDefaultLimitsLargeChanges: on a member with etcd's default limits, a
// 200-task phase-add-bulk and the import of a 1,000-task spec commit
// (each far beyond 128 writes), and another server reading all along never
// sees half of either.
func TestDefaultLimitsLargeChanges(t *testing.T) {
	t.Parallel()
	_, open := defaultLimits(t)
	// What is tested is the limits and atomicity, not speed: a 1,000-task
	// import under -race on a busy 2-core box overran the default 3 s
	// request timeout (UNAVAILABLE, outcome unknown) and failed the run.
	patient := func(o *etcdstore.Options) { o.RequestTimeout = 60 * time.Second }
	writer, reader := repoOf(open(patient)), repoOf(open(patient))
	id := newSpec(t, writer)

	// The reader's invariant: the spec's task nodes are those of a whole
	// number of bulks, and the header counts exactly them.
	const bulk, bulks = 200, 3
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	var bad atomic.Value
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var nodes, total int
			err := reader.ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
				nodes, total = 0, sp.Header.TotalTasks
				for _, nid := range sp.IDs() {
					if n := sp.Node(nid); n != nil && n.Type == specs.TypeTask {
						nodes++
					}
				}
				return nil
			})
			if err != nil {
				bad.Store(err.Error())
				return
			}
			if nodes%bulk != 0 || nodes != total {
				bad.Store(fmt.Sprintf("half a change: %d task nodes, header total %d", nodes, total))
				return
			}
			reads.Add(1)
		}
	}()
	for i := 0; i < bulks; i++ {
		if err := addBulk(writer, id, bulk, specs.RepoWriteOptions{}); err != nil {
			t.Fatalf("phase-add-bulk of %d tasks on a default-limits cluster: %v", bulk, err)
		}
	}
	// Wait for the reader to finish at least a few reads after the last
	// change, then stop it.
	for seen := reads.Load(); reads.Load() < seen+3 && bad.Load() == nil; {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if v := bad.Load(); v != nil {
		t.Fatal(v)
	}
	if nodes, total, _ := counts(t, reader, id); nodes != bulk*bulks || total != bulk*bulks {
		t.Fatalf("after %d bulks: %d task nodes, total %d; want %d", bulks, nodes, total, bulk*bulks)
	}

	// The import of a 1,000-task spec (one transaction of the repository).
	sp, err := specs.NewSpec(specs.NewSpecInput{Name: "imported", Mission: "m"}, clock, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for p := 0; p < 10; p++ {
		in := make([]specs.TaskInput, 100)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("Task %d.%d", p, i), Description: "Do the work and test it."}
		}
		if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("Phase %d", p)}, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := writer.ImportSpec(context.Background(), sp, nil, false); err != nil {
		t.Fatalf("import of a 1,000-task spec on a default-limits cluster: %v", err)
	}
	if nodes, total, _ := counts(t, reader, sp.Header.SpecID); nodes != 1000 || total != 1000 {
		t.Fatalf("imported: %d task nodes, total %d; want 1000", nodes, total)
	}
	if staged, pending := stagedKeys(t, open(nil)); staged != 0 || pending != 0 {
		t.Fatalf("redo log left behind: %d staged keys, %d pending", staged, pending)
	}
}

// TestDefaultLimitsGuards: a large change keeps its guards. A stale
// expected_version is refused before anything is staged; a change that
// lands between the large change's read and its switch makes the switch
// fail, and the re-run then refuses the now stale expected_version —
// nothing of the large change is visible, and its staged keys are gone.
func TestDefaultLimitsGuards(t *testing.T) {
	t.Parallel()
	_, open := defaultLimits(t)
	st, other := open(nil), repoOf(open(nil))
	writer := repoOf(st)
	id := newSpec(t, writer)
	_, _, v := counts(t, writer, id)

	stale := v - 1
	err := addBulk(writer, id, 200, specs.RepoWriteOptions{ExpectedVersion: &stale})
	if core.AsError(err).Code != errcode.VersionConflict {
		t.Fatalf("stale expected_version: %v, want VERSION_CONFLICT", err)
	}

	var once sync.Once
	etcdstore.SetLargeCommitHooks(st, func() error {
		var err error
		once.Do(func() { err = addBulk(other, id, 1, specs.RepoWriteOptions{}) })
		return err
	}, nil)
	err = addBulk(writer, id, 200, specs.RepoWriteOptions{ExpectedVersion: &v})
	if core.AsError(err).Code != errcode.VersionConflict {
		t.Fatalf("a change landed before the switch: %v, want VERSION_CONFLICT", err)
	}
	if nodes, total, got := counts(t, other, id); nodes != 1 || total != 1 || got != v+1 {
		t.Fatalf("after the refused large change: %d task nodes, total %d, version %d; want 1, 1, %d", nodes, total, got, v+1)
	}
	if staged, pending := stagedKeys(t, st); staged != 0 || pending != 0 {
		t.Fatalf("a refused large change left %d staged keys, %d pending", staged, pending)
	}
}

// TestDefaultLimitsCrash: a server that dies between staging and the
// switch leaves no visible change (its staged keys are ignored, then
// collected by a later large change once stale); one that dies after the
// switch has committed, and the next reader — another server — finishes
// the change before it reads.
func TestDefaultLimitsCrash(t *testing.T) {
	t.Parallel()
	_, open := defaultLimits(t)
	crashed := errors.New("crashed")
	beforeSwitch := open(nil)
	etcdstore.SetLargeCommitHooks(beforeSwitch, func() error { return crashed }, nil)
	fresh := repoOf(open(nil))
	id := newSpec(t, fresh)

	if err := addBulk(repoOf(beforeSwitch), id, 200, specs.RepoWriteOptions{}); err == nil {
		t.Fatal("the crashed change answered success")
	}
	if nodes, total, _ := counts(t, fresh, id); nodes != 0 || total != 0 {
		t.Fatalf("a change that crashed before its switch is visible: %d task nodes, total %d", nodes, total)
	}
	if staged, _ := stagedKeys(t, beforeSwitch); staged == 0 {
		t.Fatal("no staged keys after a crash between staging and switch (the test proves nothing)")
	}

	afterSwitch := open(nil)
	etcdstore.SetLargeCommitHooks(afterSwitch, nil, func() error { return crashed })
	if err := addBulk(repoOf(afterSwitch), id, 200, specs.RepoWriteOptions{}); err == nil {
		t.Fatal("the crashed change answered success")
	}
	if _, pending := stagedKeys(t, afterSwitch); pending != 1 {
		t.Fatalf("%d pending records after a crash past the switch, want 1", pending)
	}
	if nodes, total, _ := counts(t, repoOf(open(nil)), id); nodes != 200 || total != 200 {
		t.Fatalf("a change committed before the crash reads as %d task nodes, total %d; want 200", nodes, total)
	}
	if _, pending := stagedKeys(t, afterSwitch); pending != 0 {
		t.Fatal("the reader did not finish the pending change")
	}

	// A server's large change notes the cluster's revision; much later by
	// its own clock, its next large change collects the dead writer's
	// staged set (older than that revision). The first collects nothing:
	// a set's age is never judged by comparing clocks.
	var skew atomic.Int64
	later := open(func(o *etcdstore.Options) {
		o.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
	if err := addBulk(repoOf(later), id, 200, specs.RepoWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if staged, _ := stagedKeys(t, later); staged == 0 {
		t.Fatal("a server collected a staged set without having seen it get old")
	}
	skew.Store(int64(time.Hour))
	if err := addBulk(repoOf(later), id, 200, specs.RepoWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if staged, pending := stagedKeys(t, later); staged != 0 || pending != 0 {
		t.Fatalf("stale staged keys not collected: %d staged, %d pending", staged, pending)
	}
	if nodes, total, _ := counts(t, fresh, id); nodes != 600 || total != 600 {
		t.Fatalf("%d task nodes, total %d; want 600", nodes, total)
	}
}
