package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
)

// Opener opens an empty store of the engine under test for t (closed and
// checked when t ends).
type Opener func(t testing.TB) bucketstore.Store

// Run is the store port's conformance suite: every engine (core/store on
// bbolt, core/etcdstore on etcd) keeps ordered buckets of bytes with the
// same semantics — key order, nested buckets, sequences, whole-or-nothing
// updates, serialized read-modify-writes — and the same identity calls.
// The domain stores' own suite (specs/specstore) runs over both engines on
// top of this one.
func Run(t *testing.T, open Opener) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"TopBucketsExist", testTopBucketsExist},
		{"KeysInOrderAndNestedBuckets", testKeysInOrderAndNestedBuckets},
		{"CursorWalksBothWays", testCursorWalksBothWays},
		{"SequencesPersist", testSequencesPersist},
		{"FailedUpdateKeepsNothing", testFailedUpdateKeepsNothing},
		{"ViewKeepsNoWrites", testViewKeepsNoWrites},
		{"ConcurrentUpdatesSerialize", testConcurrentUpdatesSerialize},
		{"Identity", testIdentity},
		{"ExportImportRoundTrip", testExportImportRoundTrip},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

// scratch is the top-level bucket the suite writes under: a bucket of the
// layout, so every engine has it.
var scratch = bucketstore.BucketSpecs

func update(t testing.TB, st bucketstore.Store, fn func(b bucketstore.Bucket) error) {
	t.Helper()
	if err := st.Update(context.Background(), func(tx bucketstore.Tx) error { return fn(tx.Bucket(scratch)) }); err != nil {
		t.Fatal(err)
	}
}

func view(t testing.TB, st bucketstore.Store, fn func(b bucketstore.Bucket) error) {
	t.Helper()
	if err := st.View(context.Background(), func(tx bucketstore.Tx) error { return fn(tx.Bucket(scratch)) }); err != nil {
		t.Fatal(err)
	}
}

// testTopBucketsExist: a fresh store has every top-level bucket of the
// layout, in a read as in a write.
func testTopBucketsExist(t *testing.T, open Opener) {
	st := open(t)
	for _, run := range []func(context.Context, func(bucketstore.Tx) error) error{st.View, st.Update} {
		if err := run(context.Background(), func(tx bucketstore.Tx) error {
			for _, name := range bucketstore.TopBuckets {
				if tx.Bucket(name) == nil {
					return fmt.Errorf("no top-level bucket %q", name)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// testKeysInOrderAndNestedBuckets: keys come back in byte order whatever
// order they were written in, a nested bucket is listed by ForEachBucket
// (and by ForEach, if at all, as a nil value), Delete removes, and
// CreateBucket refuses an existing name while CreateBucketIfNotExists
// returns it.
func testKeysInOrderAndNestedBuckets(t *testing.T, open Opener) {
	st := open(t)
	update(t, st, writeNested)
	view(t, st, checkNested)
	update(t, st, func(b bucketstore.Bucket) error {
		n, err := b.CreateBucketIfNotExists([]byte("n"))
		if err != nil || n.Get([]byte("a")) == nil {
			return fmt.Errorf("CreateBucketIfNotExists of an existing bucket: %v", err)
		}
		return nil
	})
}

// writeNested creates bucket "n" (a second CreateBucket of it must fail),
// puts keys into it out of order, creates the nested bucket "a\x01" in it
// and deletes key "c".
func writeNested(b bucketstore.Bucket) error {
	n, err := b.CreateBucket([]byte("n"))
	if err != nil {
		return err
	}
	if _, err := b.CreateBucket([]byte("n")); err == nil {
		return errors.New("CreateBucket of an existing bucket succeeded")
	}
	for _, k := range []string{"c", "a\x00z", "b", "a", "\xff"} {
		if err := n.Put([]byte(k), []byte("v"+k)); err != nil {
			return err
		}
	}
	if _, err := n.CreateBucket([]byte("a\x01")); err != nil {
		return err
	}
	return n.Delete([]byte("c"))
}

// checkNested checks what writeNested left: "n" is found and "m" is not,
// its keys come back in byte order with their values, its one nested
// bucket is listed by ForEachBucket, and the deleted key is gone.
func checkNested(b bucketstore.Bucket) error {
	n := b.Bucket([]byte("n"))
	if n == nil || b.Bucket([]byte("m")) != nil {
		return errors.New("nested bucket lookup")
	}
	keys, err := valueKeys(n)
	if err != nil {
		return err
	}
	if want := []string{"a", "a\x00z", "b", "\xff"}; !reflect.DeepEqual(keys, want) {
		return fmt.Errorf("ForEach keys %q, want %q", keys, want)
	}
	var nested []string
	if err := n.ForEachBucket(func(k []byte) error { nested = append(nested, string(k)); return nil }); err != nil {
		return err
	}
	if !reflect.DeepEqual(nested, []string{"a\x01"}) {
		return fmt.Errorf("ForEachBucket %q", nested)
	}
	if n.Get([]byte("c")) != nil {
		return errors.New("a deleted key is still there")
	}
	return nil
}

// valueKeys lists the keys ForEach gives with a value, in its order,
// checking each value is "v" and its key; a nil value is allowed only for
// the nested bucket "a\x01".
func valueKeys(n bucketstore.Bucket) ([]string, error) {
	var keys []string
	err := n.ForEach(func(k, v []byte) error {
		if v == nil {
			if string(k) != "a\x01" {
				return fmt.Errorf("ForEach gives %q a nil value, but it is no nested bucket", k)
			}
			return nil
		}
		keys = append(keys, string(k))
		if !bytes.Equal(v, []byte("v"+string(k))) {
			return fmt.Errorf("value of %q is %q", k, v)
		}
		return nil
	})
	return keys, err
}

// testCursorWalksBothWays: First, Last, Seek, Next and Prev visit keys in
// order and answer nil past either end.
func testCursorWalksBothWays(t *testing.T, open Opener) {
	st := open(t)
	update(t, st, func(b bucketstore.Bucket) error {
		n, err := b.CreateBucket([]byte("cur"))
		if err != nil {
			return err
		}
		for _, k := range []string{"k2", "k4", "k1", "k3"} {
			if err := n.Put([]byte(k), []byte(k)); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, st, func(b bucketstore.Bucket) error {
		c := b.Bucket([]byte("cur")).Cursor()
		var fwd, back []string
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			fwd = append(fwd, string(k))
		}
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			back = append(back, string(k))
		}
		if !reflect.DeepEqual(fwd, []string{"k1", "k2", "k3", "k4"}) || !reflect.DeepEqual(back, []string{"k4", "k3", "k2", "k1"}) {
			return fmt.Errorf("forward %q, backward %q", fwd, back)
		}
		return checkCursorMoves(c)
	})
}

// checkCursorMoves makes c's single moves over the keys k1…k4 (each
// holding its own name) in turn, each landing on the key named (and its
// value) or, past either end, on nil.
func checkCursorMoves(c bucketstore.Cursor) error {
	for _, m := range []struct {
		what string
		move func() (key, value []byte)
		want string // "" for nil
	}{
		{"Seek(k25)", func() ([]byte, []byte) { return c.Seek([]byte("k25")) }, "k3"},
		{"Seek past the end", func() ([]byte, []byte) { return c.Seek([]byte("k9")) }, ""},
		{"Last", c.Last, "k4"},
		{"Next past the end", c.Next, ""},
		{"First", c.First, "k1"},
		{"Prev before the start", c.Prev, ""},
	} {
		if k, v := m.move(); string(k) != m.want || string(v) != m.want {
			return fmt.Errorf("cursor: %s = %q %q, want %q", m.what, k, v, m.want)
		}
	}
	return nil
}

// testSequencesPersist: NextSequence counts from 1 per bucket, across
// transactions.
func testSequencesPersist(t *testing.T, open Opener) {
	st := open(t)
	var got []uint64
	for range 3 {
		update(t, st, func(b bucketstore.Bucket) error {
			n, err := b.CreateBucketIfNotExists([]byte("seq"))
			if err != nil {
				return err
			}
			s, err := n.NextSequence()
			got = append(got, s)
			return err
		})
	}
	update(t, st, func(b bucketstore.Bucket) error {
		n, err := b.CreateBucketIfNotExists([]byte("other"))
		if err != nil {
			return err
		}
		s, err := n.NextSequence()
		got = append(got, s)
		return err
	})
	if !reflect.DeepEqual(got, []uint64{1, 2, 3, 1}) {
		t.Fatalf("sequences %v, want [1 2 3 1]", got)
	}
}

// testFailedUpdateKeepsNothing: an update whose fn fails, or whose context
// ends while fn runs, keeps none of its writes.
func testFailedUpdateKeepsNothing(t *testing.T, open Opener) {
	st := open(t)
	boom := errors.New("boom")
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		fail func() error
		want error
	}{
		{"fn error", context.Background(), func() error { return boom }, boom},
		{"context ends", cctx, func() error { cancel(); return nil }, context.Canceled},
	} {
		err := st.Update(c.ctx, func(tx bucketstore.Tx) error {
			b := tx.Bucket(scratch)
			n, err := b.CreateBucket([]byte("lost"))
			if err != nil {
				return err
			}
			if err := n.Put([]byte("k"), []byte("v")); err != nil {
				return err
			}
			if err := b.Put([]byte("lost-key"), []byte("v")); err != nil {
				return err
			}
			return c.fail()
		})
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: want %v, got %v", c.name, c.want, err)
		}
		view(t, st, func(b bucketstore.Bucket) error {
			if b.Bucket([]byte("lost")) != nil || b.Get([]byte("lost-key")) != nil {
				return fmt.Errorf("%s: a failed update kept its writes", c.name)
			}
			return nil
		})
	}
}

// testViewKeepsNoWrites: a write inside View is not kept (bbolt refuses
// it, etcd drops it).
func testViewKeepsNoWrites(t *testing.T, open Opener) {
	st := open(t)
	_ = st.View(context.Background(), func(tx bucketstore.Tx) error {
		_ = tx.Bucket(scratch).Put([]byte("k"), []byte("v"))
		return nil
	})
	view(t, st, func(b bucketstore.Bucket) error {
		if b.Get([]byte("k")) != nil {
			return errors.New("a read transaction wrote")
		}
		return nil
	})
}

// testConcurrentUpdatesSerialize: concurrent read-modify-write updates of
// one key lose no increment (what every guard of the domain stores, e.g.
// expected_version, builds on).
func testConcurrentUpdatesSerialize(t *testing.T, open Opener) {
	st := open(t)
	const workers, each = 4, 5
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
					b := tx.Bucket(scratch)
					n := 0
					if v := b.Get([]byte("counter")); v != nil {
						if _, err := fmt.Sscan(string(v), &n); err != nil {
							return err
						}
					}
					return b.Put([]byte("counter"), []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	view(t, st, func(b bucketstore.Bucket) error {
		if got, want := string(b.Get([]byte("counter"))), fmt.Sprint(workers*each); got != want {
			return fmt.Errorf("counter %s after %s increments", got, want)
		}
		return nil
	})
}

// testIdentity: the install id is stable and is Info's; Info names the
// layout version; a fresh store is writable.
func testIdentity(t *testing.T, open Opener) {
	st := open(t)
	ctx := context.Background()
	id, err := st.InstallID(ctx)
	if err != nil || id == "" {
		t.Fatalf("InstallID %q, %v", id, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.InstallID != id || info.SchemaVersion != bucketstore.SchemaVersion || info.Path != st.Path() || st.Path() == "" {
		t.Fatalf("Info %+v (install id %q, path %q)", info, id, st.Path())
	}
	if again, _ := st.InstallID(ctx); again != id {
		t.Fatalf("install id changed: %q then %q", id, again)
	}
	if err := st.CheckWritable(ctx); err != nil {
		t.Fatalf("CheckWritable: %v", err)
	}
	if other, _ := open(t).InstallID(ctx); other == id {
		t.Fatalf("two stores share the install id %q", id)
	}
}

// testExportImportRoundTrip: what one store exports, another imports into
// the same buckets, keys and sequences (specd migrate), and importing it
// again changes nothing.
func testExportImportRoundTrip(t *testing.T, open Opener) {
	src, dst := open(t), open(t)
	update(t, src, func(b bucketstore.Bucket) error {
		n, err := b.CreateBucket([]byte("x"))
		if err != nil {
			return err
		}
		if _, err := n.NextSequence(); err != nil {
			return err
		}
		if _, err := n.CreateBucket([]byte("y")); err != nil {
			return err
		}
		return n.Put([]byte("k"), []byte("v"))
	})
	ctx := context.Background()
	entries := exportAll(t, src)
	for range 2 {
		if err := dst.Import(ctx, entries); err != nil {
			t.Fatal(err)
		}
		if got := exportAll(t, dst); !reflect.DeepEqual(got, entries) {
			t.Fatalf("imported store exports\n%v\nwant\n%v", got, entries)
		}
	}
	update(t, dst, func(b bucketstore.Bucket) error {
		s, err := b.Bucket([]byte("x")).NextSequence()
		if err == nil && s != 2 {
			err = fmt.Errorf("sequence after import %d, want 2", s)
		}
		return err
	})
}

// exportAll is everything st exports, in its order.
func exportAll(t *testing.T, st bucketstore.Store) []bucketstore.Entry {
	t.Helper()
	var out []bucketstore.Entry
	if err := st.Export(context.Background(), func(e bucketstore.Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
