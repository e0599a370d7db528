package specstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// nodesOf is every node of doc as the store encodes it, by id: two
// documents with equal nodesOf hold the same nodes, children in order.
func nodesOf(t testing.TB, doc specs.Document) map[string]string {
	t.Helper()
	out := make(map[string]string, len(doc.Hierarchy))
	for id, n := range doc.Hierarchy {
		raw, err := specs.EncodeNode(n)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = string(raw)
	}
	return out
}

// diffNodes names the first few nodes on which a and b differ ("" when
// they hold the same nodes).
func diffNodes(a, b map[string]string) string {
	var out []string
	for id, v := range a {
		if w, ok := b[id]; !ok || w != v {
			out = append(out, id)
		}
	}
	for id := range b {
		if _, ok := a[id]; !ok {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ""
	}
	if len(out) > 4 {
		out = append(out[:4], "…")
	}
	return fmt.Sprint(len(a), " vs ", len(b), " nodes; differ: ", out)
}

// testChildrenAcrossChunkBoundaries drives a phase's children across the
// chunk boundaries of layout 3 (127, 128, 129, 256, 257 children), then
// removes runs that empty chunks, moves tasks between phases, reorders
// and empties the phase and fills it again. Every version reads back (spec
// get version=N) exactly as it was written, rollbacks to versions on
// either side of a boundary restore them, every version still reads the
// same after them, and specd check finds nothing.
func testChildrenAcrossChunkBoundaries(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "chunks")
	var phases [2]string
	for i := range phases {
		res, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			r, err := specs.AddPhase(sp, specs.PhaseInput{Title: fmt.Sprint("phase ", i)})
			phases[i] = r.PhaseID
			return err
		})
		if err != nil || res.Version == 0 {
			t.Fatal(err)
		}
	}
	p1, p2 := phases[0], phases[1]
	tasks := func(sp *specs.Spec, phase string) []string {
		var out []string
		for _, c := range sp.Node(phase).Children.All() {
			if sp.Node(c).Type == specs.TypeTask {
				out = append(out, c)
			}
		}
		return out
	}
	addTasks := func(n int) func(sp *specs.Spec) error {
		return func(sp *specs.Spec) error {
			for range n {
				if _, err := specs.AddTask(sp, p1, specs.TaskInput{Title: "t"}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	remove := func(from, to int) func(sp *specs.Spec) error {
		return func(sp *specs.Spec) error {
			for _, c := range tasks(sp, p1)[from:to] {
				if _, err := specs.RemoveTask(sp, c, true); err != nil {
					return err
				}
			}
			return nil
		}
	}
	steps := []struct {
		name string
		fn   func(sp *specs.Spec) error
	}{
		{"127 tasks", addTasks(127 - 2)}, // the phase has its verify nodes too
		{"128", addTasks(1)},
		{"129", addTasks(1)},
		{"256", addTasks(127)},
		{"257", addTasks(1)},
		{"the first 64 removed", remove(0, 64)},
		{"a run in the middle removed", remove(40, 110)},
		{"the last removed", func(sp *specs.Spec) error { ts := tasks(sp, p1); return remove(len(ts)-1, len(ts))(sp) }},
		{"ten moved to the other phase", func(sp *specs.Spec) error {
			for _, c := range tasks(sp, p1)[20:30] {
				if err := specs.MoveTask(sp, c, p2, nil); err != nil {
					return err
				}
			}
			return nil
		}},
		{"one moved back to the front", func(sp *specs.Spec) error {
			zero := 0
			return specs.MoveTask(sp, tasks(sp, p2)[3], p1, &zero)
		}},
		{"reversed", func(sp *specs.Spec) error {
			ts := tasks(sp, p1)
			for i := range ts {
				pos := i
				if err := specs.MoveTask(sp, ts[len(ts)-1-i], p1, &pos); err != nil {
					return err
				}
			}
			return nil
		}},
		{"emptied", func(sp *specs.Spec) error { return remove(0, len(tasks(sp, p1)))(sp) }},
		{"filled again past a chunk", addTasks(300)},
		{"the phase renamed", func(sp *specs.Spec) error { sp.Edit(p1).Title = "renamed"; return nil }},
		{"140 moved into the other phase", func(sp *specs.Spec) error {
			for _, c := range tasks(sp, p1)[:140:140] {
				if err := specs.MoveTask(sp, c, p2, nil); err != nil {
					return err
				}
			}
			return nil
		}},
		{"the other phase removed", func(sp *specs.Spec) error { _, err := specs.RemovePhase(sp, p2, true); return err }},
		{"a task in each of three chunks removed", func(sp *specs.Spec) error {
			ts := tasks(sp, p1)
			for _, c := range []string{ts[1], ts[70], ts[129]} {
				if _, err := specs.RemoveTask(sp, c, true); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	want := map[int64]map[string]string{}
	names := map[int64]string{}
	read := func() (int64, map[string]string) {
		var v int64
		var nodes map[string]string
		if err := st.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			v, nodes = sp.Header.Version, nodesOf(t, sp.Document())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return v, nodes
	}
	v, nodes := read()
	want[v], names[v] = nodes, "before"
	for _, s := range steps {
		res, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "test"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			return s.fn(sp)
		})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		v, nodes := read()
		if v != res.Version {
			t.Fatalf("%s: read version %d, wrote %d", s.name, v, res.Version)
		}
		want[v], names[v] = nodes, s.name
	}
	checkAll := func(stage string) {
		t.Helper()
		for v, w := range want {
			if err := st.ReadVersion(ctx, id, v, func(vv specs.VersionView) error {
				if d := diffNodes(nodesOf(t, vv.Document()), w); d != "" {
					t.Errorf("%s: version %d (%s) reads differently: %s", stage, v, names[v], d)
				}
				return nil
			}); err != nil {
				t.Fatalf("%s: version %d: %v", stage, v, err)
			}
		}
	}
	checkAll("as written")
	// Rollbacks to either side of the boundaries, each a new version.
	for _, target := range []string{"257", "128", "140 moved into the other phase", "ten moved to the other phase", "129", "emptied", "reversed", "the other phase removed"} {
		var to int64
		for v, n := range names {
			if n == target {
				to = v
			}
		}
		res, err := st.RollbackSpec(ctx, id, to, specs.RepoWriteOptions{Action: "spec.rollback"}, func() string { return specs.FormatTime(clock()) })
		if err != nil {
			t.Fatalf("rollback to %s: %v", target, err)
		}
		v, nodes := read()
		if v != res.Version {
			t.Fatalf("rollback to %s: read version %d, wrote %d", target, v, res.Version)
		}
		if d := diffNodes(nodes, want[to]); d != "" {
			t.Errorf("rollback to %d (%s) restored something else: %s", to, target, d)
		}
		want[v], names[v] = nodes, "rollback to "+target
	}
	checkAll("after the rollbacks")
	if err := st.Store.View(ctx, func(tx bucketstore.Tx) error {
		findings, err := st.Repo.CheckSpecs(tx)
		if len(findings) > 0 {
			t.Errorf("check: %v", findings)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A fresh repository (another process: nothing cached) reads the same.
	fresh := specstore.New(st.Store, nil)
	if err := fresh.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
		v := sp.Header.Version
		if d := diffNodes(nodesOf(t, sp.Document()), want[v]); d != "" {
			t.Errorf("a fresh reader reads version %d differently: %s", v, d)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestChildrenChunksThroughEtcdLargeChanges runs the chunk boundary test
// on etcd with its default limits and a store that takes any change of
// more than 64 writes through the staged path (large.go): a bulk add or a
// conversion rewrites a node, its chunks and its history as one redo log,
// and every version still reads back as written.
func TestChildrenChunksThroughEtcdLargeChanges(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	testChildrenAcrossChunkBoundaries(t, func(t testing.TB, now func() time.Time) Port {
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, MaxTxnOps: 64, Prefix: "/chunks-large"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return &domainStore{Store: st, Repo: specstore.New(st, now), archive: researchstore.New(st, now)}
	})
}

// TestChildrenChunksTwoServersOnOneCluster: two servers (two stores and
// repositories, each with its own caches) on one etcd prefix alternate
// adds and removals on one phase, across chunk boundaries, each guarded by
// expected_version: each write sees the other's children, never its own
// cache's stale ones, and both read the same list as a fresh reader.
func TestChildrenChunksTwoServersOnOneCluster(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	ctx := context.Background()
	var repos [2]*specstore.Repo
	var first bucketstore.Store
	for i := range repos {
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, Prefix: "/two-servers"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		repos[i] = specstore.New(st, nil)
		if first == nil {
			first = st
		}
	}
	id := createSpec(t, repos[0], "two servers")
	res, err := addPhase(t, repos[0], id, "p", core.Mutation{})
	if err != nil {
		t.Fatal(err)
	}
	version := res.Version
	var want []string
	for i := range 300 {
		r := repos[i%2]
		if i%7 == 3 {
			r = repos[(i+1)%2]
		}
		v := version
		// The fn may run more than once (etcd re-runs a write that lost a
		// race): it only computes the change; want follows once it is kept.
		var next []string
		res, err := r.MutateSpec(ctx, id, specs.RepoWriteOptions{ExpectedVersion: &v}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			if i%5 == 4 && len(want) > 2 { // remove one from the middle
				k := len(want) / 2
				if _, err := specs.RemoveTask(sp, want[k], true); err != nil {
					return err
				}
				next = append(want[:k:k], want[k+1:]...)
				return nil
			}
			tid, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint("t", i)})
			next = append(want[:len(want):len(want)], tid)
			return err
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		want = next
		version = res.Version
	}
	fresh := specstore.New(first, nil)
	for i, r := range []*specstore.Repo{repos[0], repos[1], fresh} {
		if err := r.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			var got []string
			for _, c := range sp.Node("phase-1").Children.All() {
				if sp.Node(c).Type == specs.TypeTask {
					got = append(got, c)
				}
			}
			if !slices.Equal(got, want) || sp.Header.Version != version {
				t.Errorf("reader %d: version %d (want %d), %d tasks (want %d)", i, sp.Header.Version, version, len(got), len(want))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
