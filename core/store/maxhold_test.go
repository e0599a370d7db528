package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestBusyGivesTheFileUpAfterMaxHold: with nobody waiting and a Linger too
// long to matter, continuous use still lets the file go once MaxHold has
// passed (the next operation opens it again), so a busy process never keeps
// others out for longer than MaxHold.
func TestBusyGivesTheFileUpAfterMaxHold(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), func(o *Options) {
		o.MaxHold, o.Linger = 20*time.Millisecond, time.Hour
	})
	ctx := context.Background()
	read := func() {
		if err := s.view(ctx, func(*bolt.Tx) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	generation := func() uint64 { s.mu.Lock(); defer s.mu.Unlock(); return s.gen }
	read()
	before := generation()
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
		read()
	}
	if generation() == before {
		t.Fatal("the file stayed open through 200 ms of continuous use with MaxHold 20 ms")
	}
}
