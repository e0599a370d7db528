package specstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// TestVerifyReportsBrokenInvariants: specd check (the bbolt store's Verify
// with CheckSpecs) finds nothing in a sound store and names the spec whose
// stored header contradicts its nodes.
func TestVerifyReportsBrokenInvariants(t *testing.T) {
	repo, st := repoOver(t)
	ctx := context.Background()
	good, bad := createSpec(t, repo, "good"), createSpec(t, repo, "bad")
	if f, err := st.Verify(ctx, repo.CheckSpecs); err != nil || len(f) != 0 {
		t.Fatalf("sound store: %v %v", f, err)
	}
	err := st.Update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(bad))
		var h specs.Header
		if err := json.Unmarshal(b.Get([]byte(bucketstore.SpecHeaderKey)), &h); err != nil {
			return err
		}
		h.TotalTasks = 99
		raw, err := json.Marshal(h)
		if err != nil {
			return err
		}
		return b.Put([]byte(bucketstore.SpecHeaderKey), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.Verify(ctx, repo.CheckSpecs)
	if err != nil || len(f) == 0 {
		t.Fatalf("broken header not found: %v %v", f, err)
	}
	for _, x := range f {
		if x.SpecID != bad {
			t.Fatalf("finding about %s (only %s is broken, %s is sound): %v", x.SpecID, bad, good, x)
		}
	}
}
