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
// writes of that spec do not ask the cluster which nodes changed (a walk
// of the spec's every key in the member's index): they take the nodes'
// mod revisions from what the server listed and wrote (nodeGuesses).
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
	if n := rec.NodeRanges(); n != 0 {
		t.Fatalf("three writes read the spec's nodes range %d times, want 0", n)
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

// nodesOf opens (creating it) the nodes bucket of spec bucket id.
func nodesOf(tx bucketstore.Tx, id string) bucketstore.Bucket {
	sp, err := tx.Bucket(bucketstore.BucketSpecs).CreateBucketIfNotExists([]byte(id))
	if err != nil {
		panic(err)
	}
	n, err := sp.CreateBucketIfNotExists(bucketstore.BucketNodes)
	if err != nil {
		panic(err)
	}
	return n
}

// TestStaleNodeGuessSameHeader: another server changes a spec's nodes
// without touching the spec's own keys, so this server's guess of them
// is stale and taken. A write that read a stale node must not commit
// (its guard fails; it re-runs from a listing), and a write whose fn
// failed on a guess (a node it took to be absent) must not answer that
// failure: the batch proves its guesses first and re-runs.
func TestStaleNodeGuessSameHeader(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	update := func(s *Store, fn func(n bucketstore.Bucket) error) error {
		return s.Update(ctx, func(tx bucketstore.Tx) error { return fn(nodesOf(tx, "s1")) })
	}
	put := func(k, v string) func(n bucketstore.Bucket) error {
		return func(n bucketstore.Bucket) error { return n.Put([]byte(k), []byte(v)) }
	}
	for _, step := range []func(n bucketstore.Bucket) error{
		put("n1", "v1"),
		func(n bucketstore.Bucket) error { return n.Put([]byte("n1"), append(n.Get([]byte("n1")), '+')) }, // a lists, then guesses
	} {
		if err := update(a, step); err != nil {
			t.Fatal(err)
		}
	}
	if a.guesses.get(a.specsRoot+"/s1/nodes"+sepKey) == nil {
		t.Fatal("a does not guess the nodes after its writes")
	}
	// b adds n2 and changes n1; the spec's own keys stay as they were.
	if err := update(b, func(n bucketstore.Bucket) error {
		if err := n.Put([]byte("n2"), []byte("b")); err != nil {
			return err
		}
		return n.Put([]byte("n1"), []byte("from b"))
	}); err != nil {
		t.Fatal(err)
	}
	errAbsent := errors.New("n2 is absent")
	if err := update(a, func(n bucketstore.Bucket) error {
		if n.Get([]byte("n2")) == nil {
			return errAbsent
		}
		return nil
	}); err != nil {
		t.Fatalf("a looked for b's node: %v", err)
	}
	if err := update(a, func(n bucketstore.Bucket) error { return n.Put([]byte("n3"), n.Get([]byte("n1"))) }); err != nil {
		t.Fatal(err)
	}
	if err := b.View(ctx, func(tx bucketstore.Tx) error {
		if got := string(tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte("s1")).Bucket(bucketstore.BucketNodes).Get([]byte("n3"))); got != "from b" {
			return fmt.Errorf("a copied n1 as %q, want b's %q", got, "from b")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
