package etcdstore

import (
	"context"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
)

// guessedSpec opens spec s1's nodes bucket in tx (creating it).
func guessedNodes(tx bucketstore.Tx) bucketstore.Bucket {
	sp, err := tx.Bucket(bucketstore.BucketSpecs).CreateBucketIfNotExists([]byte("s1"))
	if err != nil {
		panic(err)
	}
	n, err := sp.CreateBucketIfNotExists(bucketstore.BucketNodes)
	if err != nil {
		panic(err)
	}
	return n
}

// warmGuess makes a guess spec s1 after writes of its own (reading its
// nodes, so it lists them), and fails the test when it does not.
func warmGuess(t *testing.T, a *Store) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := a.Update(ctx, func(tx bucketstore.Tx) error {
			n := guessedNodes(tx)
			return n.Put([]byte("n0"), append([]byte("x"), n.Get([]byte("n1"))...))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if a.guesses.get(a.specsRoot+"/s1") == nil {
		t.Fatal("a does not guess the spec after its writes")
	}
}

// TestGuessedWriteThatWritesNothing: a write whose fns all succeed but
// write nothing (a mutation that finds nothing to change: complete a task
// already complete) decided that on what it read. When it read a guess
// that another server's write made stale, its answer must not be given
// on it: the batch proves its guesses before answering, and re-runs.
func TestGuessedWriteThatWritesNothing(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	if err := a.Update(ctx, func(tx bucketstore.Tx) error { return guessedNodes(tx).Put([]byte("n1"), []byte("v1")) }); err != nil {
		t.Fatal(err)
	}
	warmGuess(t, a)
	if err := b.Update(ctx, func(tx bucketstore.Tx) error { return guessedNodes(tx).Put([]byte("n1"), []byte("from b")) }); err != nil {
		t.Fatal(err)
	}
	var seen string
	if err := a.Update(ctx, func(tx bucketstore.Tx) error {
		seen = string(guessedNodes(tx).Get([]byte("n1")))
		return nil // nothing to change
	}); err != nil {
		t.Fatal(err)
	}
	if seen != "from b" {
		t.Fatalf("a's write that changed nothing answered on n1 = %q, want b's %q (a stale guess)", seen, "from b")
	}
}
