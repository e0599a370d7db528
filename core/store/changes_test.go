package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// put writes key=value into the specs bucket of st in one update.
func put(t testing.TB, st bucketstore.Engine, key, value string) {
	t.Helper()
	err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
		return tx.Bucket(bucketstore.BucketSpecs).Put([]byte(key), []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChangeStampSeesAnotherStoresCommit: a commit through a second Store on
// the same file (another process, as far as the first one knows) changes
// the first store's stamp, or leaves the previous stamp fresh, so a watcher
// re-reads.
func TestChangeStampSeesAnotherStoresCommit(t *testing.T) {
	a := storetest.Open(t)
	put(t, a, "k", "v")
	b := openStore(t, a.Path(), 2*time.Second)
	for i := range 5 {
		before, fresh := a.ChangeStamp()
		put(t, b, "k", fmt.Sprint(i))
		after, _ := a.ChangeStamp()
		if after == before && !fresh {
			t.Fatalf("round %d: stamp %s unchanged and not fresh after another store's commit", i, after)
		}
	}
}

// BenchmarkChangeStamp is what a quiet store costs a watcher per interval.
func BenchmarkChangeStamp(b *testing.B) {
	st := storetest.Open(b)
	put(b, st, "k", "v")
	for b.Loop() {
		st.ChangeStamp()
	}
}
