package etcdstore_test

import (
	"context"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs"
)

// TestRoundTripsPerCall counts the requests one call sends to the cluster
// on a spec of 1000 tasks in five phases (the benchmark's), on a warm
// cache: latency on a real cluster is mostly round trips, so a call that
// needs more of them than its budget fails here, deterministically.
func TestRoundTripsPerCall(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	st := openStore(t, ep, func(o *etcdstore.Options) { o.MaxTxnOps = 4096 })
	other := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = st.Prefix(); o.MaxTxnOps = 4096 })
	ctx := context.Background()
	id := phasedSpec(t, st, 5, 200)
	trips := etcdstore.CountRoundTrips(st)

	next := func() {
		if err := repoOf(st).ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			if !specs.NextTask(sp).Found {
				t.Fatal("nothing next")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var claimed string
	// Claims and completes keep 5 versions of history: each prunes one.
	claim := func() {
		if _, err := repoOf(st).MutateSpec(ctx, id, specs.RepoWriteOptions{Keep: 5}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			n := specs.NextTask(sp)
			claimed = n.TaskID
			_, err := specs.Start(sp, n.TaskID, specs.TransitionOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	complete := func() {
		if _, err := repoOf(st).MutateSpec(ctx, id, specs.RepoWriteOptions{Keep: 5}, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = clock
			_, err := specs.Complete(sp, claimed, specs.TransitionOptions{})
			j.Append(specs.JournalEntry{Title: "done", Content: "x", EntryType: "note", TaskID: claimed, Timestamp: specs.FormatTime(clock())})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	get := func() {
		if err := repoOf(st).ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			for _, nid := range sp.IDs() {
				_ = sp.Node(nid)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := func() { // another server changes the spec
		mutate(t, other, id, func(sp *specs.Spec) error {
			_, err := specs.Start(sp, specs.NextTask(sp).TaskID, specs.TransitionOptions{})
			return err
		})
	}
	removeHere := func() { // this server removes a task (a deleted node key)
		mutate(t, st, id, func(sp *specs.Spec) error { _, err := specs.RemoveTask(sp, lastTask(sp), false); return err })
	}
	removeElsewhere := func() {
		mutate(t, other, id, func(sp *specs.Spec) error { _, err := specs.RemoveTask(sp, lastTask(sp), false); return err })
	}
	for _, c := range []struct {
		name  string
		setup func()
		call  func()
		max   int64
	}{
		// One read-only transaction (the spec's marker, header, sub-bucket
		// markers and its nodes changed since the last look); every node
		// from the value cache.
		{"next", next, next, 1},
		// The guarded commit alone: a write of a spec this server wrote
		// last reads nothing (specGuesses).
		{"claim", next, claim, 1},
		{"complete", next, complete, 1},
		{"spec get", get, get, 1},
		// The other server's changed nodes are not cached here: one more
		// read fetches them (and the claim's pruning one more: the oldest
		// history record, which that server wrote). The claim first
		// commits on its guess of the spec, which fails (the other
		// server wrote it), then runs as a write of a spec read afresh.
		{"next after another server's change", elsewhere, next, 2},
		{"claim after another server's change", elsewhere, claim, 5},
		// A node this server deleted is dropped from its snapshot; one
		// deleted elsewhere makes the next look list the nodes' keys again
		// (and fetch the nodes that server changed).
		{"next after this server removed a task", removeHere, next, 1},
		{"next after another server removed a task", removeElsewhere, next, 3},
	} {
		c.setup()
		before := trips.Load()
		c.call()
		n := trips.Load() - before
		t.Logf("%s: %d round trips", c.name, n)
		if n > c.max {
			t.Errorf("%s: %d round trips, want at most %d", c.name, n, c.max)
		}
	}
}

// mutate runs fn as one mutation of spec id through st.
func mutate(t testing.TB, st *etcdstore.Store, id string, fn func(sp *specs.Spec) error) {
	t.Helper()
	if _, err := repoOf(st).MutateSpec(context.Background(), id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		return fn(sp)
	}); err != nil {
		t.Fatal(err)
	}
}

// lastTask is the last pending leaf task of the spec.
func lastTask(sp *specs.Spec) string {
	last := ""
	for _, nid := range sp.IDs() {
		if n := sp.Node(nid); n.Type == specs.TypeTask && n.Status == specs.StatusPending && n.IsLeaf() {
			last = nid
		}
	}
	return last
}

// phasedSpec creates a spec of phases×tasks tasks, one phase per mutation.
func phasedSpec(t testing.TB, st *etcdstore.Store, phases, tasks int) string {
	t.Helper()
	h, err := repoOf(st).CreateSpec(context.Background(), specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "trips", Mission: "m"}, clock, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for range phases {
		if _, err := repoOf(st).MutateSpec(context.Background(), h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			in := make([]specs.TaskInput, tasks)
			for i := range in {
				in[i] = specs.TaskInput{Title: "task"}
			}
			_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "work"}, in)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	return h.SpecID
}
