package store

import (
	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store/bucketstore"
)

// Group commit.
//
// Every Update is one atomic change, durable (fsynced) before it answers.
// A bbolt commit costs two fdatasyncs, so one commit per Update caps a busy
// server at the disk's sync rate. Concurrent Updates therefore share
// commits: the first caller becomes the leader and commits; callers that
// arrive while a commit is under way queue up, and when it ends the first
// of them leads the next commit with all of them in it. A lone caller
// commits at once (no waiting for company), so a sequential client pays
// nothing for this.
//
// Inside a shared transaction the fns run one after another, each against
// the state its predecessors left, each isolated by a savepoint: its writes
// are logged with what they replaced (undoLog), and a fn that fails (an
// error, its context's end, a panic) has them undone before the next fn
// runs, so it keeps nothing and the others keep theirs. No fn runs twice.
// The guards of a fn (expected_version, claims) read the transaction's
// state, so they see every change committed or batched before them. Then one
// commit (one fsync) answers them all; a commit that fails answers its
// error to every fn whose change it held.

// maxBatch bounds one commit's fns (its size and the wait of the last).
const maxBatch = 256

// commitReq is one Update waiting for, or leading, a commit.
type commitReq struct {
	ctx  context.Context
	fn   func(bucketstore.Tx) error
	err  error
	pv   any  // a panic of fn, re-raised in the caller's goroutine
	pan  bool // fn panicked
	lead bool // woken to lead the next commit, not answered
	done chan struct{}
}

// answer returns r's outcome in its caller's goroutine.
func (r *commitReq) answer() error {
	if r.pan {
		panic(r.pv)
	}
	return r.err
}

// commitQueue orders the Updates waiting for a commit.
type commitQueue struct {
	mu      sync.Mutex
	pending []*commitReq
	leading bool // a leader is committing; new arrivals wait
}

// Update runs fn in a read-write transaction that commits only when fn
// returns nil (see update for the errors besides fn's): nothing of a
// failed fn is kept. Concurrent Updates share one commit (see Group
// commit above); each is still atomic, isolated and durable on its own.
func (s *Store) Update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	r := &commitReq{ctx: ctx, fn: fn, done: make(chan struct{}, 1)}
	q := &s.commits
	q.mu.Lock()
	q.pending = append(q.pending, r)
	if q.leading {
		q.mu.Unlock()
		if err := s.waitTurn(ctx, r); err != nil {
			return err
		}
		if !r.lead {
			return r.answer()
		}
		q.mu.Lock()
	} else {
		q.leading = true
	}
	// r leads: it is first in line (a new leader is always pending[0]).
	n := min(len(q.pending), maxBatch)
	batch := q.pending[:n:n]
	q.pending = append([]*commitReq(nil), q.pending[n:]...)
	q.mu.Unlock()
	defer s.handOff(batch, r)
	completed := false
	defer func() {
		if !completed { // a panic outside any fn: the others must not read success
			for _, o := range batch {
				if o != r {
					o.err, o.pan = core.Internal(errors.New("store: the shared commit was interrupted")), false
				}
			}
		}
	}()
	if n == 1 {
		// Alone: a plain transaction, rolled back whole on failure.
		r.err = s.update(ctx, func(tx *bolt.Tx) error { return fn((*boltTx)(tx)) })
		completed = true
		return r.err
	}
	s.commitBatch(batch)
	completed = true
	return r.answer()
}

// waitTurn waits until r is answered or woken to lead. A caller whose
// context ends while it still waits in line (its fn not taken into a
// commit) leaves the line and answers the context's error: a commit stuck
// on another process's lock does not hold it past its deadline. Once its
// fn is taken, or it was woken to lead, it waits for that.
func (s *Store) waitTurn(ctx context.Context, r *commitReq) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
	}
	q := &s.commits
	q.mu.Lock()
	if i := slices.Index(q.pending, r); i >= 0 && !r.lead {
		q.pending = slices.Delete(q.pending, i, i+1)
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	<-r.done
	return nil
}

// handOff answers the batch's other callers and wakes the first caller
// that queued meanwhile to lead the next commit (or ends the leading).
func (s *Store) handOff(batch []*commitReq, leader *commitReq) {
	q := &s.commits
	q.mu.Lock()
	if len(q.pending) > 0 {
		next := q.pending[0]
		next.lead = true
		next.done <- struct{}{}
	} else {
		q.leading = false
	}
	q.mu.Unlock()
	for _, r := range batch {
		if r != leader {
			r.done <- struct{}{}
		}
	}
}

// errBatchEmpty rolls back a shared transaction in which every fn failed:
// there is nothing to commit.
var errBatchEmpty = errors.New("store: no change in the batch")

// commitBatch runs batch's fns in one transaction, each behind a savepoint,
// and commits what succeeded with one fsync. Each request's err (or panic)
// is set.
func (s *Store) commitBatch(batch []*commitReq) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	setAll := func(err error) {
		for _, r := range batch {
			if r.err == nil && !r.pan {
				r.err = err
			}
		}
	}
	db, err := s.acquire(ctx)
	if err != nil {
		setAll(err)
		return
	}
	defer s.release()
	if s.isReadOnly() {
		setAll(s.ReadOnlyError(nil))
		return
	}
	var fatal error
	err = func() (err error) {
		defer s.recoverCorrupt(db, &err)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		return db.Update(func(tx *bolt.Tx) error {
			ok := 0
			for _, r := range batch {
				if fatal = s.runSaved(tx, r); fatal != nil {
					return fatal
				}
				if r.err == nil && !r.pan {
					ok++
				}
			}
			if ok == 0 {
				return errBatchEmpty
			}
			return nil
		})
	}()
	switch {
	case err == nil:
		s.noteWrite(nil)
	case errors.Is(err, errBatchEmpty):
	case fatal != nil:
		// The batch could not be kept apart (a damaged file, or an undo
		// that failed): nothing of it is kept, and every caller hears why.
		for _, r := range batch {
			r.err, r.pan, r.pv = fatal, false, nil
		}
	default:
		// The commit itself failed (write or sync), or the file turned out
		// damaged: nothing was kept; classify as update does.
		var ce *core.Error
		if !errors.As(err, &ce) {
			err = s.storageError("commit", err)
		}
		s.noteWrite(err)
		setAll(err)
	}
}

// runSaved runs r's fn behind a savepoint: on failure (error, the end of
// r's context, a panic) its writes are undone. It returns a non-nil error
// only when the transaction as a whole cannot go on (STORE_CORRUPT, or an
// undo that failed).
func (s *Store) runSaved(tx *bolt.Tx, r *commitReq) error {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return nil
	}
	log := &undoLog{}
	func() {
		defer func() {
			if v := recover(); v != nil {
				r.pan, r.pv = true, v
			}
		}()
		r.err = r.fn(&trackedTx{tx: tx, log: log})
	}()
	if r.pan && s.damagedTx(tx) { // tx is the write transaction: no other can begin
		return s.CorruptError("a page cannot be read", errOpenPanic{r.pv})
	}
	if r.err == nil && !r.pan {
		// A deadline that passed while fn ran cancels its work.
		if r.err = r.ctx.Err(); r.err == nil {
			return nil
		}
	}
	if err := log.undo(); err != nil {
		return core.Internal(err)
	}
	return nil
}

// batchContext is the context a shared commit acquires the file under: no
// caller's cancellation ends it (each fn checks its own context), and its
// deadline is the latest of the callers' (none if one has none).
func batchContext(batch []*commitReq) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, r := range batch {
		dl, ok := r.ctx.Deadline()
		if !ok {
			return context.WithoutCancel(batch[0].ctx), func() {}
		}
		if dl.After(latest) {
			latest = dl
		}
	}
	return context.WithDeadline(context.WithoutCancel(batch[0].ctx), latest)
}

// undoLog records what a fn's writes replaced, to undo them in reverse.
type undoLog struct{ steps []func() error }

func (l *undoLog) add(f func() error) { l.steps = append(l.steps, f) }

func (l *undoLog) undo() error {
	for i := len(l.steps) - 1; i >= 0; i-- {
		if err := l.steps[i](); err != nil {
			return err
		}
	}
	l.steps = nil
	return nil
}

// trackedTx is the port's Tx over a shared transaction: every write through
// it is logged in log.
type trackedTx struct {
	tx  *bolt.Tx
	log *undoLog
}

func (t *trackedTx) Bucket(name []byte) bucketstore.Bucket {
	return t.wrap(t.tx.Bucket(name))
}

func (t *trackedTx) wrap(b *bolt.Bucket) bucketstore.Bucket {
	if b == nil {
		return nil
	}
	return &trackedBucket{b: b, log: t.log}
}

// trackedBucket is a bucket whose writes are logged for undo.
type trackedBucket struct {
	b   *bolt.Bucket
	log *undoLog
}

func (t *trackedBucket) wrap(b *bolt.Bucket) bucketstore.Bucket {
	if b == nil {
		return nil
	}
	return &trackedBucket{b: b, log: t.log}
}

// current returns key's value and whether key holds a value (not absent,
// not a nested bucket). The value is not copied: it stays valid until the
// transaction commits, as long as undo needs it — bbolt writes no page
// before the commit (the value is in the read-only mapping, or is the slice
// an earlier Put of this transaction was given, which the port forbids its
// caller to change), and a phase's node, rewritten by every task add, is
// large.
func (t *trackedBucket) current(key []byte) ([]byte, bool) {
	if v := t.b.Get(key); v != nil {
		return v, true
	}
	// nil is also what bbolt answers for an empty value: look closer.
	k, _ := t.b.Cursor().Seek(key)
	if !bytes.Equal(k, key) || t.b.Bucket(key) != nil {
		return nil, false
	}
	return []byte{}, true
}

func (t *trackedBucket) Get(key []byte) []byte { return t.b.Get(key) }

func (t *trackedBucket) Put(key, value []byte) error {
	old, had := t.current(key)
	if err := t.b.Put(key, value); err != nil {
		return err
	}
	b, k := t.b, bytes.Clone(key)
	if had {
		t.log.add(func() error { return b.Put(k, old) })
	} else {
		t.log.add(func() error { return b.Delete(k) })
	}
	return nil
}

func (t *trackedBucket) Delete(key []byte) error {
	old, had := t.current(key)
	if err := t.b.Delete(key); err != nil {
		return err
	}
	if had {
		b, k := t.b, bytes.Clone(key)
		t.log.add(func() error { return b.Put(k, old) })
	}
	return nil
}

func (t *trackedBucket) Bucket(name []byte) bucketstore.Bucket { return t.wrap(t.b.Bucket(name)) }

func (t *trackedBucket) CreateBucket(name []byte) (bucketstore.Bucket, error) {
	c, err := t.b.CreateBucket(name)
	if err != nil {
		return nil, err
	}
	b, k := t.b, bytes.Clone(name)
	t.log.add(func() error { return b.DeleteBucket(k) })
	return t.wrap(c), nil
}

func (t *trackedBucket) CreateBucketIfNotExists(name []byte) (bucketstore.Bucket, error) {
	existed := t.b.Bucket(name) != nil
	c, err := t.b.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	if !existed {
		b, k := t.b, bytes.Clone(name)
		t.log.add(func() error { return b.DeleteBucket(k) })
	}
	return t.wrap(c), nil
}

func (t *trackedBucket) ForEach(fn func(k, v []byte) error) error { return t.b.ForEach(fn) }

func (t *trackedBucket) ForEachBucket(fn func(name []byte) error) error {
	return t.b.ForEachBucket(fn)
}

func (t *trackedBucket) NextSequence() (uint64, error) {
	old := t.b.Sequence()
	n, err := t.b.NextSequence()
	if err != nil {
		return n, err
	}
	b := t.b
	t.log.add(func() error { return b.SetSequence(old) })
	return n, nil
}

func (t *trackedBucket) Cursor() bucketstore.Cursor { return (*boltCursor)(t.b.Cursor()) }
