package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// TestGroupCommit: updates that queue while another holds the writer
// commit together in one etcd transaction (the cluster's revision moves
// by one for all of them), yet each keeps its own answer: every
// acknowledged add is stored, a failing fn's writes are not (its answer is
// its error), and two updates guarded by the same expected_version do not
// both pass — the second sees the first's write (VERSION_CONFLICT).
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	st := openStore(t, ep, nil)
	repo := repoOf(st)
	id := newSpec(t, repo)
	_, _, v := counts(t, repo, id)

	release, queued := etcdstore.HoldWriter(st)
	const adders = 12
	boom := errors.New("boom")
	errs := make([]error, adders+3)
	var wg sync.WaitGroup
	// The guarded pair queues first, then the others.
	order := append([]int{adders + 1, adders + 2}, make([]int, 0, adders+1)...)
	for i := 0; i <= adders; i++ {
		order = append(order, i)
	}
	for n, i := range order {
		if n == 2 {
			for queued() < 2 {
				time.Sleep(time.Millisecond)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := specs.RepoWriteOptions{}
			if i >= adders+1 {
				o.ExpectedVersion = &v // two guarded on the same version
			}
			_, errs[i] = repo.MutateSpec(context.Background(), id, o, func(sp *specs.Spec, _ specs.JournalWriter) error {
				sp.Clock = clock
				if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("phase %d", i)}, []specs.TaskInput{{Title: "t"}}); err != nil {
					return err
				}
				if i == adders {
					return boom // wrote, then failed: nothing of it is kept
				}
				return nil
			})
		}()
	}
	for queued() < len(errs) {
		time.Sleep(time.Millisecond)
	}
	before, err := st.Client().Get(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	release()
	wg.Wait()
	after, err := st.Client().Get(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Header.Revision - before.Header.Revision; d != 1 {
		t.Fatalf("%d queued updates took %d etcd transactions, want 1", len(errs), d)
	}
	for i := 0; i < adders; i++ {
		if errs[i] != nil {
			t.Fatalf("add %d: %v", i, errs[i])
		}
	}
	if !errors.Is(errs[adders], boom) {
		t.Fatalf("the failing fn answered %v", errs[adders])
	}
	passed, conflicts := 0, 0
	for _, err := range errs[adders+1:] {
		switch {
		case err == nil:
			passed++
		case codeOf(err) == errcode.VersionConflict:
			conflicts++
		default:
			t.Fatalf("guarded add: %v", err)
		}
	}
	if passed != 1 || conflicts != 1 {
		t.Fatalf("guarded pair: %d passed, %d conflicts", passed, conflicts)
	}
	nodes, total, _ := counts(t, repoOf(openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = st.Prefix() })), id)
	if want := adders + passed; nodes != want || total != want {
		t.Fatalf("after the batch: %d task nodes, total %d; want %d (every acknowledged add, nothing of the failed one)", nodes, total, want)
	}
}

// TestGroupCommitPanic: an update whose fn panics in a batch panics in its
// own caller's goroutine with nothing of it kept, the others of the batch
// commit, and the store goes on serving updates.
func TestGroupCommitPanic(t *testing.T) {
	t.Parallel()
	st := openStore(t, startEtcd(t, 4096), nil)
	bucket := bucketstore.BucketDigests
	release, queued := etcdstore.HoldWriter(st)
	var wg sync.WaitGroup
	var recovered any
	var okErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer func() { recovered = recover() }()
		_ = st.Update(context.Background(), func(tx bucketstore.Tx) error {
			_ = tx.Bucket(bucket).Put([]byte("bad"), []byte("x"))
			panic("kaboom")
		})
	}()
	for queued() < 1 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		defer wg.Done()
		okErr = st.Update(context.Background(), func(tx bucketstore.Tx) error { return tx.Bucket(bucket).Put([]byte("good"), []byte("y")) })
	}()
	for queued() < 2 {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if recovered != "kaboom" || okErr != nil {
		t.Fatalf("panicking caller recovered %v; the other answered %v", recovered, okErr)
	}
	if err := st.Update(context.Background(), func(tx bucketstore.Tx) error { return tx.Bucket(bucket).Put([]byte("after"), []byte("z")) }); err != nil {
		t.Fatal(err)
	}
	_ = st.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte("bad")) != nil || string(b.Get([]byte("good"))) != "y" || string(b.Get([]byte("after"))) != "z" {
			t.Fatalf("after the batch: bad=%q good=%q after=%q", b.Get([]byte("bad")), b.Get([]byte("good")), b.Get([]byte("after")))
		}
		return nil
	})
}

// TestGroupCommitBatchFitsOneTransaction: a batch takes no more updates
// than one etcd transaction of the cluster holds, compares included
// (etcd bounds the compares by --max-txn-ops as it bounds the writes):
// twelve queued updates, each guarding six reads and making four writes,
// too many for one transaction of a member with --max-txn-ops 40, commit
// in several batches, each one transaction guarded key by key — never
// the guard over the whole prefix (which makes every member read every
// value under it) nor a large change's staging — and every write lands.
func TestGroupCommitBatchFitsOneTransaction(t *testing.T) {
	t.Parallel()
	const maxOps, updates, reads, writes = 40, 12, 6, 4
	st := openStore(t, startEtcd(t, maxOps), func(o *etcdstore.Options) { o.MaxTxnOps = maxOps })
	if err := st.CheckWritable(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec := etcdstore.RecordTxns(st)
	bucket := bucketstore.BucketDigests
	release, queued := etcdstore.HoldWriter(st)
	errs := make([]error, updates)
	var wg sync.WaitGroup
	for i := range updates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.Update(context.Background(), func(tx bucketstore.Tx) error {
				b := tx.Bucket(bucket)
				for j := range reads {
					if b.Get(fmt.Appendf(nil, "r-%d-%d", i, j)) != nil {
						return errors.New("an absent key is present")
					}
				}
				for j := range writes {
					if err := b.Put(fmt.Appendf(nil, "w-%d-%d", i, j), []byte("v")); err != nil {
						return err
					}
				}
				return nil
			})
		}()
	}
	for queued() < updates {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	got := rec.Shapes()
	if len(got) < 2 || rec.Puts() != 0 {
		t.Fatalf("%d updates committed in %d transactions with %d staged puts; want several transactions, nothing staged", updates, len(got), rec.Puts())
	}
	for _, s := range got {
		if s.RangeCompares != 0 || s.Compares > maxOps || s.Writes > maxOps {
			t.Fatalf("a commit carried %+v; want at most %d compares, none over a range, and at most %d writes", s, maxOps, maxOps)
		}
	}
	_ = st.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucket)
		for i := range updates {
			for j := range writes {
				if b.Get(fmt.Appendf(nil, "w-%d-%d", i, j)) == nil {
					t.Errorf("write w-%d-%d of an acknowledged update is missing", i, j)
				}
			}
		}
		return nil
	})
}
