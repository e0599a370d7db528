package etcdstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// TestPagedCursorWalksLikeBbolt: a cursor over a top-level bucket in a
// read-only transaction (read a page at a time) visits the same keys,
// values and nested buckets as bbolt's, in every direction and from every
// seek, across page boundaries (more than a page of keys, nested buckets
// between them).
func TestPagedCursorWalksLikeBbolt(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	engines := map[string]bucketstore.Store{"bbolt": storetest.Open(t), "etcd": openStore(t, ep, nil)}
	top := bucketstore.BucketDigests
	walks := map[string][]string{}
	for name, st := range engines {
		if err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
			b := tx.Bucket(top)
			for i := 0; i < 150; i++ {
				if err := b.Put([]byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprintf("v%d", i))); err != nil {
					return err
				}
			}
			for _, n := range []string{"a", "k064x", "k100x", "z"} {
				if _, err := b.CreateBucket([]byte(n)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var walk []string
		rec := func(op string, k, v []byte) {
			walk = append(walk, fmt.Sprintf("%s %q %q %v", op, k, v, v == nil))
		}
		if err := st.View(context.Background(), func(tx bucketstore.Tx) error {
			c := tx.Bucket(top).Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				rec("next", k, v)
			}
			for _, seek := range []string{"", "a", "b", "k063", "k064", "k064x", "k0641", "k127", "k149", "y", "zz"} {
				k, v := c.Seek([]byte(seek))
				rec("seek "+seek, k, v)
				for i := 0; i < 70 && k != nil; i++ {
					k, v = c.Next()
					rec("next", k, v)
				}
				k, v = c.Seek([]byte(seek))
				rec("seek again "+seek, k, v)
				for i := 0; i < 3 && k != nil; i++ {
					k, v = c.Prev()
					rec("prev", k, v)
				}
			}
			for k, v := c.Last(); k != nil; k, v = c.Prev() {
				rec("prev", k, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		walks[name] = walk
	}
	if !reflect.DeepEqual(walks["bbolt"], walks["etcd"]) {
		b, e := walks["bbolt"], walks["etcd"]
		for i := 0; i < len(b) && i < len(e); i++ {
			if b[i] != e[i] {
				t.Fatalf("step %d: bbolt %s, etcd %s", i, b[i], e[i])
			}
		}
		t.Fatalf("bbolt walked %d steps, etcd %d", len(b), len(e))
	}
	if len(walks["etcd"]) < 300 {
		t.Fatalf("only %d steps", len(walks["etcd"]))
	}
}
