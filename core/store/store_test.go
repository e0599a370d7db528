package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func openTest(t *testing.T, path string, mod func(*Options)) *Store {
	t.Helper()
	o := Options{Path: path, LockTimeout: 200 * time.Millisecond}
	if mod != nil {
		mod(&o)
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestOpenCreatesMetaAndKeepsInstallID(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".specd", "specd.db")
	s := openTest(t, path, nil)
	ctx := context.Background()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.SchemaVersion != SchemaVersion || info.InstallID == "" || info.SizeBytes == 0 {
		t.Fatalf("unexpected info %+v", info)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again := openTest(t, path, nil)
	id, err := again.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id != info.InstallID {
		t.Fatalf("install id changed across opens: %q then %q", info.InstallID, id)
	}
	gi, err := os.ReadFile(filepath.Join(filepath.Dir(path), ".gitignore"))
	if err != nil || len(gi) == 0 {
		t.Fatalf(".specd/.gitignore not written: %v", err)
	}
}

func TestNoGitignoreOutsideDotSpecd(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, filepath.Join(dir, "mine.db"), nil)
	if _, err := s.Info(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitignore")); !os.IsNotExist(err) {
		t.Fatalf("wrote a .gitignore into a user directory: %v", err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchemaVersion, []byte(strconv.Itoa(SchemaVersion+1)))
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	s := openTest(t, path, nil)
	_, err = s.Info(context.Background())
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable {
		t.Fatalf("want UNAVAILABLE for a newer layout, got %v", err)
	}
}

func TestLockTimeoutWhileAnotherHolderIsBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	holder := openTest(t, path, func(o *Options) { o.MaxHold = time.Hour })
	ctx := context.Background()
	if _, err := holder.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	other := openTest(t, path, func(o *Options) { o.LockTimeout = 100 * time.Millisecond })
	_, err := other.Info(ctx)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.LockTimeout {
		t.Fatalf("want LOCK_TIMEOUT, got %v", err)
	}
	if _, ok := ce.Details["retry_after_ms"]; !ok {
		t.Fatalf("LOCK_TIMEOUT without retry_after_ms: %+v", ce.Details)
	}
	holder.release()
	// Once the holder is idle it lets the file go (after its linger), and the
	// other process gets in within its lock timeout.
	other2 := openTest(t, path, func(o *Options) { o.LockTimeout = 2 * time.Second })
	if _, err := other2.Info(ctx); err != nil {
		t.Fatalf("file not released after idle: %v", err)
	}
}

func TestUpdateRollsBackOnError(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.update(ctx, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put([]byte("probe"), []byte("x")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
	_ = s.view(ctx, func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketMeta).Get([]byte("probe")); v != nil {
			t.Fatalf("rolled-back write is visible: %q", v)
		}
		return nil
	})
}

func TestCancelledDeadlineKeepsNothing(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := s.Info(ctx); err != nil {
		t.Fatal(err)
	}
	err := s.update(ctx, func(tx *bolt.Tx) error {
		cancel() // the deadline passes while the work runs
		return tx.Bucket(bucketMeta).Put([]byte("late"), []byte("x"))
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	_ = s.view(context.Background(), func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta).Get([]byte("late")) != nil {
			t.Fatal("write after cancellation was kept")
		}
		return nil
	})
}

func TestCheckWritableChangesNothing(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	ctx := context.Background()
	if err := s.CheckWritable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	_ = s.Close()
	_, err := s.Info(context.Background())
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable {
		t.Fatalf("want UNAVAILABLE after close, got %v", err)
	}
}

// TestBusyHolderYieldsToOthers: one store keeps the file busy without pause;
// another (a second process, in effect: its own flock) must still get a turn
// within its lock timeout, because the busy one gives the file up after
// MaxHold and waits longer than bbolt's lock poll before taking it back.
func TestBusyHolderYieldsToOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	busy := openTest(t, path, func(o *Options) { o.MaxHold = 100 * time.Millisecond })
	ctx := context.Background()
	if _, err := busy.Info(ctx); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = busy.CheckWritable(ctx)
		}
	}()
	other := openTest(t, path, func(o *Options) { o.LockTimeout = 2 * time.Second })
	start := time.Now()
	for i := 0; i < 3; i++ {
		if err := other.CheckWritable(ctx); err != nil {
			t.Fatalf("turn %d: starved by a busy process: %v", i, err)
		}
	}
	close(stop)
	<-done
	t.Logf("3 turns against a busy holder took %v", time.Since(start))
	if busy.yields == 0 {
		t.Fatal("the busy holder never yielded to the waiting process")
	}
}

// TestBusyAloneDoesNotYield: with nobody waiting, a busy process gives the
// file up after MaxHold but does not pause before taking it back.
func TestBusyAloneDoesNotYield(t *testing.T) {
	busy := openTest(t, filepath.Join(t.TempDir(), "specd.db"), func(o *Options) { o.MaxHold = 20 * time.Millisecond })
	ctx := context.Background()
	deadline := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := busy.CheckWritable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if busy.yields != 0 {
		t.Fatalf("yielded %d times with nobody waiting", busy.yields)
	}
}

// TestAbandonedWaitReleasesTheLock: a store that gave up waiting
// (LOCK_TIMEOUT) leaves a goroutine blocked in the kernel's flock; when that
// goroutine gets the lock after all it must let it go at once, or every
// later process would time out. Nor may the waiter's place in the queue
// hold up those behind it.
func TestAbandonedWaitReleasesTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	holder := openTest(t, path, func(o *Options) { o.MaxHold = time.Hour })
	ctx := context.Background()
	if _, err := holder.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	quitter := openTest(t, path, func(o *Options) { o.LockTimeout = 50 * time.Millisecond })
	for i := 0; i < 3; i++ {
		if _, err := quitter.Info(ctx); core.AsError(err).Code != errcode.LockTimeout {
			t.Fatalf("want LOCK_TIMEOUT while held, got %v", err)
		}
	}
	holder.release()
	holder.mu.Lock()
	_ = holder.closeLocked()
	holder.mu.Unlock()
	for _, s := range []*Store{openTest(t, path, func(o *Options) { o.LockTimeout = 2 * time.Second }), quitter} {
		s.opts.LockTimeout = 2 * time.Second
		if _, err := s.Info(ctx); err != nil {
			t.Fatalf("after the holder let go: %v", err)
		}
	}
}
