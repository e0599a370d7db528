package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
)

// batchOf makes the fns one shared commit: a first Update holds the
// commit open until every fn has queued behind it (in order), then lets
// go; the queued ones are then led as one batch. It returns each fn's
// answer (a panic as a *panicked error) and the bbolt transaction id each
// fn ran in.
func batchOf(t *testing.T, s *Store, ctxs []context.Context, fns ...func(bucketstore.Tx) error) ([]error, []int) {
	t.Helper()
	hold, held := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(bucketstore.Tx) error { close(held); <-hold; return nil })
	}()
	<-held
	errs, txs := make([]error, len(fns)), make([]int, len(fns))
	done := make(chan int, len(fns))
	for i, fn := range fns {
		ctx := context.Background()
		if ctxs != nil && ctxs[i] != nil {
			ctx = ctxs[i]
		}
		go func() {
			defer func() {
				if v := recover(); v != nil {
					errs[i] = panicked{v}
				}
				done <- i
			}()
			errs[i] = s.Update(ctx, func(tx bucketstore.Tx) error {
				if tt, ok := tx.(*trackedTx); ok {
					txs[i] = tt.tx.ID()
				} else {
					txs[i] = -1 // a transaction of its own
				}
				return fn(tx)
			})
		}()
		for queued := 0; queued != i+1; {
			s.commits.mu.Lock()
			queued = len(s.commits.pending)
			s.commits.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	close(hold)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for range fns {
		<-done
	}
	return errs, txs
}

type panicked struct{ v any }

func (p panicked) Error() string { return fmt.Sprint("panic: ", p.v) }

var scratchBucket = bucketstore.TopBuckets[0]

// seed writes the keys and values of kv into the scratch bucket.
func seed(t *testing.T, s *Store, kv map[string]string) {
	t.Helper()
	must(t, s.Update(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(scratchBucket)
		for k, v := range kv {
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestBatchFailingFnKeepsNothingOthersKeepTheirs: in one shared commit, a
// fn that writes (puts over and beside existing keys, deletes, creates
// buckets with keys in them, takes a sequence) and then fails, one that
// panics and one whose context ends keep nothing, while the fns before and
// after them keep all of theirs — and all ran in one transaction.
func TestBatchFailingFnKeepsNothingOthersKeepTheirs(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"kept": "old", "gone": "there", "empty": ""})
	var seqBefore uint64
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		seqBefore = seqOf(tx.Bucket(scratchBucket))
		return nil
	}))
	refused := errors.New("refused")
	scribble := func(tag string) func(tx bucketstore.Tx) error {
		return func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			for _, err := range []error{
				b.Put([]byte("kept"), []byte("by "+tag)),
				b.Put([]byte("new-"+tag), []byte("x")),
				b.Put([]byte("empty"), []byte("filled by "+tag)),
				b.Delete([]byte("gone")),
			} {
				if err != nil {
					return err
				}
			}
			nb, err := b.CreateBucket([]byte("bucket-" + tag))
			if err != nil {
				return err
			}
			if err := nb.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			if _, err := b.CreateBucketIfNotExists([]byte("maybe-" + tag)); err != nil {
				return err
			}
			_, err = b.NextSequence()
			return err
		}
	}
	ended, cancel := context.WithCancel(context.Background())
	ctxs := []context.Context{nil, nil, nil, ended, nil}
	errs, txs := batchOf(t, s, ctxs,
		func(tx bucketstore.Tx) error {
			return tx.Bucket(scratchBucket).Put([]byte("first"), []byte("1"))
		},
		func(tx bucketstore.Tx) error {
			if err := scribble("failed")(tx); err != nil {
				return err
			}
			return refused
		},
		func(tx bucketstore.Tx) error {
			if err := scribble("panicked")(tx); err != nil {
				return err
			}
			panic("a bug")
		},
		func(tx bucketstore.Tx) error {
			err := scribble("cancelled")(tx)
			cancel() // its context ends while it runs: its work is dropped
			return err
		},
		func(tx bucketstore.Tx) error {
			return tx.Bucket(scratchBucket).Put([]byte("last"), []byte("5"))
		},
	)
	if errs[0] != nil || errs[4] != nil {
		t.Fatalf("the fns that succeeded answered %v, %v", errs[0], errs[4])
	}
	if !errors.Is(errs[1], refused) {
		t.Fatalf("the failing fn answered %v, want its own error", errs[1])
	}
	if p, ok := errs[2].(panicked); !ok || p.v != "a bug" {
		t.Fatalf("the panicking fn answered %v, want its panic re-raised in its caller", errs[2])
	}
	if !errors.Is(errs[3], context.Canceled) {
		t.Fatalf("the cancelled fn answered %v, want context.Canceled", errs[3])
	}
	for i, id := range txs {
		if id != txs[0] || id <= 0 {
			t.Fatalf("fn %d ran in transaction %d, fn 0 in %d: not one shared commit", i, id, txs[0])
		}
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(scratchBucket)
		want := map[string]string{"first": "1", "last": "5", "kept": "old", "gone": "there", "empty": ""}
		got := map[string]string{}
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return fmt.Errorf("bucket %q left behind by a failed fn", k)
			}
			got[string(k)] = string(v)
			return nil
		})
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("after the batch the bucket holds %v, want %v", got, want)
		}
		if seq := seqOf(b); seq != seqBefore {
			return fmt.Errorf("sequence %d after the batch, want %d (the failed fns' sequences undone)", seq, seqBefore)
		}
		return nil
	}))
}

// seqOf reads a bucket's sequence (tests only: the port has no getter).
func seqOf(b bucketstore.Bucket) uint64 { return b.(*boltBucket).raw().Sequence() }

// TestBatchGuardsSeeEarlierChanges: a version guard (read a version,
// refuse unless it is the expected one, write the next) checked inside a
// shared commit sees the changes of the fns before it: of several writers
// expecting the same version, exactly the first commits, the others are
// refused and keep nothing.
func TestBatchGuardsSeeEarlierChanges(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"version": "1"})
	conflict := errors.New("VERSION_CONFLICT")
	guarded := func(expected int, who string) func(bucketstore.Tx) error {
		return func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			v, _ := strconv.Atoi(string(b.Get([]byte("version"))))
			if v != expected {
				return conflict
			}
			if err := b.Put([]byte("version"), []byte(strconv.Itoa(v+1))); err != nil {
				return err
			}
			return b.Put([]byte("by"), []byte(who))
		}
	}
	errs, txs := batchOf(t, s, nil, guarded(1, "a"), guarded(1, "b"), guarded(1, "c"), guarded(2, "d"))
	if errs[0] != nil || errs[3] != nil {
		t.Fatalf("the writers expecting the current version answered %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], conflict) || !errors.Is(errs[2], conflict) {
		t.Fatalf("writers expecting a stale version answered %v, %v; want VERSION_CONFLICT", errs[1], errs[2])
	}
	if txs[0] != txs[3] || txs[0] <= 0 {
		t.Fatalf("transactions %v: not one shared commit", txs)
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(scratchBucket)
		if v, by := string(b.Get([]byte("version"))), string(b.Get([]byte("by"))); v != "3" || by != "d" {
			return fmt.Errorf("version %s by %s, want 3 by d", v, by)
		}
		return nil
	}))
}

// TestBatchCommitIsDurableForAll: every fn of a shared commit that
// answered success is in the file when it is opened again.
func TestBatchCommitIsDurableForAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	s := openTest(t, path, nil)
	var fns []func(bucketstore.Tx) error
	for i := range 8 {
		fns = append(fns, func(tx bucketstore.Tx) error {
			return tx.Bucket(scratchBucket).Put([]byte("k"+strconv.Itoa(i)), []byte("v"))
		})
	}
	errs, _ := batchOf(t, s, nil, fns...)
	for _, err := range errs {
		must(t, err)
	}
	must(t, s.Close())
	again := openTest(t, path, nil)
	must(t, again.View(context.Background(), func(tx bucketstore.Tx) error {
		for i := range 8 {
			if tx.Bucket(scratchBucket).Get([]byte("k"+strconv.Itoa(i))) == nil {
				return fmt.Errorf("k%d acknowledged but not in the file", i)
			}
		}
		return nil
	}))
}

// TestQueuedUpdateLeavesWhenItsContextEnds: an Update waiting in line
// behind a commit that does not end (another process's lock, here a held
// fn) answers its context's error when the context ends, without its fn
// ever running, and the ones behind it still commit.
func TestQueuedUpdateLeavesWhenItsContextEnds(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	hold, held := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(bucketstore.Tx) error { close(held); <-hold; return nil })
	}()
	<-held
	queued := func(n int) {
		for {
			s.commits.mu.Lock()
			got := len(s.commits.pending)
			s.commits.mu.Unlock()
			if got == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Bool
	leaving, staying := make(chan error, 1), make(chan error, 1)
	go func() {
		leaving <- s.Update(ctx, func(bucketstore.Tx) error { ran.Store(true); return nil })
	}()
	queued(1)
	go func() {
		staying <- s.Update(context.Background(), func(tx bucketstore.Tx) error {
			return tx.Bucket(scratchBucket).Put([]byte("stayed"), []byte("1"))
		})
	}()
	queued(2)
	cancel()
	select {
	case err := <-leaving:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled waiter answered %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		close(hold)
		t.Fatal("a waiter whose context ended stayed in line behind a commit that did not end")
	}
	close(hold)
	must(t, <-first)
	must(t, <-staying)
	if ran.Load() {
		t.Fatal("the fn of a waiter that left the line ran")
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		if tx.Bucket(scratchBucket).Get([]byte("stayed")) == nil {
			return errors.New("the waiter behind the one that left did not commit")
		}
		return nil
	}))
}

// holdOpen is a fn's hold in a test: started, which the fn closes when it
// runs, release, which it waits on, and let, which closes release (once;
// also when the test ends).
func holdOpen(t *testing.T) (started, release chan struct{}, let func()) {
	started, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	let = func() { once.Do(func() { close(release) }) }
	t.Cleanup(let)
	return started, release, let
}

// heldBatch queues fns behind a held commit, in order, and lets the
// held commit go once all are queued: they are then taken as one batch.
// It returns each fn's answer channel.
func heldBatch(t *testing.T, s *Store, ctxs []context.Context, fns ...func(bucketstore.Tx) error) []chan error {
	t.Helper()
	hold, held := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(bucketstore.Tx) error { close(held); <-hold; return nil })
	}()
	<-held
	answers := make([]chan error, len(fns))
	for i, fn := range fns {
		answers[i] = make(chan error, 1)
		go func() { answers[i] <- s.Update(ctxs[i], fn) }()
		for {
			s.commits.mu.Lock()
			n := len(s.commits.pending)
			s.commits.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(hold)
	must(t, <-first)
	return answers
}

// answerOf waits for an answer that must come while something the test
// holds is still held: a hard bound on a hang, not a latency measurement.
func answerOf(t *testing.T, what string, ch chan error, release func()) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		release()
		t.Fatalf("%s: no answer while another caller's fn of its batch was still running", what)
		return nil
	}
}

// TestBatchedCallerLeavesAtItsDeadline: a caller batched behind a slow fn
// of another caller (the slow one runs first in the shared transaction)
// answers its deadline error when its context ends, while the slow fn is
// still running; its own fn never runs and nothing of it is written, and
// the slow one still commits.
func TestBatchedCallerLeavesAtItsDeadline(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	started, release, let := holdOpen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Bool
	answers := heldBatch(t, s, []context.Context{context.Background(), ctx},
		func(tx bucketstore.Tx) error {
			close(started)
			<-release
			return tx.Bucket(scratchBucket).Put([]byte("slow"), []byte("1"))
		},
		func(tx bucketstore.Tx) error {
			ran.Store(true)
			return tx.Bucket(scratchBucket).Put([]byte("short"), []byte("1"))
		})
	<-started
	cancel()
	if err := answerOf(t, "the short caller", answers[1], let); !errors.Is(err, context.Canceled) {
		t.Fatalf("the short caller answered %v, want its context's error", err)
	}
	let()
	must(t, <-answers[0])
	if ran.Load() {
		t.Fatal("the fn of a caller that had left its batch ran")
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(scratchBucket)
		if b.Get([]byte("slow")) == nil || b.Get([]byte("short")) != nil {
			return fmt.Errorf("slow=%q short=%q, want the slow write only", b.Get([]byte("slow")), b.Get([]byte("short")))
		}
		return nil
	}))
}

// TestBatchedFailureAnswersAtOnce: a caller whose fn fails in a shared
// transaction (its own error) is answered when its fn returns, not after
// the slower fns behind it and the commit: nothing of it can be kept.
func TestBatchedFailureAnswersAtOnce(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	started, release, let := holdOpen(t)
	boom := errors.New("boom")
	bg := context.Background()
	answers := heldBatch(t, s, []context.Context{bg, bg},
		func(tx bucketstore.Tx) error { return boom },
		func(tx bucketstore.Tx) error {
			close(started)
			<-release
			return tx.Bucket(scratchBucket).Put([]byte("slow"), []byte("1"))
		})
	<-started
	if err := answerOf(t, "the failing caller", answers[0], let); !errors.Is(err, boom) {
		t.Fatalf("the failing caller answered %v, want its fn's error", err)
	}
	let()
	must(t, <-answers[1])
}

// TestBatchClosesAtAKeptCallersDeadline: once the deadline of a caller
// whose fn is already in the shared transaction passes, no further fn
// joins that transaction: the commit comes as soon as the fn running then
// returns, and the callers not yet started go in the next commit.
func TestBatchClosesAtAKeptCallersDeadline(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	started, release := make(chan struct{}), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	txOf := func(tx bucketstore.Tx) int { return tx.(*trackedTx).tx.ID() }
	var ids [3]atomic.Int64
	bg := context.Background()
	answers := heldBatch(t, s, []context.Context{ctx, bg, bg},
		func(tx bucketstore.Tx) error {
			ids[0].Store(int64(txOf(tx)))
			return tx.Bucket(scratchBucket).Put([]byte("short"), []byte("1"))
		},
		func(tx bucketstore.Tx) error {
			ids[1].Store(int64(txOf(tx)))
			close(started)
			<-release
			return tx.Bucket(scratchBucket).Put([]byte("slow"), []byte("1"))
		},
		func(tx bucketstore.Tx) error {
			ids[2].Store(int64(txOf(tx)))
			return tx.Bucket(scratchBucket).Put([]byte("late"), []byte("1"))
		})
	<-started
	cancel() // the short caller's fn is kept; its deadline passes now
	close(release)
	for i, a := range answers {
		if err := <-a; err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	if ids[0].Load() != ids[1].Load() || ids[2].Load() == ids[1].Load() {
		t.Fatalf("transactions %d %d %d: want the first two together and the third in the next commit", ids[0].Load(), ids[1].Load(), ids[2].Load())
	}
}

// TestLeavingCallerWaitsForItsRunningFn: a batched caller whose context
// ends while its own fn runs answers only after that fn has returned (the
// fn may still be writing the caller's variables), and nothing of it is
// kept.
func TestLeavingCallerWaitsForItsRunningFn(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	started, release, let := holdOpen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var returned atomic.Bool
	answers := heldBatch(t, s, []context.Context{ctx}, func(tx bucketstore.Tx) error {
		if err := tx.Bucket(scratchBucket).Put([]byte("mine"), []byte("1")); err != nil {
			return err
		}
		close(started)
		<-release
		returned.Store(true)
		return nil
	})
	<-started
	cancel()
	select {
	case err := <-answers[0]:
		t.Fatalf("the caller answered (%v) while its fn was still running", err)
	case <-time.After(100 * time.Millisecond): // a window for a wrong early answer, not a latency bound
	}
	let()
	err := <-answers[0]
	if !returned.Load() {
		t.Fatal("the caller answered before its fn returned")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("answer %v, want the context's error", err)
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error {
		if v := tx.Bucket(scratchBucket).Get([]byte("mine")); v != nil {
			return errors.New("the left caller's write was kept")
		}
		return nil
	}))
}
