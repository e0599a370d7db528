//go:build unix

package flock

import (
	"os"
	"path/filepath"
	"testing"
)

// TestKindsExclude: on one file opened twice (two open file descriptions), a
// shared lock admits another shared one and refuses an exclusive one; an
// exclusive one refuses both; Release lets the next one in; Wait takes a lock
// that is free.
func TestKindsExclude(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	try := func(f *os.File, k Kind, want bool) {
		t.Helper()
		if ok, err := Try(f, k); err != nil || ok != want {
			t.Fatalf("Try(%v) = %v, %v; want %v", k, ok, err, want)
		}
	}
	try(a, Shared, true)
	try(b, Shared, true)
	if err := Release(b); err != nil {
		t.Fatal(err)
	}
	try(b, Exclusive, false)
	if err := Release(a); err != nil {
		t.Fatal(err)
	}
	try(b, Exclusive, true)
	try(a, Shared, false)
	if err := Release(b); err != nil {
		t.Fatal(err)
	}
	if err := Wait(a, Exclusive); err != nil {
		t.Fatal(err)
	}
	try(b, Shared, false)
}
