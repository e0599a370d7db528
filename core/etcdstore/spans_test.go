package etcdstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs"
)

// TestWarmReadsFollowOtherServers: a server that has read a spec (its
// node snapshot and value cache are warm) reads, after each change made
// through another server or itself — a change, a removal, an addition, a
// removal and an addition in one mutation — exactly what a server that
// never read it reads: same version, same node ids, same node bytes. Its
// own mutations on top of those changes are read back the same way.
func TestWarmReadsFollowOtherServers(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, func(o *etcdstore.Options) { o.MaxTxnOps = 4096 })
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix(); o.MaxTxnOps = 4096 })
	id := phasedSpec(t, a, 2, 20)
	state := func(st *etcdstore.Store) string {
		var out strings.Builder
		if err := repoOf(st).ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
			fmt.Fprintf(&out, "version %d\n", sp.Header.Version)
			ids := sp.IDs()
			slices.Sort(ids)
			for _, nid := range ids {
				raw, err := specs.EncodeNode(sp.Node(nid))
				if err != nil {
					return err
				}
				fmt.Fprintf(&out, "%s %s\n", nid, raw)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	fresh := func() string {
		return state(openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix(); o.MaxTxnOps = 4096 }))
	}
	start := func(sp *specs.Spec) error {
		_, err := specs.Start(sp, specs.NextTask(sp).TaskID, specs.TransitionOptions{})
		return err
	}
	remove := func(sp *specs.Spec) error { _, err := specs.RemoveTask(sp, lastTask(sp), false); return err }
	add := func(sp *specs.Spec) error {
		_, err := specs.AddTask(sp, sp.Node(lastTask(sp)).Parent, specs.TaskInput{Title: "added"})
		return err
	}
	both := func(sp *specs.Spec) error {
		if err := remove(sp); err != nil {
			return err
		}
		return add(sp)
	}
	for _, step := range []struct {
		name string
		via  *etcdstore.Store
		fn   func(*specs.Spec) error
	}{
		{"b starts a task", b, start},
		{"b removes a task", b, remove},
		{"b adds a task", b, add},
		{"b removes a task and adds one", b, both},
		{"a removes a task", a, remove},
		{"a adds a task", a, add},
		{"b removes two tasks", b, func(sp *specs.Spec) error {
			if err := remove(sp); err != nil {
				return err
			}
			return remove(sp)
		}},
		{"a removes a task and adds one", a, both},
	} {
		_ = state(a) // warm
		mutate(t, step.via, id, step.fn)
		want := fresh()
		if got := state(a); got != want {
			t.Fatalf("after %s, the warm server reads\n%s\na fresh one\n%s", step.name, got, want)
		}
		mutate(t, a, id, start) // a's own mutation on top, from its warm view
		want = fresh()
		if got := state(a); got != want {
			t.Fatalf("after %s and a start through a, the warm server reads\n%s\na fresh one\n%s", step.name, got, want)
		}
		if got := state(b); got != want {
			t.Fatalf("after %s and a start through a, b reads\n%s\na fresh one\n%s", step.name, got, want)
		}
	}
}
