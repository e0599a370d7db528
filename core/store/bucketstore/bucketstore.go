// Package bucketstore is specd's store logic written once over ordered
// buckets: the spec, journal, history, archive and digest layout and every
// operation of the store port on it. Each engine supplies only what is
// really its own — transactions (Engine) and a bucket type (Bucket) over
// its keys: core/store adapts *bbolt.Bucket, core/etcdstore its key ranges
// of one etcd transaction — so a rule fixed here holds on every engine,
// and both engines keep the same keys and values byte for byte.
//
// A Repo's operations run fn inside one Engine transaction each: a mutation
// either commits entirely or, on any error, changes nothing.
package bucketstore

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/specd/specd/specs"
)

// Engine runs transactions. View runs fn over one consistent snapshot;
// Update runs fn in one read-write transaction that commits only when fn
// returns nil (any error, including the context's, keeps nothing). Both
// answer fn's errors and the engine's own (lock, availability, storage).
type Engine interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
}

// Tx is one transaction: the top-level buckets of the layout always exist
// in it (the engine creates them: TopBuckets).
type Tx interface {
	// Bucket returns the top-level bucket name, or nil when it is absent.
	Bucket(name []byte) Bucket
}

// Bucket is bbolt's bucket contract, as much of it as the store uses: keys
// in byte order, nested buckets (a nested bucket reads as a nil value in
// ForEach and cursors), and a per-bucket sequence. Values returned are
// valid for the transaction only. Writes fail only on a read-only or
// closed transaction. No method keeps or changes the key it is given (Put
// and CreateBucket store a copy), so callers may reuse one key buffer.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	// Bucket returns the nested bucket name, or nil when it does not exist.
	Bucket(name []byte) Bucket
	// CreateBucket makes the nested bucket name; an error when it exists.
	CreateBucket(name []byte) (Bucket, error)
	CreateBucketIfNotExists(name []byte) (Bucket, error)
	// ForEach calls fn for every key in order (value nil: a nested bucket).
	ForEach(fn func(k, v []byte) error) error
	// ForEachBucket calls fn for every nested bucket's name in order.
	ForEachBucket(fn func(name []byte) error) error
	NextSequence() (uint64, error)
	Cursor() Cursor
}

// Cursor walks a bucket's keys in order; every move answers (nil, nil) past
// either end, and a nested bucket's value is nil.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	// Seek moves to the first key >= seek.
	Seek(seek []byte) (key, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
}

// Repo is the store port over an Engine. It is safe for concurrent use
// when the Engine is.
type Repo struct {
	eng   Engine
	now   func() time.Time
	nodes nodeCache // decoded spec nodes, validated by their stored bytes
	// intakeCap is the intake inbox's capacity (SetIntakeCapacity; 0:
	// specs.MaxIntakeItems).
	intakeCap atomic.Int64
}

// SetIntakeCapacity sets how many items the intake inbox holds before it
// forgets dismissed ones or refuses new ones (n ≤ 0: specs.MaxIntakeItems).
func (s *Repo) SetIntakeCapacity(n int) { s.intakeCap.Store(int64(n)) }

func (s *Repo) intakeCapacity() int {
	if n := s.intakeCap.Load(); n > 0 {
		return int(n)
	}
	return specs.MaxIntakeItems
}

// New returns the store over eng; now is the clock of archive and digest
// timestamps (nil: time.Now).
func New(eng Engine, now func() time.Time) *Repo {
	if now == nil {
		now = time.Now
	}
	return &Repo{eng: eng, now: now}
}

func (s *Repo) view(ctx context.Context, fn func(Tx) error) error { return s.eng.View(ctx, fn) }

func (s *Repo) update(ctx context.Context, fn func(Tx) error) error {
	return s.eng.Update(ctx, fn)
}

// TopBuckets lists the layout's top-level buckets besides meta (each
// engine's own): an engine whose buckets must be created makes them all.
var TopBuckets = [][]byte{
	bucketArchiveData, bucketArchiveMeta, bucketArchiveIDs, bucketDigests,
	bucketSpecs, bucketLifecycle,
}
