package specstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs/specstore"
)

// An engine may run a fn again from the start on a fresh transaction
// (bucketstore.Engine: etcd after a lost race or a retryable read error).
// These tests run each operation over storetest.Rerun and hold the answer
// to what the run that counted saw.

// readOnly is an engine whose writes all fail (a store that cannot be
// written).
type readOnly struct{ bucketstore.Store }

func (readOnly) Update(context.Context, func(bucketstore.Tx) error) error {
	return errors.New("read-only")
}

// TestListSpecsWithoutIndexSurvivesARerun: a store without the spec list
// index that cannot be written lists the old way; a re-run of that read
// lists each spec once.
func TestListSpecsWithoutIndexSurvivesARerun(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	plain := specstore.New(st, nil)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		createSpec(t, plain, name)
	}
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		return tx.Bucket(bucketstore.BucketSpecList).Delete([]byte("\x00index"))
	}); err != nil {
		t.Fatal(err)
	}
	repo := specstore.New(readOnly{&storetest.Rerun{Store: st}}, nil)
	for _, folder := range []string{"all", "pending"} {
		rows, next, err := repo.ListSpecs(ctx, folder, "", 10)
		if err != nil || len(rows) != 3 || next != "" {
			t.Errorf("%s: %d rows, next %q, %v; want 3 rows", folder, len(rows), next, err)
		}
		rows, next, err = repo.ListSpecs(ctx, folder, "", 2)
		if err != nil || len(rows) != 2 || next != rows[1].SpecID {
			t.Errorf("%s, limit 2: %d rows, next %q, %v", folder, len(rows), next, err)
		}
	}
}
