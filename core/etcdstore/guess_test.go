package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

var guessPrefix atomic.Int64

// pointReadsKV counts the requests (Get and Txn) sent to the cluster.
type pointReadsKV struct {
	clientv3.KV
	gets atomic.Int64
	mu   sync.Mutex
	keys []string // the keys of the Gets
}

func (k *pointReadsKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.gets.Add(1)
	k.mu.Lock()
	k.keys = append(k.keys, key)
	k.mu.Unlock()
	return k.KV.Get(ctx, key, opts...)
}

func (k *pointReadsKV) Txn(ctx context.Context) clientv3.Txn {
	k.gets.Add(1)
	return k.KV.Txn(ctx)
}

// twoServers opens two stores on one prefix of one member (two specd
// servers of one team).
func twoServers(t *testing.T) (a, b *Store) {
	ep := etcdtest.Start(t, 4096)
	prefix := fmt.Sprintf("/guess/%d", guessPrefix.Add(1))
	return openInternal(t, ep, prefix, nil), openInternal(t, ep, prefix, nil)
}

// TestPointReadGuessedInAWrite: a write that reads a key outside the
// specs (a sequence, an index marker) reads it from the cluster once; the
// next write of that server reads it without a round trip: its commit is
// its only request.
func TestPointReadGuessedInAWrite(t *testing.T) {
	a, _ := twoServers(t)
	kv := &pointReadsKV{KV: a.kv}
	a.kv = kv
	bump := func() error {
		return a.Update(context.Background(), func(tx bucketstore.Tx) error {
			_, err := tx.Bucket(bucketstore.BucketErrorLog).NextSequence()
			return err
		})
	}
	if err := bump(); err != nil {
		t.Fatal(err)
	}
	before := kv.gets.Load()
	if err := bump(); err != nil {
		t.Fatal(err)
	}
	if n := kv.gets.Load() - before; n != 1 {
		t.Fatalf("the second write sent %d requests, want 1 (its commit)", n)
	}
}

// TestStaleGuessNeverCommits: two servers take turns taking a bucket's
// sequence; each reads it from its own cache, stale after the other's
// turn, so its commit's guard fails and it re-runs from the cluster:
// every number is handed out once.
func TestStaleGuessNeverCommits(t *testing.T) {
	a, b := twoServers(t)
	seen := map[uint64]bool{}
	for i := 0; i < 10; i++ {
		s := a
		if i%2 == 1 {
			s = b
		}
		var n uint64
		if err := s.Update(context.Background(), func(tx bucketstore.Tx) error {
			var err error
			n, err = tx.Bucket(bucketstore.BucketErrorLog).NextSequence()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if seen[n] || n != uint64(i+1) {
			t.Fatalf("turn %d got sequence %d (seen before: %v)", i, n, seen[n])
		}
		seen[n] = true
	}
}

// TestFailureOnStaleGuessIsRechecked: a write whose fn fails because of
// what it read from a stale cache (another server changed the key since)
// commits nothing, so no commit guard proves the read: the guesses are
// checked before it answers, and it re-runs on the key's current value.
func TestFailureOnStaleGuessIsRechecked(t *testing.T) {
	a, b := twoServers(t)
	bucket := bucketstore.BucketErrorLog
	set := func(s *Store, v string) {
		t.Helper()
		if err := s.Update(context.Background(), func(tx bucketstore.Tx) error {
			_ = tx.Bucket(bucket).Get([]byte("k")) // a point read: cached
			return tx.Bucket(bucket).Put([]byte("k"), []byte(v))
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(a, "1")
	set(b, "2") // a's cache still says "1"
	stale := errors.New("read a stale value")
	err := a.Update(context.Background(), func(tx bucketstore.Tx) error {
		if string(tx.Bucket(bucket).Get([]byte("k"))) != "2" {
			return stale
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a write deciding on a key another server changed answered %v", err)
	}
}

// TestBatchPrunesHistoryWithoutPointReads: a batch of writes to one spec
// whose history is full prunes one old version per write; the versions
// it prunes are among the history keys the spec's first read lists, so
// no write of the batch reads a history key on its own round trip.
func TestBatchPrunesHistoryWithoutPointReads(t *testing.T) {
	a, _ := twoServers(t)
	repo := specstore.New(a, nil)
	ctx := context.Background()
	h, err := repo.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "pruned", Mission: "m"}, nil, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	id := h.SpecID
	add := func(title string) error {
		_, err := repo.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "test", Keep: 8}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			_, err := specs.AddPhase(sp, specs.PhaseInput{Title: title})
			return err
		})
		return err
	}
	for i := range 10 { // the history is full: every write prunes
		if err := add(fmt.Sprint("before ", i)); err != nil {
			t.Fatal(err)
		}
	}
	kv := &pointReadsKV{KV: a.kv}
	a.kv = kv
	a.wmu <- struct{}{} // hold the writer: the adds queue, then go as one batch
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- add(fmt.Sprint("batched ", i)) }()
	}
	for {
		a.qmu.Lock()
		queued := len(a.queue)
		a.qmu.Unlock()
		if queued == n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	<-a.wmu
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kv.keys {
		if strings.Contains(k, "/history"+sepKey) {
			t.Fatalf("a write of the batch read a history key on its own round trip: %q", k)
		}
	}
}
