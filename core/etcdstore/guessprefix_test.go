package etcdstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
)

// TestStaleGuessUnderPrefixGuard: a write that reads more keys from the
// cluster than one transaction compares is guarded by the prefix ("nothing
// changed since the snapshot"), which cannot see a guessed key that
// another server changed BEFORE the snapshot. Its guesses must then be
// guarded one by one: the stale guess fails the commit, and the write
// re-runs on the key's current value instead of committing what it
// decided on the stale one.
func TestStaleGuessUnderPrefixGuard(t *testing.T) {
	ep := etcdtest.StartDefault(t) // --max-txn-ops 128: 124 compares
	a := openInternal(t, ep, "/guessprefix", nil)
	b := openInternal(t, ep, "/guessprefix", nil)
	ctx := context.Background()
	if err := a.Update(ctx, func(tx bucketstore.Tx) error { return guessedNodes(tx).Put([]byte("n1"), []byte("v1")) }); err != nil {
		t.Fatal(err)
	}
	warmGuess(t, a)
	const many = 130 // more point guards than one transaction compares
	for lo := 0; lo < many; lo += 65 {
		if err := b.Update(ctx, func(tx bucketstore.Tx) error {
			for i := lo; i < lo+65; i++ {
				if err := tx.Bucket(bucketstore.BucketErrorLog).Put([]byte(fmt.Sprintf("f%03d", i)), []byte("f")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Update(ctx, func(tx bucketstore.Tx) error { return guessedNodes(tx).Put([]byte("n1"), []byte("from b")) }); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(ctx, func(tx bucketstore.Tx) error {
		for i := range many { // read from the cluster: the snapshot follows b's writes
			if tx.Bucket(bucketstore.BucketErrorLog).Get([]byte(fmt.Sprintf("f%03d", i))) == nil {
				return fmt.Errorf("f%03d is absent", i)
			}
		}
		n := guessedNodes(tx)
		return n.Put([]byte("n0"), append([]byte("seen "), n.Get([]byte("n1"))...))
	}); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := b.View(ctx, func(tx bucketstore.Tx) error {
		got = string(guessedNodes(tx).Get([]byte("n0")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != "seen from b" {
		t.Fatalf("n0 = %q, want %q: a committed a decision taken on its stale guess of n1", got, "seen from b")
	}
}
