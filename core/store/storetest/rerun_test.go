package storetest_test

import (
	"context"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// TestRerunRunsEachFnTwice: over Rerun a View's fn runs twice, an Update's
// fn runs twice and only the second run is kept (the first's sequence is
// rolled back); with Every 3 only each third transaction runs twice.
func TestRerunRunsEachFnTwice(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		every     int64
		wantRuns  int
		wantStore uint64
	}{{0, 6, 3}, {3, 4, 3}} {
		rr := &storetest.Rerun{Store: storetest.Open(t), Every: c.every}
		runs := 0
		var seq uint64
		for range 3 {
			if err := rr.Update(ctx, func(tx bucketstore.Tx) error {
				runs++
				var err error
				seq, err = tx.Bucket(bucketstore.BucketIntake).NextSequence()
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		if runs != c.wantRuns || seq != c.wantStore {
			t.Errorf("every %d: %d update runs, sequence %d; want %d runs, sequence %d", c.every, runs, seq, c.wantRuns, c.wantStore)
		}
		views := 0
		for range 3 {
			if err := rr.View(ctx, func(bucketstore.Tx) error { views++; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if want := map[int64]int{0: 6, 3: 4}[c.every]; views != want || rr.Reruns() != int64(c.wantRuns-3+want-3) {
			t.Errorf("every %d: %d view runs (want %d), %d reruns", c.every, views, want, rr.Reruns())
		}
	}
}
