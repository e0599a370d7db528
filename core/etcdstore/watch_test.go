package etcdstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs"
)

// TestChangesReachOtherServers: a spec changed through store A is reported
// by store B's change feed (two servers, one prefix), once per mutation, in
// revision order; a read-only call reports nothing.
func TestChangesReachOtherServers(t *testing.T) {
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, nil)
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := b.Changes(ctx)
	time.Sleep(100 * time.Millisecond) // let the watch start
	id, err := specWithTasks(t, a, 3)
	if err != nil {
		t.Fatal(err)
	}
	_ = repoOf(a).ReadSpec(ctx, id, func(*specs.Spec, specs.JournalReader) error { return nil })
	var last int64
	for i := 0; i < 2; i++ { // create, then the phase
		select {
		case c := <-feed:
			if c.SpecID != id || c.Revision <= last {
				t.Fatalf("change %d: %+v (last revision %d)", i, c, last)
			}
			last = c.Revision
		case <-time.After(5 * time.Second):
			t.Fatalf("change %d never reached the other server", i)
		}
	}
	select {
	case c := <-feed:
		t.Fatalf("unexpected change %+v", c)
	case <-time.After(200 * time.Millisecond):
	}
	if b.Revision() < last {
		t.Fatalf("store B's revision %d is behind the change it saw (%d)", b.Revision(), last)
	}
}

// TestChangeStampFollowsTheCluster: server B's change stamp moves when a
// spec changes through server A (so B's subscription watcher reads versions
// only then), stays put across reads, and SpecVersions reads the versions of
// the specs that exist.
func TestChangeStampFollowsTheCluster(t *testing.T) {
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, nil)
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix() })
	ctx := context.Background()
	first, fresh := b.ChangeStamp()
	if fresh {
		t.Fatal("an etcd stamp is never fresh")
	}
	time.Sleep(100 * time.Millisecond) // let the watch start
	id, err := specWithTasks(t, a, 2)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	moved, _ := b.ChangeStamp()
	for moved == first && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		moved, _ = b.ChangeStamp()
	}
	if moved == first {
		t.Fatalf("the stamp stayed %s after a change through the other server", first)
	}
	time.Sleep(200 * time.Millisecond)
	settled, _ := b.ChangeStamp()
	vs, err := repoOf(b).SpecVersions(ctx, []string{id, "no-such-spec"})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := b.ChangeStamp(); again != settled {
		t.Fatalf("a read moved the stamp: %s → %s", settled, again)
	}
	if _, missing := vs["no-such-spec"]; missing || vs[id] < 1 {
		t.Fatalf("versions %v", vs)
	}
}
