package store

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkBoltCommit1KB is the yardstick of the performance targets: one
// bbolt Update with one 1 KB Put, on this machine's disk, with the file kept
// open (bbolt's own cost, without specd's open/close).
func BenchmarkBoltCommit1KB(b *testing.B) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "y.db"), 0o644, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	val := make([]byte, 1024)
	key := []byte("k")
	_ = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists([]byte("b")); return err })
	for b.Loop() {
		if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(key, val) }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreOpenRelease measures what specd adds per call when the file
// is not already open: open (flock, mmap, meta read) and close.
func BenchmarkStoreOpenRelease(b *testing.B) {
	s, err := Open(Options{Path: filepath.Join(b.TempDir(), "s.db"), Linger: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		if err := s.view(ctx, func(*bolt.Tx) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
