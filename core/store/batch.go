package store

import (
	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
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
// commits: a caller that finds no commit under way commits at once, alone
// (no waiting for company), so a sequential client pays nothing for this;
// callers that arrive while a commit is under way queue up, and when it
// ends the queue is taken as one batch and committed by a goroutine of its
// own (runBatch), while every caller of the batch waits for its answer.
//
// Inside a shared transaction the fns run one after another, each against
// the state its predecessors left, each isolated by a savepoint: its writes
// are logged with what they replaced (undoLog), and a fn that fails (an
// error, its context's end, a panic) has them undone before the next fn
// runs, so it keeps nothing and the others keep theirs (a batch of one
// fn logs nothing: its failure rolls the transaction back whole). No fn
// runs twice.
// The guards of a fn (expected_version, claims) read the transaction's
// state, so they see every change committed or batched before them. Then one
// commit (one fsync) answers them all; a commit that fails answers its
// error to every fn whose change it held.
//
// Deadlines. A caller's context (its deadline, or a cancellation) bounds
// its own wait, never the others':
//   - a caller whose context ends before its fn has started — queued, or
//     taken into a batch but not yet reached, or while the batch waits for
//     the file — leaves at once: its fn never runs, nothing of it is
//     written, and it answers its context's error;
//   - a caller whose context ends while its fn runs answers as soon as
//     the fn returns (the fn may still be using the caller's variables),
//     and its writes are undone;
//   - a fn that fails is answered when it returns, not after the commit;
//   - a caller whose fn succeeded waits for the commit that holds it,
//     which stays bounded: once its context has ended the batch takes no
//     further fn (those not started go in the next commit), so the commit
//     follows as soon as the fn running at that moment returns.
// No caller's deadline ends another's work: the batch waits for the file
// as long as its latest caller would, and each fn is cut by its own
// context only. A bbolt commit's outcome is always known (it returned or
// failed), so it is answered as it is; nothing is re-run.

// maxBatch bounds one commit's fns (its size and the wait of the last).
const maxBatch = 256

// The states of a commitReq. The runner moves it queued → running → kept
// or answered; its caller moves it queued or running → left when its
// context ends first. Whoever moves it first decides.
const (
	reqQueued   int32 = iota // not started
	reqRunning               // its fn runs
	reqKept                  // its fn succeeded; waits for the commit
	reqAnswered              // answered (done is signalled)
	reqLeft                  // its caller left: nothing of it is kept
)

// commitReq is one Update waiting for, or in, a shared commit.
type commitReq struct {
	ctx   context.Context
	fn    func(bucketstore.Tx) error
	state atomic.Int32
	// running is held while fn runs (taken before the move to running), so
	// a caller that leaves meanwhile waits until fn has returned.
	running sync.Mutex
	err     error
	pv      any  // a panic of fn, re-raised in the caller's goroutine
	pan     bool // fn panicked
	done    chan struct{}
	tx      trackedTx // the Tx fn is given (here: no allocation of its own)
}

// awaitFn returns once r's fn is not running (running is free).
func (r *commitReq) awaitFn() {
	r.running.Lock()
	defer r.running.Unlock()
}

// answer returns r's outcome in its caller's goroutine.
func (r *commitReq) answer() error {
	if r.pan {
		panic(r.pv)
	}
	return r.err
}

// finish answers r with err (or the panic already set) unless its caller
// left or it was answered already.
func (r *commitReq) finish(err error) {
	for {
		st := r.state.Load()
		if st == reqLeft || st == reqAnswered {
			return
		}
		if r.state.CompareAndSwap(st, reqAnswered) {
			break
		}
	}
	if !r.pan && r.err == nil {
		r.err = err
	}
	r.done <- struct{}{}
}

// commitQueue orders the Updates waiting for a commit.
type commitQueue struct {
	mu      sync.Mutex
	pending []*commitReq
	leading bool // a commit is under way; new arrivals wait
}

// Update runs fn in a read-write transaction that commits only when fn
// returns nil (see update for the errors besides fn's): nothing of a
// failed fn is kept. Concurrent Updates share one commit (see Group
// commit above); each is still atomic, isolated and durable on its own,
// and answers by its own deadline (see Deadlines above).
func (s *Store) Update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	q := &s.commits
	q.mu.Lock()
	if !q.leading {
		// Alone: a plain transaction, rolled back whole on failure.
		q.leading = true
		q.mu.Unlock()
		defer s.next()
		return s.updateLone(ctx, fn)
	}
	r := &commitReq{ctx: ctx, fn: fn, done: make(chan struct{}, 1)}
	q.pending = append(q.pending, r)
	q.mu.Unlock()
	select {
	case <-r.done:
		return r.answer()
	case <-ctx.Done():
	}
	if r.state.CompareAndSwap(reqQueued, reqLeft) || r.state.CompareAndSwap(reqRunning, reqLeft) {
		q.mu.Lock()
		if i := slices.Index(q.pending, r); i >= 0 {
			q.pending = slices.Delete(q.pending, i, i+1)
		}
		q.mu.Unlock()
		r.awaitFn() // a fn under way may still write the caller's variables
		return ctx.Err()
	}
	<-r.done // kept: its batch closes and commits (see Deadlines)
	return r.answer()
}

// updateLone runs fn alone in a plain transaction, rolled back whole on
// failure (nothing logged), its Gets through the store's kept cursors
// (seekers: a bbolt Get makes a cursor and grows its stack every time).
// The caller leads the commit queue, so no shared commit uses the
// cursors meanwhile.
func (s *Store) updateLone(ctx context.Context, fn func(bucketstore.Tx) error) error {
	defer s.seek.reset() // after the transaction ends
	t := &trackedTx{seek: &s.seek}
	return s.update(ctx, func(tx *bolt.Tx) error {
		*t = trackedTx{tx: tx, seek: &s.seek} // a run of its own
		return fn(t)
	})
}

// next starts the commit of the callers that queued meanwhile, or ends
// the leading when none did.
func (s *Store) next() {
	q := &s.commits
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		q.leading = false
		return
	}
	n := min(len(q.pending), maxBatch)
	batch := q.pending[:n:n]
	q.pending = append([]*commitReq(nil), q.pending[n:]...)
	go s.runBatch(batch)
}

// requeue puts the requests of rest not yet started back at the head of
// the line, for the next commit.
func (s *Store) requeue(rest []*commitReq) {
	var back []*commitReq
	for _, r := range rest {
		if r.state.Load() == reqQueued {
			back = append(back, r)
		}
	}
	q := &s.commits
	q.mu.Lock()
	q.pending = append(back, q.pending...)
	q.mu.Unlock()
}

// runBatch commits batch (commitBatch), answers every caller still
// waiting, and starts the next commit. A panic outside any fn (a bug) is
// re-raised in the goroutine of one caller still waiting; the others
// answer INTERNAL.
func (s *Store) runBatch(batch []*commitReq) {
	defer s.next()
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		raised := false
		for _, r := range batch {
			if !raised && r.state.Load() != reqLeft && r.state.Load() != reqAnswered {
				r.pan, r.pv, raised = true, v, true
				r.finish(nil)
				continue
			}
			r.finish(core.Internal(errors.New("store: the shared commit was interrupted")))
		}
		if !raised {
			s.log.Error("store: a shared commit panicked", "panic", v)
		}
	}()
	s.commitBatch(batch)
}

// errBatchEmpty rolls back a shared transaction in which every fn failed:
// there is nothing to commit.
var errBatchEmpty = errors.New("store: no change in the batch")

// commitBatch runs batch's fns in one transaction, each behind a savepoint,
// and commits what succeeded with one fsync, answering every request (but
// those it hands back to the line: see Deadlines).
func (s *Store) commitBatch(batch []*commitReq) {
	ctx, cancel := batchContext(batch)
	defer cancel()
	defer s.seek.reset() // after the transaction ends
	setAll := func(err error) {
		for _, r := range batch {
			r.finish(err)
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
			var kept int
			batch, kept, fatal = s.runAll(tx, batch, len(batch) == 1)
			switch {
			case fatal != nil:
				return fatal
			case kept == 0:
				return errBatchEmpty
			}
			return nil
		})
	}()
	switch {
	case err == nil:
		s.noteWrite(nil)
		setAll(nil)
	case errors.Is(err, errBatchEmpty):
		setAll(nil)
	case fatal != nil:
		// The batch could not be kept apart (a damaged file, or an undo
		// that failed): nothing of it is kept, and every caller hears why.
		for _, r := range batch {
			if st := r.state.Load(); st != reqAnswered && st != reqLeft {
				r.pan, r.pv = false, nil // its caller waits, reading nothing yet
			}
			r.finish(fatal)
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

// runAll runs the fns of batch in tx in order, each behind a savepoint
// (runSaved), answering at once those that fail. It returns the batch it
// ran — shorter when it closed early (closing), the rest back in line —
// how many fns the transaction keeps, and runSaved's fatal error. lone
// says batch holds one fn: its failure rolls the transaction back whole
// (nothing kept: errBatchEmpty), so its writes need no undo log.
func (s *Store) runAll(tx *bolt.Tx, batch []*commitReq, lone bool) ([]*commitReq, int, error) {
	kept := 0
	for i, r := range batch {
		if kept > 0 && closing(batch[:i]) {
			s.requeue(batch[i:])
			return batch[:i], kept, nil
		}
		ran, fatal := s.runHeld(tx, r, lone)
		if fatal != nil {
			return batch, kept, fatal
		}
		if !ran {
			continue // its caller left
		}
		if r.state.Load() == reqKept {
			kept++
		} else {
			r.finish(nil) // failed: nothing of it is kept; answer now
		}
	}
	return batch, kept, nil
}

// closing reports whether the context of a caller of ran whose fn the
// transaction keeps has ended: the batch then takes no further fn.
func closing(ran []*commitReq) bool {
	for _, r := range ran {
		if r.state.Load() == reqKept && r.ctx.Err() != nil {
			return true
		}
	}
	return false
}

// runHeld runs r (runSaved) holding r.running, unless its caller left
// first (ran false).
func (s *Store) runHeld(tx *bolt.Tx, r *commitReq, lone bool) (ran bool, fatal error) {
	r.running.Lock()
	defer r.running.Unlock()
	if !r.state.CompareAndSwap(reqQueued, reqRunning) {
		return false, nil
	}
	return true, s.runSaved(tx, r, lone)
}

// runSaved runs r's fn behind a savepoint and moves r to kept when it
// succeeded and its caller is still there; on failure (error, the end of
// r's context, a panic, its caller gone) its writes are undone and r.err
// (or its panic) is set. It returns a non-nil error only when the
// transaction as a whole cannot go on (STORE_CORRUPT, or an undo that
// failed). A lone fn (see runAll) runs unlogged, and is not undone.
func (s *Store) runSaved(tx *bolt.Tx, r *commitReq, lone bool) error {
	if err := r.ctx.Err(); err != nil {
		r.err = err
		return nil
	}
	log := &s.undo
	defer log.reset()
	r.tx = trackedTx{tx: tx, log: log, seek: &s.seek}
	if lone {
		r.tx.log = nil
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				r.pan, r.pv = true, v
			}
		}()
		r.err = r.fn(&r.tx)
	}()
	if r.pan && s.damagedTx(tx) { // tx is the write transaction: no other can begin
		return s.CorruptError("a page cannot be read", errOpenPanic{r.pv})
	}
	if r.err == nil && !r.pan {
		// A deadline that passed while fn ran cancels its work, and so
		// does a caller that left.
		if r.err = r.ctx.Err(); r.err == nil && r.state.CompareAndSwap(reqRunning, reqKept) {
			return nil
		}
	}
	if err := log.undo(); err != nil {
		return core.Internal(err)
	}
	return nil
}

// batchContext is the context a shared commit acquires the file under: no
// caller's cancellation ends it (each caller leaves by its own), and its
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

// undoOp is what undoing one logged write does.
type undoOp uint8

const (
	undoDelete       undoOp = iota // key was absent: delete it
	undoPut                        // key held old: put it back
	undoDeleteBucket               // bucket key was created: delete it
	undoSequence                   // the sequence was seq: set it back
)

// undoStep is one logged write: what bucket b held under key (or as its
// sequence) before the savepoint first wrote it.
type undoStep struct {
	b        *bolt.Bucket
	key, old []byte
	seq      uint64
	op       undoOp
}

// dedupWindow is how many of a savepoint's latest steps a write looks
// through for an earlier write of its key: bounded, so a fn of thousands
// of writes does not scan a long log for each one (a write it misses is
// merely logged twice; undo, in reverse, still restores the first).
const dedupWindow = 64

// Caps on what an undoLog keeps for the next savepoint (one huge fn does
// not pin its log's memory for the life of the store).
const (
	keepSteps    = 4096
	keepKeyBytes = 64 << 10
)

// undoLog records what one savepoint's writes replaced, to undo them in
// reverse. Only the first write of a key (or of a bucket's sequence) in the
// savepoint is logged: it holds the value the savepoint started from, all
// undo needs. Keys are copied into one buffer (keys) — the caller may reuse
// its own, and bbolt keeps nothing of a key it is given to put or delete —
// and old values are not copied: a value bbolt answers stays valid until
// the transaction ends, which is after any undo (bbolt allocates and writes
// pages only when it commits, so neither the read-only mapping a value
// lies in nor the slice an earlier Put of the transaction was given, which
// bbolt itself requires unchanged, moves before then). One undoLog serves
// every savepoint of the store (commitBatch runs one batch at a time):
// reset keeps its arrays for the next.
type undoLog struct {
	steps []undoStep
	keys  []byte
	// created holds the buckets the savepoint created: writes in them, or
	// in buckets under them, are not logged, through whichever handle they
	// are reached (undo deletes them whole).
	created []*bolt.Bucket
}

// fresh reports whether the savepoint created b.
func (l *undoLog) fresh(b *bolt.Bucket) bool {
	return slices.Contains(l.created, b)
}

// key returns a copy of k in l's key buffer. Copies stay valid when the
// buffer grows (the old array is left as it was) until reset.
func (l *undoLog) key(k []byte) []byte {
	n := len(l.keys)
	l.keys = append(l.keys, k...)
	return l.keys[n:len(l.keys):len(l.keys)]
}

// logged reports whether the savepoint already logged a write of key in b
// (sequence: of b's sequence) among its latest dedupWindow steps.
func (l *undoLog) logged(b *bolt.Bucket, key []byte, sequence bool) bool {
	for i := len(l.steps) - 1; i >= max(0, len(l.steps)-dedupWindow); i-- {
		st := &l.steps[i]
		if st.b != b {
			continue
		}
		switch st.op {
		case undoSequence:
			if sequence {
				return true
			}
		case undoPut, undoDelete:
			if !sequence && bytes.Equal(st.key, key) {
				return true
			}
		}
	}
	return false
}

// undo reverts the savepoint's writes, latest first.
func (l *undoLog) undo() error {
	for i := len(l.steps) - 1; i >= 0; i-- {
		st := &l.steps[i]
		var err error
		switch st.op {
		case undoDelete:
			err = st.b.Delete(st.key)
		case undoPut:
			err = st.b.Put(st.key, st.old)
		case undoDeleteBucket:
			err = st.b.DeleteBucket(st.key)
		case undoSequence:
			err = st.b.SetSequence(st.seq)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// reset empties l for the next savepoint, dropping its references to the
// transaction's buckets and values.
func (l *undoLog) reset() {
	clear(l.steps)
	clear(l.created)
	l.steps, l.keys, l.created = l.steps[:0], l.keys[:0], l.created[:0]
	if cap(l.steps) > keepSteps {
		l.steps = nil
	}
	if cap(l.keys) > keepKeyBytes {
		l.keys = nil
	}
	if cap(l.created) > keepSteps {
		l.created = nil
	}
}

// maxSeekers bounds the cursors a seekers keeps (beyond, a Get makes its
// own, as bbolt's does).
const maxSeekers = 64

// seekers keeps one cursor per bucket for the Gets of a shared transaction
// (the fns' own and the undo log's reads of old values): bbolt's Get makes a
// cursor and grows its stack on every call, a kept cursor only once. A Seek
// repositions the cursor from the bucket's root, so writes since its last
// use do not matter (bbolt asks a cursor be repositioned after a write, and
// Seek does that). Like the undoLog it serves one batch at a time (its
// transaction's goroutine; bbolt's transactions are not for concurrent
// use), and reset drops the cursors when the transaction ends.
type seekers struct{ cs []*bolt.Cursor }

// get seeks key in b: the first key >= key and its value (nil for a nested
// bucket), as bolt.Cursor.Seek.
func (s *seekers) get(b *bolt.Bucket, key []byte) (k, v []byte) {
	for _, c := range s.cs {
		if c.Bucket() == b {
			return c.Seek(key)
		}
	}
	c := b.Cursor()
	if len(s.cs) < maxSeekers {
		s.cs = append(s.cs, c)
	}
	return c.Seek(key)
}

func (s *seekers) reset() {
	clear(s.cs)
	s.cs = s.cs[:0]
}

// trackedTx is the port's Tx over a shared transaction: every write through
// it is logged in log, or, when log is nil (the batch's only fn, whose
// failure rolls the whole transaction back), not logged at all. Its
// buckets read through seek.
type trackedTx struct {
	tx   *bolt.Tx
	log  *undoLog
	seek *seekers
	// handles holds the first bucket handles the fn opens (a write opens
	// about six): one allocation with its commitReq instead of one each.
	handles [8]trackedBucket
	used    int
}

// handle is a bucket handle of t for b.
func (t *trackedTx) handle(b *bolt.Bucket, fresh bool) *trackedBucket {
	if t.used == len(t.handles) {
		return &trackedBucket{b: b, tx: t, fresh: fresh}
	}
	h := &t.handles[t.used]
	t.used++
	*h = trackedBucket{b: b, tx: t, fresh: fresh}
	return h
}

func (t *trackedTx) Bucket(name []byte) bucketstore.Bucket {
	return t.wrap(t.tx.Bucket(name))
}

// wrap wraps a top-level bucket (one no savepoint creates).
func (t *trackedTx) wrap(b *bolt.Bucket) bucketstore.Bucket {
	if b == nil {
		return nil
	}
	return t.handle(b, false)
}

// trackedBucket is a bucket whose writes are logged for undo. A bucket
// the savepoint created (fresh), and the buckets under it, log nothing,
// however they are reached (from the handle CreateBucket answered or again
// from the parent): undo deletes it whole. A write logged in it would be
// undone before the bucket is deleted, and could fail (its key turned into
// a nested bucket through the other handle), failing the whole batch.
type trackedBucket struct {
	b     *bolt.Bucket
	tx    *trackedTx // its log and seekers
	fresh bool
}

// wrap wraps b, a bucket under t: fresh when t is or when the savepoint
// created b (a bucket it created may be reached again from its parent).
func (t *trackedBucket) wrap(b *bolt.Bucket) bucketstore.Bucket {
	if b == nil {
		return nil
	}
	fresh := t.fresh || (t.tx.log != nil && t.tx.log.fresh(b))
	return t.tx.handle(b, fresh)
}

// logs reports whether t's writes are logged.
func (t *trackedBucket) logs() bool { return t.tx.log != nil && !t.fresh }

// before returns the step that undoes a write of key in t, and whether
// one is needed: not when writes in t are not logged, nor when the
// savepoint logged key already. It is taken before the write and logged
// (logAfter) once the write succeeded.
func (t *trackedBucket) before(key []byte) (undoStep, bool) {
	if !t.logs() || t.tx.log.logged(t.b, key, false) {
		return undoStep{}, false
	}
	if old, had := t.current(key); had {
		return undoStep{b: t.b, old: old, op: undoPut}, true
	}
	return undoStep{b: t.b, op: undoDelete}, true
}

// logAfter logs st, the undo of a write of key that succeeded.
func (t *trackedBucket) logAfter(st undoStep, key []byte) {
	st.key = t.tx.log.key(key)
	t.tx.log.steps = append(t.tx.log.steps, st)
}

// current returns key's value and whether key holds a value (not absent,
// not a nested bucket). The value is not copied (see undoLog).
func (t *trackedBucket) current(key []byte) ([]byte, bool) {
	k, v := t.tx.seek.get(t.b, key)
	switch {
	case k == nil || !bytes.Equal(k, key): // no key past key; bytes.Equal(nil, "") holds
		return nil, false
	case v != nil:
		return v, true
	case t.b.Bucket(key) != nil: // a nested bucket reads as nil
		return nil, false
	}
	return []byte{}, true // so may an empty value
}

// Get answers as bolt.Bucket.Get: key's value, nil when key is absent or
// a nested bucket.
func (t *trackedBucket) Get(key []byte) []byte {
	if k, v := t.tx.seek.get(t.b, key); bytes.Equal(k, key) {
		return v
	}
	return nil
}

func (t *trackedBucket) Put(key, value []byte) error {
	st, log := t.before(key)
	if err := t.b.Put(key, value); err != nil {
		return err
	}
	if log {
		t.logAfter(st, key)
	}
	return nil
}

func (t *trackedBucket) Delete(key []byte) error {
	st, log := t.before(key)
	if err := t.b.Delete(key); err != nil {
		return err
	}
	if log && st.op == undoPut { // deleting nothing needs no undo
		t.logAfter(st, key)
	}
	return nil
}

func (t *trackedBucket) Bucket(name []byte) bucketstore.Bucket {
	return t.wrap(t.b.Bucket(name))
}

func (t *trackedBucket) CreateBucket(name []byte) (bucketstore.Bucket, error) {
	c, err := t.b.CreateBucket(name)
	if err != nil {
		return nil, err
	}
	t.logCreated(name, c)
	return t.tx.handle(c, true), nil
}

func (t *trackedBucket) CreateBucketIfNotExists(name []byte) (bucketstore.Bucket, error) {
	if c := t.b.Bucket(name); c != nil {
		return t.wrap(c), nil
	}
	return t.CreateBucket(name)
}

// logCreated logs the savepoint's creation of the bucket name (c) in t.
func (t *trackedBucket) logCreated(name []byte, c *bolt.Bucket) {
	if t.logs() {
		t.tx.log.steps = append(t.tx.log.steps, undoStep{b: t.b, key: t.tx.log.key(name), op: undoDeleteBucket})
		t.tx.log.created = append(t.tx.log.created, c)
	}
}

func (t *trackedBucket) ForEach(fn func(k, v []byte) error) error { return t.b.ForEach(fn) }

func (t *trackedBucket) ForEachBucket(fn func(name []byte) error) error {
	return t.b.ForEachBucket(fn)
}

func (t *trackedBucket) NextSequence() (uint64, error) {
	if t.logs() && !t.tx.log.logged(t.b, nil, true) {
		t.tx.log.steps = append(t.tx.log.steps, undoStep{b: t.b, seq: t.b.Sequence(), op: undoSequence})
	}
	return t.b.NextSequence()
}

func (t *trackedBucket) Cursor() bucketstore.Cursor { return (*boltCursor)(t.b.Cursor()) }
