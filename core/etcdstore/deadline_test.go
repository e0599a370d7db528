package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs/specstore"
)

// hangBound is how long a test waits for an answer that must come long
// before it: a hard bound on a hang, not a latency measurement.
const hangBound = 30 * time.Second

// deadStore is a store on an address no member listens on, whose request
// timeout (an hour) is far longer than any test: what ends its calls is
// the caller's deadline.
func deadStore(t *testing.T) *etcdstore.Store {
	t.Helper()
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/gone", RequestTimeout: time.Hour, DialTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// answerWithin runs call and fails the test when it has not answered
// within hangBound.
func answerWithin(t *testing.T, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		t.Fatalf("%s: no answer after %s", what, hangBound)
		return nil
	}
}

// TestCallerDeadlineOnDeadClusterIsUnavailable: when the caller's deadline
// ends a call that was waiting for an unreachable cluster, the answer is
// the store's UNAVAILABLE (the cluster is unreachable, retry_after_ms), not
// a bare context error the dispatcher would present as a call too big for
// its deadline.
func TestCallerDeadlineOnDeadClusterIsUnavailable(t *testing.T) {
	t.Parallel()
	st := deadStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := answerWithin(t, "read", func() error { _, err := specstore.New(st, nil).SpecIDs(ctx); return err })
	if codeOf(err) != errcode.Unavailable {
		t.Fatalf("want UNAVAILABLE, got %v", err)
	}
}

// TestWaitingWriterKeepsItsDeadline: a write queued behind another write of
// the same process that waits on an unreachable cluster (the error log's
// writer, say) answers by its own deadline, not when the other gives up.
// Also a read, which queues for the meta keys the first write is reading.
func TestWaitingWriterKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	st := deadStore(t)
	repo := specstore.New(st, nil)
	bg, stopFirst := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		first <- repo.ErrorRecord(bg, errlog.Record{At: "2026-01-01T00:00:00Z", RequestID: "r1", Tool: "spec", Code: "UNAVAILABLE"})
	}()
	defer func() { stopFirst(); <-first }()
	time.Sleep(100 * time.Millisecond) // lets the first write take the locks first (the test holds either way)
	for _, c := range []struct {
		what string
		call func(context.Context) error
	}{
		{"write", func(ctx context.Context) error {
			return repo.ErrorRecord(ctx, errlog.Record{At: "2026-01-01T00:00:01Z", RequestID: "r2", Tool: "spec", Code: "UNAVAILABLE"})
		}},
		{"read", func(ctx context.Context) error { _, err := repo.SpecIDs(ctx); return err }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := answerWithin(t, c.what, func() error { return c.call(ctx) })
		cancel()
		if codeOf(err) != errcode.Unavailable {
			t.Fatalf("%s: want UNAVAILABLE, got %v", c.what, err)
		}
	}
}
