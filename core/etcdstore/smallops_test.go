package etcdstore

import (
	"context"
	"testing"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
)

// TestSmallMaxTxnOpsWrites: on a cluster whose --max-txn-ops leaves room
// for the prefix-wide guard (two compares) and a large change's switch
// (three more) but not for a compare per read, a write that read more
// keys than that commits under the prefix-wide guard. Without guesses
// that guard needs no room for them (nor for !pending's compare, which
// comes with the guesses): it must not be refused as having too many.
func TestSmallMaxTxnOpsWrites(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	s := openInternal(t, ep, "/smallops", func(o *Options) { o.MaxTxnOps = 6 })
	for i := range 3 {
		if err := s.Update(context.Background(), func(tx bucketstore.Tx) error {
			if err := tx.Bucket(bucketstore.BucketSpecList).ForEach(func(_, _ []byte) error { return nil }); err != nil {
				return err
			}
			b := tx.Bucket(bucketstore.BucketErrorLog)
			for _, k := range []string{"a", "b"} {
				b.Get([]byte(k))
			}
			return b.Put([]byte("d"), []byte{byte('0' + i)})
		}); err != nil {
			t.Fatalf("write %d reading a range and 2 keys: %v", i, err)
		}
	}
}
