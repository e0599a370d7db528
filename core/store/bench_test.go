package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
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

// BenchmarkGroupCommit measures the CPU a shared commit adds per caller:
// one op is a batch of N fns (each a small write like a task add's: it
// reads a key, rewrites three existing keys, one of them twice, adds two
// new ones, deletes an older one and takes a sequence) run through commitBatch — savepoints,
// undo log, answers — with fsync off, so the disk's latency does not
// drown it.
func BenchmarkGroupCommit(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s, err := Open(Options{Path: filepath.Join(b.TempDir(), "s.db"), Linger: time.Hour, MaxHold: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			db, err := s.acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			db.NoSync = true
			s.release()
			bucket := bucketstore.TopBuckets[0]
			val := bytes.Repeat([]byte("v"), 200)
			must(b, s.Update(ctx, func(tx bucketstore.Tx) error {
				for i := range n {
					sub, err := tx.Bucket(bucket).CreateBucket([]byte(fmt.Sprint("spec-", i)))
					if err != nil {
						return err
					}
					for _, k := range []string{"head", "node-a", "node-b", "node-c"} {
						if err := sub.Put([]byte(k), val); err != nil {
							return err
						}
					}
				}
				return nil
			}))
			fns := make([]func(bucketstore.Tx) error, n)
			var next atomic.Int64
			for i := range fns {
				name := []byte(fmt.Sprint("spec-", i))
				fns[i] = func(tx bucketstore.Tx) error {
					sub := tx.Bucket(bucket).Bucket(name)
					if sub.Get([]byte("head")) == nil {
						return errors.New("no head")
					}
					id := next.Add(1)
					for _, kv := range [][2]string{
						{"head", "h1"}, {"node-a", "a"}, {"node-b", "b"}, {"head", "h2"},
						{fmt.Sprint("version-", id), "v"}, {fmt.Sprint("delta-", id), "d"},
					} {
						if err := sub.Put([]byte(kv[0]), append([]byte(kv[1]), val...)); err != nil {
							return err
						}
					}
					if err := sub.Delete([]byte(fmt.Sprint("version-", id-4))); err != nil {
						return err
					}
					_, err := sub.NextSequence()
					return err
				}
			}
			batch := make([]*commitReq, n)
			for b.Loop() {
				for i := range batch {
					batch[i] = &commitReq{ctx: ctx, fn: fns[i], done: make(chan struct{}, 1)}
				}
				s.commitBatch(batch)
				for _, r := range batch {
					<-r.done
					if err := r.answer(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
