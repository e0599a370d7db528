package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
)

var clock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func codeOf(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func specWithTasks(t testing.TB, st *etcdstore.Store, n int) (string, error) {
	t.Helper()
	h, err := repoOf(st).CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "fleet", Mission: "m"}, clock, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = repoOf(st).MutateSpec(context.Background(), h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		in := make([]specs.TaskInput, n)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("task %d", i)}
		}
		_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "work"}, in)
		return err
	})
	return h.SpecID, err
}

// TestClaimsAcrossServers: three stores (three specd servers) on one
// prefix, four workers each, claim tasks with next+start in one mutation.
// Every task is claimed exactly once: the commit's mod-revision guard makes
// the claim atomic across processes (the per-process writer lock does not
// reach across stores).
func TestClaimsAcrossServers(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	first := openStore(t, ep, func(o *etcdstore.Options) { o.MaxTxnOps = 4096 })
	const tasks = claimTasks
	id, err := specWithTasks(t, first, tasks)
	if err != nil {
		t.Fatal(err)
	}
	stores := []*etcdstore.Store{first}
	for i := 0; i < 2; i++ {
		stores = append(stores, openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = first.Prefix(); o.MaxTxnOps = 4096 }))
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for _, st := range stores {
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					var got string
					_, err := repoOf(st).MutateSpec(context.Background(), id, specs.RepoWriteOptions{Action: "task.next"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
						sp.Clock = clock
						got = ""
						if next := specs.NextTask(sp); next.Found {
							got = next.TaskID
							_, err := specs.Start(sp, got, specs.TransitionOptions{})
							return err
						}
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					if got == "" {
						return
					}
					mu.Lock()
					claimed[got]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	for tid, c := range claimed {
		if c != 1 {
			t.Errorf("task %s claimed %d times", tid, c)
		}
	}
	if len(claimed) != tasks {
		t.Errorf("claimed %d distinct tasks, want %d", len(claimed), tasks)
	}
	_ = repoOf(first).ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
		n := 0
		for _, nid := range sp.IDs() {
			if nd := sp.Node(nid); nd.Type == specs.TypeTask && nd.Status == specs.StatusInProgress {
				n++
			}
		}
		if n != tasks {
			t.Errorf("%d tasks in progress, want %d", n, tasks)
		}
		return nil
	})
}

// TestBeyondOneTransaction: a mutation with more writes than
// --max-txn-ops commits whole (large.go), and one value larger than
// --max-request-bytes, which no transaction can carry, answers
// PAYLOAD_TOO_LARGE and stores nothing.
func TestBeyondOneTransaction(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 128)
	st := openStore(t, ep, nil)
	id, err := specWithTasks(t, st, 150)
	if err != nil {
		t.Fatalf("150 tasks in one mutation: %v", err)
	}
	_ = repoOf(st).ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
		if sp.Header.TotalTasks != 150 || len(sp.IDs()) < 151 {
			t.Fatalf("the mutation left %d tasks, %d nodes", sp.Header.TotalTasks, len(sp.IDs()))
		}
		return nil
	})
	_, _, err = researchOf(st).ArchivePut(context.Background(), []byte(strings.Repeat("x", 2<<20)), researchMeta())
	if codeOf(err) != errcode.PayloadTooLarge {
		t.Fatalf("2 MiB archive put: want PAYLOAD_TOO_LARGE, got %v", err)
	}
}

// TestUnreachableClusterIsUnavailable: with the cluster gone, calls answer
// UNAVAILABLE with retry_after_ms within the request timeout (no hang).
func TestUnreachableClusterIsUnavailable(t *testing.T) {
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/gone", RequestTimeout: 300 * time.Millisecond, DialTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Now()
	err = st.CheckWritable(context.Background())
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable || ce.Details["retry_after_ms"] == nil {
		t.Fatalf("want UNAVAILABLE with retry_after_ms, got %v", err)
	}
	if _, err := repoOf(st).SpecIDs(context.Background()); codeOf(err) != errcode.Unavailable {
		t.Fatalf("read: want UNAVAILABLE, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("answers took %v", d)
	}
}

func researchMeta() research.ArchiveMeta { return research.ArchiveMeta{ItemType: "source"} }
