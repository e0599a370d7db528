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
	first := liveStamp(t, b)
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

// liveStamp takes st's change stamp until it is no longer fresh (its watch
// is established) and returns that token.
func liveStamp(t *testing.T, st *etcdstore.Store) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		token, fresh := st.ChangeStamp()
		if !fresh {
			return token
		}
		if time.Now().After(deadline) {
			t.Fatal("the change stamp stayed fresh: its watch never became live")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChangeStampFreshUntilItsWatchIsLive: the first stamp starts the
// store's watch, which etcd registers a round trip later; a change
// committed in between moves no token, so until the watch is established
// the stamp is fresh (the subscription watcher then reads the versions at
// every look instead of trusting an unchanged token), and once it is, a
// change through another server moves the token of a stamp that is not.
// Before, the first stamp was not fresh, and a spec changed in that window
// kept a board or subscriber on this server waiting for the next change.
func TestChangeStampFreshUntilItsWatchIsLive(t *testing.T) {
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, nil)
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix() })
	if _, fresh := b.ChangeStamp(); !fresh {
		t.Fatal("the first stamp, taken before the cluster confirmed its watch, is not fresh")
	}
	before := liveStamp(t, b)
	if _, err := specWithTasks(t, a, 1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		token, fresh := b.ChangeStamp()
		if token != before && !fresh {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stamp stayed %s after a change through the other server", before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestChangeNotifyWakesOnAnotherServersChange: store B's ChangeNotify
// sends once at the start, then after a spec changed through store A, by
// which time B's change stamp has moved (a watcher woken by it reads the
// versions); the feed closes when its context ends.
func TestChangeNotifyWakesOnAnotherServersChange(t *testing.T) {
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, nil)
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix() })
	before := liveStamp(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	feed, err := b.ChangeNotify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-feed // the first look
	if _, err := specWithTasks(t, a, 1); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-feed:
		case <-time.After(hangBound):
			t.Fatal("a change through another server did not wake the feed")
		}
		if tok, _ := b.ChangeStamp(); tok != before {
			break // woken after the stamp moved (a wake before it is a look that finds nothing)
		}
	}
	cancel()
	for range feed { // closed once ctx has ended
	}
}
