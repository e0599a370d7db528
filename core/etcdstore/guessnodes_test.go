package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

var guessClock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// guessSpec creates a spec with one phase through r and returns its id.
func guessSpec(t *testing.T, r *specstore.Repo) string {
	t.Helper()
	h, err := r.CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "guess", Mission: "m"}, guessClock, exists)
		if err == nil {
			_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
		}
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}

// addTo adds a task titled title to the spec's first phase and returns
// its id.
func addTo(r *specstore.Repo, id, title string) (string, error) {
	var tid string
	_, err := r.MutateSpec(context.Background(), id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = guessClock
		var err error
		tid, err = specs.AddTask(sp, "phase-1", specs.TaskInput{Title: title})
		return err
	})
	return tid, err
}

// titles lists the task titles of the spec as a fresh server reads them.
func titles(t *testing.T, r *specstore.Repo, id string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if err := r.ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
		for _, nid := range sp.IDs() {
			if n := sp.Node(nid); n != nil && n.Type == specs.TypeTask {
				out[n.Title] = true
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWritesGuessNodes: once a server has written a spec, its next
// writes of that spec read nothing of it from the cluster — not its
// header, nor which nodes changed, nor the start of its history (each
// range a walk of its every key in the member's index): they take the
// keys, mod revisions and values from what the server read and wrote
// (specGuesses), and each sends its commit alone.
func TestWritesGuessNodes(t *testing.T) {
	a, _ := twoServers(t)
	r := specstore.New(a, guessClock)
	id := guessSpec(t, r)
	if _, err := addTo(r, id, "warm"); err != nil {
		t.Fatal(err)
	}
	rec := RecordTxns(a)
	for i := range 3 {
		if _, err := addTo(r, id, fmt.Sprint("t", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n, h := rec.SpecRanges(); n != 0 || h != 0 || rec.Requests() != 3 {
		t.Fatalf("three writes sent %d requests, reading the spec's nodes range %d times and its history %d times; want their 3 commits alone", rec.Requests(), n, h)
	}
	if got := titles(t, specstore.New(a, guessClock), id); len(got) != 4 {
		t.Fatalf("tasks after the writes: %v", got)
	}
}

// TestStaleNodeGuess: server a guesses a spec's nodes after its own
// writes; server b then adds tasks to the same phase, so a's guess of the
// phase node is stale. a's next add must not overwrite b's (its commit's
// guard fails and it re-runs from a listing), and a's fn that looks for
// b's task — which fails on the stale guess — must not answer that
// failure: the batch proves its guesses before answering, and re-runs.
func TestStaleNodeGuess(t *testing.T) {
	a, b := twoServers(t)
	ra, rb := specstore.New(a, guessClock), specstore.New(b, guessClock)
	id := guessSpec(t, ra)
	if _, err := addTo(ra, id, "a1"); err != nil {
		t.Fatal(err)
	}
	if _, err := addTo(ra, id, "a2"); err != nil { // a now guesses the nodes
		t.Fatal(err)
	}
	b1, err := addTo(rb, id, "b1")
	if err != nil {
		t.Fatal(err)
	}
	errAbsent := errors.New("b's task is not there")
	_, err = ra.MutateSpec(context.Background(), id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		if sp.Node(b1) == nil {
			return errAbsent
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a looked for b's task %s: %v", b1, err)
	}
	if _, err := addTo(rb, id, "b2"); err != nil {
		t.Fatal(err)
	}
	if _, err := addTo(ra, id, "a3"); err != nil {
		t.Fatal(err)
	}
	got := titles(t, specstore.New(b, guessClock), id)
	for _, want := range []string{"a1", "a2", "b1", "b2", "a3"} {
		if !got[want] {
			t.Fatalf("task %s is missing after the writes of two servers: %v", want, got)
		}
	}
	if len(got) != 5 {
		t.Fatalf("tasks: %v", got)
	}
}

// TestStaleNodeGuessSameHeader: another server changes a spec's nodes or
// history without touching the spec's own keys, so this server's guess of
// them is stale and taken. A write that read a stale node must not commit
// (its guard fails; it re-runs from the cluster), and a write whose fn
// failed on a guess (a key it took to be absent) must not answer that
// failure: the batch proves its guesses first and re-runs.
func TestStaleNodeGuessSameHeader(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	spec := func(tx bucketstore.Tx) bucketstore.Bucket {
		sp, err := tx.Bucket(bucketstore.BucketSpecs).CreateBucketIfNotExists([]byte("s1"))
		if err != nil {
			panic(err)
		}
		return sp
	}
	sub := func(tx bucketstore.Tx, name []byte) bucketstore.Bucket {
		b, err := spec(tx).CreateBucketIfNotExists(name)
		if err != nil {
			panic(err)
		}
		return b
	}
	update := func(s *Store, bucket []byte, fn func(b bucketstore.Bucket) error) {
		t.Helper()
		if err := s.Update(ctx, func(tx bucketstore.Tx) error { return fn(sub(tx, bucket)) }); err != nil {
			t.Fatal(err)
		}
	}
	put := func(k, v string) func(b bucketstore.Bucket) error {
		return func(b bucketstore.Bucket) error { return b.Put([]byte(k), []byte(v)) }
	}
	nodes, history := bucketstore.BucketNodes, bucketstore.BucketHistory
	update(a, history, put("h0", "a"))
	update(a, nodes, put("n1", "v1"))
	// a reads and writes the nodes (so lists them, or guesses) with no
	// pause left: it guesses them afterwards.
	warm := func() {
		t.Helper()
		a.guesses.mu.Lock()
		a.guesses.pause = nil
		a.guesses.mu.Unlock()
		update(a, nodes, func(n bucketstore.Bucket) error { return n.Put([]byte("n0"), n.Get([]byte("n1"))) }) // a read lists the nodes
		if a.guesses.get(a.specsRoot+"/s1") == nil {
			t.Fatal("a does not guess the spec after its writes")
		}
	}
	mustSee := func(bucket []byte, k string) {
		t.Helper()
		if err := a.Update(ctx, func(tx bucketstore.Tx) error {
			if sub(tx, bucket).Get([]byte(k)) == nil {
				return fmt.Errorf("%s is absent", k)
			}
			return nil
		}); err != nil {
			t.Fatalf("a looked for b's key: %v", err)
		}
	}

	warm()
	update(b, nodes, put("n2", "b")) // the spec's own keys stay as they were
	mustSee(nodes, "n2")

	warm()
	update(b, history, put("h1", "b"))
	mustSee(history, "h1")

	warm()
	update(b, nodes, put("n1", "from b"))
	update(a, nodes, func(n bucketstore.Bucket) error { return n.Put([]byte("n3"), n.Get([]byte("n1"))) })
	if err := b.View(ctx, func(tx bucketstore.Tx) error {
		if got := string(tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte("s1")).Bucket(nodes).Get([]byte("n3"))); got != "from b" {
			return fmt.Errorf("a copied n1 as %q, want b's %q", got, "from b")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
