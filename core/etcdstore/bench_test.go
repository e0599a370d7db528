package etcdstore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// engine is the part of the spec repository (specs/specstore over each
// engine) the benchmarks use.
type engine interface {
	CreateSpec(ctx context.Context, o specs.RepoWriteOptions, build func(exists func(id string) bool) (*specs.Spec, []specs.JournalEntry, error)) (specs.Header, error)
	MutateSpec(ctx context.Context, specID string, o specs.RepoWriteOptions, fn func(sp *specs.Spec, j specs.JournalWriter) error) (specs.RepoWriteResult, error)
	ReadSpec(ctx context.Context, specID string, fn func(sp *specs.Spec, j specs.JournalReader) error) error
}

func engines(b *testing.B) map[string]engine {
	eps := strings.Split(os.Getenv("SPECD_BENCH_ETCD"), ",")
	if eps[0] == "" {
		eps = []string{startEtcd(b, 4096)}
	}
	bolt, err := store.Open(store.Options{Path: filepath.Join(b.TempDir(), "specd.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bolt.Close() })
	return map[string]engine{
		"bbolt": specstore.New(bolt, nil),
		"etcd":  specstore.New(openStore(b, eps[0], func(o *etcdstore.Options) { o.Endpoints = eps; o.MaxTxnOps = 4096 }), nil),
	}
}

func bigSpec(b *testing.B, e engine, n int) string {
	b.Helper()
	h, err := e.CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "bench", Mission: "m"}, clock, exists)
		return sp, nil, err
	})
	if err != nil {
		b.Fatal(err)
	}
	for added := 0; added < n; added += 200 {
		_, err = e.MutateSpec(context.Background(), h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			in := make([]specs.TaskInput, 200)
			for i := range in {
				in[i] = specs.TaskInput{Title: "task"}
			}
			_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "work"}, in)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return h.SpecID
}

// BenchmarkEngines measures, on a spec of 1000 tasks: task next (a read:
// the next actionable task), a claim (next + start in one mutation), a
// complete of a claimed task, and a whole-spec read (every node, as spec
// get does), on bbolt and on etcd: a one-member embedded etcd, or the
// cluster named by SPECD_BENCH_ETCD (comma-separated host:port, e.g. the
// three members of a local cluster started with --max-txn-ops 4096).
func BenchmarkEngines(b *testing.B) {
	ctx := context.Background()
	all := engines(b)
	for _, name := range []string{"bbolt", "etcd"} {
		e := all[name]
		id := bigSpec(b, e, 1000)
		claim := func() string {
			var got string
			if _, err := e.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				sp.Clock = clock
				next := specs.NextTask(sp)
				if !next.Found {
					return nil
				}
				got = next.TaskID
				_, err := specs.Start(sp, got, specs.TransitionOptions{})
				return err
			}); err != nil {
				b.Fatal(err)
			}
			if got == "" {
				b.Skip("spec exhausted")
			}
			return got
		}
		complete := func(id2 string) {
			if _, err := e.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				sp.Clock = clock
				_, err := specs.Complete(sp, id2, specs.TransitionOptions{})
				return err
			}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name+"/next", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				start := time.Now()
				if err := e.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
					if !specs.NextTask(sp).Found {
						b.Fatal("nothing next")
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
		b.Run(name+"/claim", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				start := time.Now()
				complete(claim())
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
		b.Run(name+"/complete", func(b *testing.B) {
			var lat latencies
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				claimed := claim()
				b.StartTimer()
				start := time.Now()
				complete(claimed)
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
		b.Run(name+"/spec-get-1k", func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				start := time.Now()
				if err := e.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
					for _, nid := range sp.IDs() {
						_ = sp.Node(nid)
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			lat.report(b)
		})
	}
}

// latencies are one sub-benchmark's per-operation times; report adds their
// median as the p50-ns metric (ns/op is the mean, which a few slow round
// trips on a shared machine pull up).
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
}
