// Package bucketstore declares specd's store port: ordered buckets of
// bytes (keys in byte order, nested buckets, per-bucket sequences) read and
// written in transactions, plus the store's identity and health (Store).
// Both engines implement it — core/store over *bbolt.Bucket, core/etcdstore
// over key ranges of one guarded etcd transaction — and keep the same keys
// and values byte for byte; core/store/storetest is the conformance suite
// both pass.
//
// The port knows no domain: the spec, journal, history and notes layout
// lives in specs/specstore, the archive and digests in
// research/researchstore, each over an Engine. An Update either commits
// entirely or, on any error, changes nothing, so each of their operations
// (one Update) is atomic and its guards (expected_version) hold on every
// engine. It imports nothing of the project but core (its error type).
package bucketstore

import (
	"context"
)

// Engine runs transactions. View runs fn over one consistent snapshot;
// Update runs fn in one read-write transaction that commits only when fn
// returns nil (any error, including the context's, keeps nothing). Both
// answer fn's errors and the engine's own (lock, availability, storage).
// An engine may run the fns of concurrent Updates one after another in one
// transaction and commit them together (bbolt's group commit); each still
// keeps all or nothing and sees the changes of those before it, so a fn
// must use its Tx only until it returns, and not wait on other Updates.
// An engine may also run a fn again, from the start, on a fresh transaction
// (etcd re-runs a View after a retryable read error and an Update that lost
// a race): a fn must set every result it returns through variables outside
// it on each run, never add to what an earlier run left there.
type Engine interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
}

// Tx is one transaction: the top-level buckets of the layout always exist
// in it (the engine creates them: TopBuckets).
type Tx interface {
	// Bucket returns the top-level bucket name of the layout (TopBuckets,
	// MetaBucket). Other names are outside the port (bbolt answers nil,
	// etcd an empty bucket).
	Bucket(name []byte) Bucket
}

// Bucket is bbolt's bucket contract, as much of it as the store uses: keys
// in byte order, nested buckets (a nested bucket reads as a nil value in
// cursors), and a per-bucket sequence. Values returned are valid for the
// transaction only. Writes fail only on a read-only or closed transaction
// (a write inside View is never kept: bbolt refuses it, etcd drops it). No method keeps or changes the key it is given (Put
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
	// ForEach calls fn for every key in order. Whether it also visits the
	// nested buckets (with a nil value) is the engine's (bbolt does, etcd
	// does not): callers skip nil values and list nested buckets with
	// ForEachBucket.
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

// Store is the store port: transactions over the buckets (Engine), the
// store's identity and health (Health), and the change stamp resource
// subscriptions poll. core/store and core/etcdstore implement it; the
// domain stores (specs/specstore, research/researchstore) run over its
// Engine, and the tools see its Health.
type Store interface {
	Engine
	Health
	// InstallID is the store's stable UUID, created on first use.
	InstallID(ctx context.Context) (string, error)
	// ChangeStamp is a token that differs whenever a spec changed since
	// another stamp was taken, unless that stamp was fresh (then a later
	// change may keep the token): a watcher re-reads when the token changed
	// or the previous stamp was fresh. It takes no lock.
	ChangeStamp() (token string, fresh bool)
	// Export calls fn for every bucket and key but the meta bucket's,
	// parents before children, in key order, from one snapshot (specd
	// migrate).
	Export(ctx context.Context, fn func(Entry) error) error
	// Import writes entries (as Export gives them): buckets created as
	// needed, keys overwritten, sequences raised to the entry's; importing
	// the same entries again changes nothing.
	Import(ctx context.Context, entries []Entry) error
	// Close releases the store; later calls answer UNAVAILABLE.
	Close() error
}

// Health is what health and server checks read of the store.
type Health interface {
	// Path names the store: the bbolt file, or etcd://<endpoints><prefix>.
	Path() string
	// CheckWritable proves the store can be locked and written without
	// changing it. It may answer LOCK_TIMEOUT, UNAVAILABLE, STORE_FULL,
	// STORE_READ_ONLY, STORE_CORRUPT.
	CheckWritable(ctx context.Context) error
	// Info reads the store's identity and size (creating the store on
	// first use).
	Info(ctx context.Context) (Info, error)
}

// Lazy is a Store whose storage may not exist yet (the bbolt file before
// its first use). A reader that must not create it (a subscription poll)
// checks Exists first.
type Lazy interface {
	Exists() bool
}
