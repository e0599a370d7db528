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
	_ = a.ReadSpec(ctx, id, func(*specs.Spec, specs.JournalReader) error { return nil })
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
