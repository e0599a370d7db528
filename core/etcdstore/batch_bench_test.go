package etcdstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// BenchmarkConcurrentWrites: 16 writers of one server add a task each
// (one mutation) to one of 4 specs, on a one-member embedded etcd or the
// cluster SPECD_BENCH_ETCD names; reports the round trips to the cluster
// per write (group commit shares reads and the commit).
func BenchmarkConcurrentWrites(b *testing.B) {
	eps := strings.Split(os.Getenv("SPECD_BENCH_ETCD"), ",")
	if eps[0] == "" {
		eps = []string{startEtcd(b, 128)}
	}
	st := openStore(b, eps[0], func(o *etcdstore.Options) { o.Endpoints = eps })
	repo := specstore.New(st, nil)
	ids := make([]string, 4)
	for i := range ids {
		h, err := repo.CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: fmt.Sprintf("w%d", i), Mission: "m"}, clock, exists)
			if err == nil {
				_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
			}
			return sp, nil, err
		})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = h.SpecID
	}
	trips := etcdstore.CountRoundTrips(st)
	var n atomic.Int64
	b.ResetTimer()
	start := trips.Load()
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n.Add(1); i <= int64(b.N); i = n.Add(1) {
				id := ids[i%4]
				if _, err := repo.MutateSpec(context.Background(), id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					sp.Clock = clock
					_, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint("t", i)})
					return err
				}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(trips.Load()-start)/float64(b.N), "trips/write")
}
