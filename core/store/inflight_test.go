package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestReleaseKeepsTheFileWhileOthersRun: an operation that ends while
// another is still in its transaction leaves the file open, even with
// Linger < 0 (which otherwise lets it go at once); the last one to end
// lets it go.
func TestReleaseKeepsTheFileWhileOthersRun(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), func(o *Options) { o.Linger = -1 })
	ctx := context.Background()
	generation := func() uint64 { s.mu.Lock(); defer s.mu.Unlock(); return s.gen }
	inTx, finish, first := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		first <- s.view(ctx, func(*bolt.Tx) error { close(inTx); <-finish; return nil })
	}()
	<-inTx
	before := generation()
	second := make(chan error, 1)
	go func() { second <- s.view(ctx, func(*bolt.Tx) error { return nil }) }()
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		close(finish)
		t.Fatal("an operation ending under another one in flight blocked (it tried to close the file)")
	}
	if generation() != before {
		t.Fatal("the file was closed under an operation still in flight")
	}
	close(finish)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if generation() == before {
		t.Fatal("with Linger < 0 the last operation to end did not let the file go")
	}
}
