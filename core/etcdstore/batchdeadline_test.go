package etcdstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store/bucketstore"
)

// heldBatch queues one update per fn behind s's held writer lock, in
// order, and releases the lock once all wait: they are then taken as one
// batch. It returns each update's answer channel.
func heldBatch(t *testing.T, s *etcdstore.Store, ctxs []context.Context, fns ...func(bucketstore.Tx) error) []chan error {
	t.Helper()
	release, queued := etcdstore.HoldWriter(s)
	answers := make([]chan error, len(fns))
	for i, fn := range fns {
		answers[i] = make(chan error, 1)
		go func() { answers[i] <- s.Update(ctxs[i], fn) }()
		for queued() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	release()
	return answers
}

// gate is a fn's hold: the fn signals started and waits for open.
type gate struct {
	started, release chan struct{}
	once, start      sync.Once
}

func newGate() *gate  { return &gate{started: make(chan struct{}), release: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// hold is the fn's side: signal started (once: etcd may run a fn again
// after a lost race) and wait for open.
func (g *gate) hold() {
	g.start.Do(func() { close(g.started) })
	<-g.release
}

// answerWhileHeld waits for an answer that must come while g still holds
// another fn of the batch: a hard bound on a hang, not a latency
// measurement.
func answerWhileHeld(t *testing.T, what string, ch chan error, g *gate) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(hangBound):
		g.open()
		t.Fatalf("%s: no answer while another caller's fn of its batch was still running", what)
		return nil
	}
}

// TestBatchedCallerLeavesAtItsDeadline: a caller batched behind a slow fn
// of another caller answers its context's error when its context ends,
// while the slow fn still runs; its fn never runs, nothing of it is
// written, and the slow one commits.
func TestBatchedCallerLeavesAtItsDeadline(t *testing.T) {
	t.Parallel()
	st := openStore(t, startEtcd(t, 4096), nil)
	bucket := bucketstore.BucketDigests
	g := newGate()
	defer g.open()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ran atomic.Bool
	answers := heldBatch(t, st, []context.Context{context.Background(), ctx},
		func(tx bucketstore.Tx) error {
			g.hold()
			return tx.Bucket(bucket).Put([]byte("slow"), []byte("1"))
		},
		func(tx bucketstore.Tx) error {
			ran.Store(true)
			return tx.Bucket(bucket).Put([]byte("short"), []byte("1"))
		})
	<-g.started
	cancel()
	if err := answerWhileHeld(t, "the short caller", answers[1], g); !errors.Is(err, context.Canceled) {
		t.Fatalf("the short caller answered %v, want its context's error", err)
	}
	g.open()
	if err := <-answers[0]; err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Fatal("the fn of a caller that had left its batch ran")
	}
	_ = st.View(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucket)
		if b.Get([]byte("slow")) == nil || b.Get([]byte("short")) != nil {
			t.Fatalf("slow=%q short=%q, want the slow write only", b.Get([]byte("slow")), b.Get([]byte("short")))
		}
		return nil
	})
}

// TestBatchedWriteOutlivesAnothersDeadline: in a batch whose first caller
// has a short deadline, that caller's deadline passing while a slower fn
// of another caller runs neither holds the first past it (its fn was
// taken into the commit, so it hears that the outcome is unknown) nor
// cuts the other's write, which reads after that deadline and commits.
func TestBatchedWriteOutlivesAnothersDeadline(t *testing.T) {
	t.Parallel()
	st := openStore(t, startEtcd(t, 4096), nil)
	bucket := bucketstore.BucketDigests
	g := newGate()
	defer g.open()
	short, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	answers := heldBatch(t, st, []context.Context{short, context.Background()},
		func(tx bucketstore.Tx) error { return tx.Bucket(bucket).Put([]byte("short"), []byte("1")) },
		func(tx bucketstore.Tx) error {
			g.hold()
			if tx.Bucket(bucket).Get([]byte("unread")) != nil { // a read after the other's deadline
				return errors.New("unexpected key")
			}
			return tx.Bucket(bucket).Put([]byte("slow"), []byte("1"))
		})
	<-g.started
	err := answerWhileHeld(t, "the short caller", answers[0], g)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable || ce.Details["outcome"] != "unknown" {
		t.Fatalf("the short caller answered %v, want UNAVAILABLE with outcome unknown", err)
	}
	g.open()
	if err := <-answers[1]; err != nil {
		t.Fatalf("the slow caller's write was cut by the other's deadline: %v", err)
	}
	_ = st.View(context.Background(), func(tx bucketstore.Tx) error {
		if tx.Bucket(bucket).Get([]byte("slow")) == nil {
			t.Fatal("the slow write is missing")
		}
		return nil
	})
}

// TestLeavingCallerWaitsForItsRunningFn: a caller whose context ends while
// its own fn runs answers only after that fn has returned (the fn may
// still be writing the caller's variables), and nothing of it is written.
func TestLeavingCallerWaitsForItsRunningFn(t *testing.T) {
	t.Parallel()
	st := openStore(t, startEtcd(t, 4096), nil)
	bucket := bucketstore.BucketDigests
	g := newGate()
	defer g.open()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var returned atomic.Bool
	answers := heldBatch(t, st, []context.Context{ctx}, func(tx bucketstore.Tx) error {
		if err := tx.Bucket(bucket).Put([]byte("mine"), []byte("v")); err != nil {
			return err
		}
		g.hold()
		returned.Store(true)
		return nil
	})
	<-g.started
	cancel()
	select {
	case err := <-answers[0]:
		t.Fatalf("the caller answered (%v) while its fn was still running", err)
	case <-time.After(100 * time.Millisecond): // a window for a wrong early answer, not a latency bound
	}
	g.open()
	err := <-answers[0]
	if !returned.Load() {
		t.Fatal("the caller answered before its fn returned")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("answer %v, want the context's error", err)
	}
	if err := st.View(context.Background(), func(tx bucketstore.Tx) error {
		if v := tx.Bucket(bucket).Get([]byte("mine")); v != nil {
			return errors.New("the left caller's write was kept")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
