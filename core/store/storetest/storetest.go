// Package storetest is the store port's conformance suite (Run), which both
// engines pass, and opens throwaway bbolt stores for tests (Open). Every
// store Open opens is checked with bbolt's consistency check when the test
// ends, so a test that corrupts the file fails even if its assertions pass.
// It knows no domain: specs/specstore runs the domain stores' suite over
// both engines.
package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd/specd/core/store"
)

// Open returns a store in t.TempDir(). Options other than Path may be set by
// the caller; the cleanup runs store.Check and then Close.
func Open(t testing.TB, opts ...func(*store.Options)) *store.Store {
	t.Helper()
	o := store.Options{Path: filepath.Join(t.TempDir(), ".specd", "specd.db"), LockTimeout: 2 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	s, err := store.Open(o)
	if err != nil {
		t.Fatalf("storetest: open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Check(context.Background()); err != nil {
			t.Errorf("storetest: bbolt consistency check failed: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("storetest: close: %v", err)
		}
	})
	return s
}
