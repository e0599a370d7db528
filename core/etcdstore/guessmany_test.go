package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
)

// TestGuessedWriteReadingManyNodes: on a cluster with etcd's default
// limits (--max-txn-ops 128), a write that reads more of a guessed spec's
// nodes than one transaction may compare — a walk of a spec of 200 nodes
// whose values this server has cached, so it reads nothing from the
// cluster — must still commit (or, writing nothing or failing, answer),
// not be refused as too large for a guard of one compare per guess: it
// runs again reading the spec from the cluster, and its guard is then the
// prefix's.
func TestGuessedWriteReadingManyNodes(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	a := openInternal(t, ep, "/guessmany", nil)
	ctx := context.Background()
	const n = 200
	for lo := 0; lo < n; lo += 100 {
		if err := a.Update(ctx, func(tx bucketstore.Tx) error {
			nodes := guessedNodes(tx)
			for i := lo; i < lo+100; i++ {
				if err := nodes.Put([]byte(fmt.Sprintf("n%03d", i)), []byte("v")); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	errFound := errors.New("every node is there")
	walk := func(write bool, answer error) error {
		return a.Update(ctx, func(tx bucketstore.Tx) error {
			nodes := guessedNodes(tx)
			for i := range n {
				if nodes.Get([]byte(fmt.Sprintf("n%03d", i))) == nil {
					return fmt.Errorf("n%03d is absent", i)
				}
			}
			if write {
				return nodes.Put([]byte("sum"), []byte(fmt.Sprint(n)))
			}
			return answer
		})
	}
	if err := walk(true, nil); err != nil { // lists the nodes: a guesses them after
		t.Fatal(err)
	}
	if a.guesses.get(a.specsRoot+"/s1") == nil {
		t.Fatal("a does not guess the spec after its writes")
	}
	for _, c := range []struct {
		name   string
		write  bool
		answer error
	}{{"a write", true, nil}, {"a write that changes nothing", false, nil}, {"a failing write", false, errFound}} {
		a.guesses.mu.Lock()
		a.guesses.pause = nil
		a.guesses.mu.Unlock()
		if err := walk(true, nil); err != nil { // a guesses the spec again
			t.Fatalf("before %s: %v", c.name, err)
		}
		if err := walk(c.write, c.answer); !errors.Is(err, c.answer) {
			t.Fatalf("%s reading %d guessed nodes answered %v, want %v", c.name, n, err, c.answer)
		}
	}
}
