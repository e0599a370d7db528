package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
)

// stagedCount is how many staged chunk keys s's prefix holds.
func stagedCount(t *testing.T, s *Store) int64 {
	t.Helper()
	resp, err := s.cli.Get(context.Background(), s.root+stagedName, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// TestSwitchRefusedWhenStageCollected: a staged set deleted between its
// stage and its switch (by any collector) fails the switch, and the change
// is staged again, so a crash after the switch still leaves a change the
// next reader can finish (no STORE_CORRUPT).
func TestSwitchRefusedWhenStageCollected(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	s := openInternal(t, ep, fmt.Sprintf("/stagegc/%d", outcomePrefix.Add(1)), nil)
	stages := 0
	s.afterStage = func() error {
		stages++
		if stages == 1 {
			_, err := s.cli.Delete(context.Background(), s.root+stagedName, clientv3.WithPrefix())
			return err
		}
		return nil
	}
	crashed := errors.New("crashed after the switch")
	s.afterSwitch = func() error { return crashed }
	if err := putKeys(s, "x", 300, "A"); err == nil {
		t.Fatalf("answer %v, want the crash", err)
	}
	s.afterStage, s.afterSwitch = nil, nil
	if v, err := getKey(s, "x", "k0299"); err != nil || v != "A" {
		t.Fatalf("after a crash past the switch: k0299 = %q, %v; want the change rolled forward", v, err)
	}
	if stages != 2 {
		t.Errorf("staged %d times, want 2 (the collected stage refused at the switch, then staged again)", stages)
	}
}

// TestSkewedCollectorKeepsFreshStage: a server whose clock is 11 minutes
// ahead does not collect a staged set another server wrote moments ago
// (the age of a staged set is judged by cluster revisions this server saw
// at least staleStaged ago, not by clocks), and both large changes land.
func TestSkewedCollectorKeepsFreshStage(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	p := fmt.Sprintf("/stagegc/%d", outcomePrefix.Add(1))
	a := openInternal(t, ep, p, nil)
	b := openInternal(t, ep, p, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(11 * time.Minute) } })
	var once sync.Once
	var left int64
	a.afterStage = func() error {
		var err error
		once.Do(func() {
			if err = putKeys(b, "y", 300, "B"); err == nil {
				left = stagedCount(t, a) // b dropped its own: what is left is a's
			}
		})
		return err
	}
	crashed := errors.New("crashed after the switch")
	a.afterSwitch = func() error { return crashed }
	if err := putKeys(a, "x", 300, "A"); err == nil {
		t.Fatal("the crashed change answered success")
	}
	if left == 0 {
		t.Error("the skewed server collected a staged set written moments before")
	}
	for _, c := range []struct{ bucket, want string }{{"x", "A"}, {"y", "B"}} {
		if v, err := getKey(b, c.bucket, "k0299"); err != nil || v != c.want {
			t.Errorf("%s/k0299 = %q, %v; want %q", c.bucket, v, err, c.want)
		}
	}
}

// TestBlindWriteWaitsForPendingChange: an update that writes without
// reading while a committed large change is pending (its writer crashed
// after the switch) does not land before it: the change is finished
// first, so the roll-forward cannot overwrite the acknowledged write.
func TestBlindWriteWaitsForPendingChange(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	p := fmt.Sprintf("/stagegc/%d", outcomePrefix.Add(1))
	a := openInternal(t, ep, p, nil)
	b := openInternal(t, ep, p, nil)
	a.afterSwitch = func() error { return errors.New("crashed after the switch") }
	if err := putKeys(a, "x", 300, "A"); err == nil {
		t.Fatal("the crashed change answered success")
	}
	if err := b.Update(context.Background(), func(tx bucketstore.Tx) error {
		return tx.Bucket([]byte("x")).Put([]byte("k0100"), []byte("B"))
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := getKey(b, "x", "k0100"); err != nil || v != "B" {
		t.Errorf("k0100 = %q, %v after the acknowledged later write of B", v, err)
	}
	if v, err := getKey(b, "x", "k0299"); err != nil || v != "A" {
		t.Errorf("k0299 = %q, %v; want the pending change finished", v, err)
	}
}
