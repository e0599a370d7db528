package specstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// listEngines opens an empty bbolt store and an etcd prefix on an embedded
// member.
func listEngines(b *testing.B) map[string]bucketstore.Store {
	ep := etcdtest.Start(b, 4096)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, MaxTxnOps: 4096, Prefix: "/list-bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	return map[string]bucketstore.Store{"bbolt": storetest.Open(b), "etcd": st}
}

// seedSpecs creates n specs of a few tasks, one transaction each, and
// moves every third to active.
func seedSpecs(b *testing.B, r *specstore.Repo, n int) {
	clock := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	for i := 0; i < n; i++ {
		h, err := r.CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: fmt.Sprintf("listed spec %d", i), Mission: "m"}, clock, exists)
			if err != nil {
				return nil, nil, err
			}
			_, err = specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "p"}, []specs.TaskInput{{Title: "a"}, {Title: "b"}})
			return sp, nil, err
		})
		if err != nil {
			b.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := r.MutateSpec(context.Background(), h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				sp.Header.Lifecycle = specs.LifecycleActive
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkListSpecs: the first page (25 rows) of spec list over 1,000
// specs, every spec and one lifecycle folder, on both engines.
func BenchmarkListSpecs(b *testing.B) {
	for name, eng := range listEngines(b) {
		r := specstore.New(eng, nil)
		seedSpecs(b, r, 1000)
		if _, _, err := r.ListSpecs(context.Background(), "all", "", 1); err != nil { // builds the index once
			b.Fatal(err)
		}
		for _, folder := range []string{"all", string(specs.LifecycleActive)} {
			b.Run(fmt.Sprintf("%s/%s", name, folder), func(b *testing.B) {
				for b.Loop() {
					rows, _, err := r.ListSpecs(context.Background(), folder, "", 25)
					if err != nil || len(rows) != 25 {
						b.Fatal(len(rows), err)
					}
				}
			})
		}
	}
}
