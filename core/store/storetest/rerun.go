package storetest

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/specd/specd/core/store/bucketstore"
)

// Rerun is a Store whose transactions run their fn the way an engine may
// (bucketstore.Engine): a View's fn runs twice and the second run answers;
// an Update's fn first runs in a transaction that is rolled back (as a
// write that lost a race on etcd), then runs again for real. Between the
// two runs Between, when set, is called (another writer's commit). A fn
// that keeps state outside itself across runs — appends to an outer slice,
// fills a caller's struct in place, writes a cache before its commit —
// answers differently over Rerun than over the Store alone.
type Rerun struct {
	bucketstore.Store
	// Every: only every Every-th transaction (counting Views and Updates
	// together) runs twice; 0 or 1: every one. A value above 1 finds state
	// carried from one call to the next rather than from one run to the
	// next.
	Every int64
	// Between, when set, runs between a transaction's two runs, outside
	// any transaction (it may write to Store).
	Between func()

	calls atomic.Int64
}

// errRolledBack makes the wrapping fn of a first Update run fail, so the
// engine keeps nothing of it.
var errRolledBack = errors.New("storetest: the first run of a re-run update is rolled back")

// twice reports whether this transaction runs its fn twice.
func (r *Rerun) twice() bool {
	n := r.calls.Add(1)
	return r.Every <= 1 || n%r.Every == 0
}

func (r *Rerun) between() {
	if r.Between != nil {
		r.Between()
	}
}

// Reruns is how many transactions ran their fn twice.
func (r *Rerun) Reruns() int64 {
	n := r.calls.Load()
	if r.Every <= 1 {
		return n
	}
	return n / r.Every
}

// View runs fn, drops its answer, and runs it again on a new snapshot.
func (r *Rerun) View(ctx context.Context, fn func(bucketstore.Tx) error) error {
	if r.twice() {
		_ = r.Store.View(ctx, fn)
		r.between()
	}
	return r.Store.View(ctx, fn)
}

// Update runs fn in a transaction that is rolled back, then in one that
// commits when fn returns nil.
func (r *Rerun) Update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	if r.twice() {
		_ = r.Store.Update(ctx, func(tx bucketstore.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errRolledBack
		})
		r.between()
	}
	return r.Store.Update(ctx, fn)
}

// Exists is the wrapped Store's (bucketstore.Lazy); a Store that is not
// lazy always exists.
func (r *Rerun) Exists() bool {
	if l, ok := r.Store.(bucketstore.Lazy); ok {
		return l.Exists()
	}
	return true
}

var _ bucketstore.Lazy = (*Rerun)(nil)
