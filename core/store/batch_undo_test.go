package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
)

// The savepoints' undo log: what a failed fn of a shared commit wrote is
// undone exactly, however it wrote it.

var errRefused = errors.New("refused")

// dump reads the scratch bucket whole: keys with their values, nested
// buckets (recursively) as "name/" entries, and sequences as "name#".
func dump(t *testing.T, s *Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	var walk func(prefix string, b bucketstore.Bucket) error
	walk = func(prefix string, b bucketstore.Bucket) error {
		got[prefix+"#"] = fmt.Sprint(seqOf(b))
		return b.ForEach(func(k, v []byte) error {
			if v != nil {
				got[prefix+string(k)] = string(v)
				return nil
			}
			got[prefix+string(k)+"/"] = ""
			return walk(prefix+string(k)+"/", b.Bucket(k))
		})
	}
	must(t, s.View(context.Background(), func(tx bucketstore.Tx) error { return walk("", tx.Bucket(scratchBucket)) }))
	return got
}

// keptThenRefused checks a batch of two fns whose first put other=kept
// and whose second was refused: the answers are nil and errRefused, and s
// holds before plus the first fn's write (what names the moment).
func keptThenRefused(t *testing.T, s *Store, errs []error, before map[string]string, what string) {
	t.Helper()
	if errs[0] != nil || !errors.Is(errs[1], errRefused) {
		t.Fatalf("%s: the batch answered %v, want the first fn kept and the second refused", what, errs)
	}
	before["other"] = "kept"
	sameAs(t, s, before, what)
}

// sameAs fails unless the scratch bucket reads as want.
func sameAs(t *testing.T, s *Store, want map[string]string, what string) {
	t.Helper()
	if got := dump(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: the bucket holds\n%v\nwant\n%v", what, got, want)
	}
}

// TestBatchUndoRestoresTheFirstValue: a failed fn that writes one key
// several times (put, put again, delete, put), deletes a key and puts it
// back, and puts a key that was absent twice, leaves every key as it was
// before it — the value undo restores is the one the fn started from, not
// one it wrote itself.
func TestBatchUndoRestoresTheFirstValue(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k": "orig", "d": "there", "e": ""})
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
		func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			key := []byte("k")
			for _, err := range []error{
				b.Put(key, []byte("one")),
				b.Put(key, []byte("two")),
				b.Delete(key),
				b.Put(key, []byte("three")),
				b.Delete([]byte("d")),
				b.Put([]byte("d"), []byte("back")),
				b.Put([]byte("e"), []byte("no longer empty")),
				b.Put([]byte("e"), []byte("")),
				b.Put([]byte("new"), []byte("1")),
				b.Put([]byte("new"), []byte("2")),
			} {
				if err != nil {
					return err
				}
			}
			copy(key, "x") // the port lets a caller reuse its key buffer
			return errRefused
		},
	)
	keptThenRefused(t, s, errs, before, "after the failed fn")
}

// TestBatchUndoBeyondTheDedupWindow: a key written again after more than
// dedupWindow other writes is logged twice; undo still restores the value
// from before the fn.
func TestBatchUndoBeyondTheDedupWindow(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k": "orig"})
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
		func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			if err := b.Put([]byte("k"), []byte("first")); err != nil {
				return err
			}
			for i := range 2 * dedupWindow {
				if err := b.Put(fmt.Appendf(nil, "fill-%03d", i), []byte("x")); err != nil {
					return err
				}
			}
			if err := b.Put([]byte("k"), []byte("second")); err != nil {
				return err
			}
			return errRefused
		},
	)
	keptThenRefused(t, s, errs, before, "after the failed fn")
}

// TestBatchUndoRemovesCreatedBuckets: buckets a failed fn created —
// written, nested, sequenced, reached again by name — disappear whole,
// while a bucket that existed, reached through CreateBucketIfNotExists
// and by name, gets its keys and sequence back.
func TestBatchUndoRemovesCreatedBuckets(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	must(t, s.Update(context.Background(), func(tx bucketstore.Tx) error {
		old, err := tx.Bucket(scratchBucket).CreateBucket([]byte("old"))
		if err != nil {
			return err
		}
		if _, err := old.NextSequence(); err != nil {
			return err
		}
		return old.Put([]byte("k"), []byte("orig"))
	}))
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
		func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			nb, err := b.CreateBucket([]byte("new"))
			if err != nil {
				return err
			}
			inner, err := nb.CreateBucketIfNotExists([]byte("inner"))
			if err != nil {
				return err
			}
			again := b.Bucket([]byte("new")) // reached by name: logs, harmlessly
			old, err := b.CreateBucketIfNotExists([]byte("old"))
			if err != nil {
				return err
			}
			byName := b.Bucket([]byte("old"))
			for _, err := range []error{
				nb.Put([]byte("a"), []byte("1")),
				inner.Put([]byte("b"), []byte("2")),
				again.Put([]byte("c"), []byte("3")),
				old.Put([]byte("k"), []byte("changed")),
				old.Put([]byte("more"), []byte("added")),
				byName.Put([]byte("k2"), []byte("added by name")),
			} {
				if err != nil {
					return err
				}
			}
			for _, bk := range []bucketstore.Bucket{nb, inner, old} {
				if _, err := bk.NextSequence(); err != nil {
					return err
				}
			}
			return errRefused
		},
	)
	keptThenRefused(t, s, errs, before, "after the failed fn")
}

// TestBatchUndoSurvivesAFailedWrite: a write the engine refuses (a Put on
// a nested bucket's name) logs nothing, so undoing the fn that tried it
// (and went on) fails nothing: the batch commits the others.
func TestBatchUndoSurvivesAFailedWrite(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	must(t, s.Update(context.Background(), func(tx bucketstore.Tx) error {
		_, err := tx.Bucket(scratchBucket).CreateBucket([]byte("nested"))
		return err
	}))
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratchBucket)
			if err := b.Put([]byte("nested"), []byte("v")); err == nil {
				return errors.New("a Put on a bucket's name succeeded")
			}
			if err := b.Delete([]byte("nested")); err == nil {
				return errors.New("a Delete of a bucket's name succeeded")
			}
			if err := b.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			return errRefused
		},
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
	)
	if !errors.Is(errs[0], errRefused) || errs[1] != nil {
		t.Fatalf("answers %v, want the failing fn's own error and nil", errs)
	}
	before["other"] = "kept"
	sameAs(t, s, before, "after the batch")
}

// TestBatchLoneFnFailsWhole: a batch of one fn runs it unlogged; when it
// fails (an error, a panic), the transaction is rolled back whole and
// nothing of it is kept.
func TestBatchLoneFnFailsWhole(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k": "orig"})
	before := dump(t, s)
	for _, fail := range []func() error{
		func() error { return errRefused },
		func() error { panic("a bug") },
	} {
		logged := true
		errs, txs := batchOf(t, s, nil, func(tx bucketstore.Tx) error {
			logged = tx.(*trackedTx).log != nil
			b := tx.Bucket(scratchBucket)
			nb, err := b.CreateBucket([]byte("new"))
			if err != nil {
				return err
			}
			for _, err := range []error{
				b.Put([]byte("k"), []byte("changed")),
				b.Put([]byte("added"), []byte("1")),
				nb.Put([]byte("a"), []byte("1")),
			} {
				if err != nil {
					return err
				}
			}
			if _, err := b.NextSequence(); err != nil {
				return err
			}
			return fail()
		})
		if errs[0] == nil || txs[0] <= 0 {
			t.Fatalf("the lone fn answered %v in transaction %d, want its failure in a shared commit", errs[0], txs[0])
		}
		if logged {
			t.Fatal("a batch's only fn ran with an undo log")
		}
		sameAs(t, s, before, fmt.Sprintf("after the lone fn failed (%v)", errs[0]))
	}
}

// TestBatchUndoLogIsResetBetweenBatches: the undo log serves batch after
// batch; a failed fn undoes its own writes only, never a step left over
// from an earlier savepoint.
func TestBatchUndoLogIsResetBetweenBatches(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k": "orig"})
	put := func(k, v string) func(bucketstore.Tx) error {
		return func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte(k), []byte(v)) }
	}
	failing := func(k string) func(bucketstore.Tx) error {
		return func(tx bucketstore.Tx) error {
			if err := put(k, "failed")(tx); err != nil {
				return err
			}
			return errRefused
		}
	}
	want := dump(t, s)
	for round, k := range []string{"a", "b", "c"} {
		errs, _ := batchOf(t, s, nil, put("k", "kept-"+k), failing("k"), failing(k))
		if errs[0] != nil || !errors.Is(errs[1], errRefused) || !errors.Is(errs[2], errRefused) {
			t.Fatalf("round %d answered %v", round, errs)
		}
		want["k"] = "kept-" + k
		sameAs(t, s, want, fmt.Sprintf("after round %d", round))
	}
}

// TestBatchReadsAndUndoMatchBbolt: a random mix of writes (puts, empty
// values, deletes, nested buckets, sequences) in two buckets of a shared
// transaction, with every key read after each write both through the
// tracked bucket (its kept cursors) and through bbolt's own Get: the
// answers agree, and when the fn fails, undo leaves the store as it was.
// The same mix as a batch's lone fn reads the same.
func TestBatchReadsAndUndoMatchBbolt(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k03": "seeded", "k10": "", "k21": "x"})
	must(t, s.Update(context.Background(), func(tx bucketstore.Tx) error {
		nb, err := tx.Bucket(scratchBucket).CreateBucket([]byte("k15"))
		if err != nil {
			return err
		}
		return nb.Put([]byte("k02"), []byte("inner"))
	}))
	before := dump(t, s)
	keys := make([][]byte, 30)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%02d", i)
	}
	mix := func(seed int64) func(tx bucketstore.Tx) error {
		return func(tx bucketstore.Tx) error {
			rng := rand.New(rand.NewSource(seed))
			raw := tx.(*trackedTx).tx.Bucket(scratchBucket)
			buckets := []bucketstore.Bucket{tx.Bucket(scratchBucket), tx.Bucket(scratchBucket).Bucket([]byte("k15"))}
			raws := []func() *bolt.Bucket{
				func() *bolt.Bucket { return raw },
				func() *bolt.Bucket { return raw.Bucket([]byte("k15")) },
			}
			for op := range 600 {
				i := rng.Intn(len(buckets))
				b, k := buckets[i], keys[rng.Intn(len(keys))]
				switch rng.Intn(6) {
				case 0, 1:
					_ = b.Put(k, fmt.Appendf(nil, "v%d", op)) // refused on a bucket's name
				case 2:
					_ = b.Put(k, []byte{})
				case 3:
					_ = b.Delete(k)
				case 4:
					if nb, err := b.CreateBucketIfNotExists(k); err == nil {
						_ = nb.Put([]byte("in"), []byte("side"))
					}
				case 5:
					if _, err := b.NextSequence(); err != nil {
						return err
					}
				}
				for j, bk := range buckets {
					for _, k := range append(keys, []byte("k"), []byte("zz"), []byte("")) {
						got, want := bk.Get(k), raws[j]().Get(k)
						if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
							return fmt.Errorf("op %d: bucket %d Get(%q) = %q, bbolt's %q", op, j, k, got, want)
						}
					}
				}
			}
			return errRefused
		}
	}
	for seed := range int64(4) {
		errs, _ := batchOf(t, s, nil,
			func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
			mix(seed),
		)
		keptThenRefused(t, s, errs, before, fmt.Sprintf("after the failed mix of seed %d", seed))
		errs, _ = batchOf(t, s, nil, mix(seed))
		if !errors.Is(errs[0], errRefused) {
			t.Fatalf("seed %d, lone, answered %v", seed, errs)
		}
		sameAs(t, s, before, fmt.Sprintf("after the failed lone mix of seed %d", seed))
	}
}

// TestBatchUndoInsideACreatedBucketReachedTwice: a fn that creates a
// bucket and reaches it again from its parent holds two handles to one
// bucket; what it writes through either is undone with the bucket. A key
// written through the second handle and then turned into a nested bucket
// through the first must not make the undo fail (and fail every fn of the
// batch with it).
func TestBatchUndoInsideACreatedBucketReachedTwice(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	seed(t, s, map[string]string{"k": "orig"})
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
		func(tx bucketstore.Tx) error {
			created, err := tx.Bucket(scratchBucket).CreateBucket([]byte("x"))
			if err != nil {
				return err
			}
			again := tx.Bucket(scratchBucket).Bucket([]byte("x"))
			if err := again.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			if err := created.Delete([]byte("k")); err != nil {
				return err
			}
			if _, err := created.CreateBucket([]byte("k")); err != nil {
				return err
			}
			return errRefused
		},
	)
	keptThenRefused(t, s, errs, before, "after the failed fn")
}

// TestBatchUndoOfAnEmptyKeyDelete: deleting the empty key (which bbolt
// answers as deleting nothing) in an empty bucket logs nothing to undo: the
// fn's failure is its own, not every fn's of the batch.
func TestBatchUndoOfAnEmptyKeyDelete(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	must(t, s.Update(context.Background(), func(tx bucketstore.Tx) error {
		_, err := tx.Bucket(scratchBucket).CreateBucket([]byte("empty"))
		return err
	}))
	before := dump(t, s)
	errs, _ := batchOf(t, s, nil,
		func(tx bucketstore.Tx) error { return tx.Bucket(scratchBucket).Put([]byte("other"), []byte("kept")) },
		func(tx bucketstore.Tx) error {
			if err := tx.Bucket(scratchBucket).Bucket([]byte("empty")).Delete([]byte{}); err != nil {
				return err
			}
			return errRefused
		},
	)
	keptThenRefused(t, s, errs, before, "after the failed fn")
}
