//go:build unix

package workspacefs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Lock excludes a second holder (another open file, as another process
// would have) until the first unlocks; a waiter gives up with its
// context's error.
func TestLockExcludesUntilUnlocked(t *testing.T) {
	root := t.TempDir()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(context.Background(), ".specd/x.lock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".specd", "x.lock")); err != nil {
		t.Fatalf("lock file not made: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := d.Lock(ctx, ".specd/x.lock"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a held lock was taken again: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := d.Lock(context.Background(), ".specd/x.lock")
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lock(context.Background(), "../out.lock"); err == nil {
		t.Fatal("a lock outside the workspace was taken")
	}
}
