// Package etcdstore is specd's store on an etcd v3 cluster: the same port as
// core/store (bucketstore.Store), the same buckets and keys under a prefix (several workspaces or teams share one
// cluster), the same answers and error codes, for several specd servers in
// front of one replicated store.
//
// Every mutation is one etcd transaction: its reads are served at one
// revision, its writes are buffered, and the commit compares the mod
// revisions of everything it read (a spec's nodes and history as ranges, its
// header, journal sequence and index keys as points). A lost race (one of
// them changed) re-runs the whole mutation from a fresh read, at most
// MaxRetries times, then answers CONFLICT: a change the mutation did not see
// is never written over, and next(claim) is atomic across every server. A
// mutation beyond one transaction of the cluster (MaxTxnOps operations,
// MaxRequestBytes bytes: etcd's defaults are 128 and 1.5 MiB) commits as a
// redo log — staged, switched in by one small guarded transaction, applied
// — and no reader ever sees it half applied (large.go); only a single value
// larger than one request answers PAYLOAD_TOO_LARGE, before anything is
// visible. An unreachable cluster or one without quorum answers
// UNAVAILABLE with retry_after_ms after at most RequestTimeout (or the
// caller's deadline, when that comes first), and the next call tries again
// (the client reconnects by itself). RequestTimeout bounds a whole store
// operation (waiting for this process's other writer, the meta keys, every
// read, the commit and its retries), not each round trip in it.
package etcdstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
)

// SchemaVersion is the layout version this build writes (core/store's).
const SchemaVersion = bucketstore.SchemaVersion

// The meta bucket and its keys (bucketstore's layout).
var (
	metaBucket       = string(bucketstore.MetaBucket)
	keySchemaVersion = string(bucketstore.KeySchemaVersion)
	keyInstallID     = string(bucketstore.KeyInstallID)
	keyCreatedAt     = string(bucketstore.KeyCreatedAt)
)

// Defaults.
const (
	DefaultDialTimeout     = 3 * time.Second
	DefaultRequestTimeout  = 3 * time.Second
	DefaultMaxTxnOps       = 128         // etcd's --max-txn-ops default
	DefaultMaxRequestBytes = 1536 * 1024 // etcd's --max-request-bytes default
	DefaultMaxRetries      = 32          // lost races re-run at most this often
	requestOverhead        = 4 * 1024    // margin for gRPC framing
	unavailableRetryMS     = 1000        // retry_after_ms of UNAVAILABLE
	conflictRetryMS        = 50          // retry_after_ms of CONFLICT after MaxRetries
)

// Options configure a Store. Zero values take the defaults.
type Options struct {
	Endpoints []string // host:port of the cluster's members
	Prefix    string   // key prefix of this store (e.g. "/specd/team-a")
	TLS       *tls.Config
	Username  string // etcd auth (with Password)
	Password  string
	// DialTimeout bounds the first connection; RequestTimeout every store
	// operation as a whole (within the caller's own deadline): a view or an
	// update, with every round trip and retry in it, answers by then.
	DialTimeout, RequestTimeout time.Duration
	// MaxTxnOps and MaxRequestBytes are the cluster's --max-txn-ops and
	// --max-request-bytes (default: etcd's defaults): a mutation beyond
	// them commits in several transactions as a redo log (large.go), still
	// atomically for readers; a cluster that refuses a transaction as too
	// large makes the mutation take that path too.
	MaxTxnOps       int
	MaxRequestBytes int
	MaxRetries      int
	// Logger, Now and NewID: see bucketstore.EngineOptions.
	bucketstore.EngineOptions
	// Client, when set, is used instead of dialling Endpoints (tests, or a
	// caller that shares one client); Close leaves it open.
	Client *clientv3.Client
}

// Store is the etcd store: the store port (bucketstore.Store), its
// transactions run as guarded etcd transactions. It is safe for concurrent
// use.
type Store struct {
	opts   Options
	log    *slog.Logger
	cli    *clientv3.Client
	kv     clientv3.KV
	owned  bool
	root   string // Prefix + "/"
	closed atomic.Bool
	rev    atomic.Int64 // newest revision seen by a commit or a watch

	// wmu is one writer per process: local writers queue instead of racing.
	// A buffered channel (cap 1) rather than a mutex, so a writer waits for
	// it only as long as its operation's budget (lock).
	wmu chan struct{}
	// qmu guards queue, the updates waiting for the next batch (update).
	qmu   sync.Mutex
	queue []*writeReq

	metaMu    chan struct{} // guards installID; cap 1, as wmu
	installID string

	stampOnce sync.Once          // starts the change watch of ChangeStamp
	stampRev  atomic.Int64       // newest spec change revision that watch saw
	stampLive atomic.Bool        // that watch is established on the cluster
	stopStamp context.CancelFunc // ends that watch (Close)
	wakers    wakeSet            // the ChangeNotify feeds that watch wakes

	vals valueCache // stored values by key and mod revision (kv.go)
	// pointVals is what point reads outside the specs last found, which
	// writable transactions read without a round trip (pointCache, kv.go).
	pointVals pointCache
	snaps     nodeSnapshots // spec nodes' keys and mod revisions (spans.go)
	guesses   specGuesses   // what writes take them to be (spans.go)
	// specsRoot is root + "specs", the specs bucket's path.
	specsRoot string
	// pendingKey is root + "!pending", the commit point of a change
	// larger than one transaction (large.go).
	pendingKey string
	// afterStage and afterSwitch, when set (tests), run after a large
	// change's staging and after its switch; an error ends the commit
	// there, as a crash would.
	afterStage, afterSwitch func() error
	// stagedAge holds the cluster revisions this server saw, and when by
	// its own clock, to judge the age of staged sets (large.go).
	stagedAge revisionMarks
}

// Open connects to the cluster (without waiting for it: the first call
// does, and answers UNAVAILABLE if it is unreachable).
func Open(opts Options) (*Store, error) {
	if opts.Client == nil && len(opts.Endpoints) == 0 {
		return nil, errors.New("etcdstore: no endpoints")
	}
	p := "/" + strings.Trim(opts.Prefix, "/")
	if p == "/" {
		p = "/specd"
	}
	opts.Prefix = p
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = DefaultDialTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	opts.EngineOptions = opts.EngineOptions.WithDefaults()
	s := &Store{opts: opts, log: opts.Logger, root: p + "/", specsRoot: p + "/specs", pendingKey: p + "/" + pendingName,
		wmu: make(chan struct{}, 1), metaMu: make(chan struct{}, 1)}
	if opts.Client != nil {
		s.cli = opts.Client
	} else {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: opts.Endpoints, DialTimeout: opts.DialTimeout, TLS: opts.TLS,
			Username: opts.Username, Password: opts.Password,
			MaxCallSendMsgSize: opts.MaxRequestBytes + requestOverhead,
			Logger:             zap.NewNop(), // the store logs what matters through slog
		})
		if err != nil {
			return nil, fmt.Errorf("etcdstore: %w", err)
		}
		s.cli, s.owned = cli, true
	}
	s.kv = s.cli.KV
	return s, nil
}

// Path names the store: etcd://<endpoints><prefix>.
func (s *Store) Path() string {
	eps := s.opts.Endpoints
	if len(eps) == 0 && s.cli != nil {
		eps = s.cli.Endpoints()
	}
	hosts := make([]string, len(eps))
	for i, e := range eps {
		hosts[i] = strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
	}
	return "etcd://" + strings.Join(hosts, ",") + s.opts.Prefix
}

// Prefix is the store's key prefix.
func (s *Store) Prefix() string { return s.opts.Prefix }

// Client is the etcd client (for watches and tools that share it).
func (s *Store) Client() *clientv3.Client { return s.cli }

// Close ends the store; later calls answer UNAVAILABLE.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stampOnce.Do(func() {}) // no watch may start after Close
	if s.stopStamp != nil {
		s.stopStamp()
	}
	if s.owned {
		return s.cli.Close()
	}
	return nil
}

// callCtx is the budget of one store operation (or one round trip of it):
// RequestTimeout, within ctx's own deadline.
func (s *Store) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.opts.RequestTimeout)
}

// lock takes mu (a channel of capacity 1) unless op ends first. Errors:
// UNAVAILABLE when op's budget ran out while another operation of this
// process held mu (waiting on the cluster), or when the caller's deadline
// did while no member answers; else the caller's context error.
func (s *Store) lock(ctx, op context.Context, mu chan struct{}) error {
	select {
	case mu <- struct{}{}:
		return nil
	default:
	}
	select {
	case mu <- struct{}{}:
		return nil
	case <-op.Done():
		if err := ctx.Err(); err != nil {
			return s.classify(ctx, err)
		}
		return UnavailableError(fmt.Errorf("another operation of this server held the store for the whole request timeout (%s)", s.opts.RequestTimeout))
	}
}

func unlock(mu chan struct{}) { <-mu }

// connected reports whether the client has a ready connection to a member.
func (s *Store) connected() bool {
	return s.cli.ActiveConnection().GetState() == connectivity.Ready
}

func (s *Store) noteRevision(rev int64) {
	for {
		old := s.rev.Load()
		if rev <= old || s.rev.CompareAndSwap(old, rev) {
			return
		}
	}
}

// Revision is the newest cluster revision this store has seen.
func (s *Store) Revision() int64 { return s.rev.Load() }

func tooLarge(msg string, d map[string]any) *core.Error {
	return core.NewError(errcode.PayloadTooLarge, msg+" Nothing was stored: split the change (add the phases or tasks in several calls), or raise the cluster's --max-txn-ops / --max-request-bytes and specd's matching options.", d)
}

// UnavailableError is the answer while the cluster cannot serve.
func UnavailableError(cause error) *core.Error {
	d := map[string]any{"retry_after_ms": unavailableRetryMS}
	if cause != nil {
		d["cause"] = cause.Error()
	}
	return core.NewError(errcode.Unavailable, "The etcd cluster is unreachable or has no quorum; nothing was changed. Retry shortly.", d)
}

// classify turns an etcd error into the store's answer. ctx is the caller's.
func (s *Store) classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	var ou *outcomeUnknown
	if errors.As(err, &ou) {
		return outcomeUnknownError(ou.err)
	}
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !s.connected() {
			// The caller's deadline came first, but what it waited for was
			// a cluster no member of which answers: say so.
			return UnavailableError(err)
		}
		return ctx.Err()
	}
	switch {
	case errors.Is(err, rpctypes.ErrTooManyOps), errors.Is(err, rpctypes.ErrGRPCTooManyOps):
		return tooLarge("The change has more writes than the cluster allows in one transaction.", map[string]any{"max_txn_ops": s.opts.MaxTxnOps})
	case errors.Is(err, rpctypes.ErrRequestTooLarge), errors.Is(err, rpctypes.ErrGRPCRequestTooLarge),
		strings.Contains(err.Error(), "request is too large"), strings.Contains(err.Error(), "larger than max"):
		return tooLarge("The change is larger than the cluster accepts in one request.", map[string]any{"max_request_bytes": s.opts.MaxRequestBytes})
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		return core.Internal(err) // a request the cluster refuses as such: retrying will not help
	}
	return UnavailableError(err)
}

// outcomeUnknown is a commit whose request may have reached the cluster
// but whose answer did not come back (timeout, lost connection, a crash
// after the switch of a large change): it may or may not be applied, so
// it is neither retried nor re-run.
type outcomeUnknown struct{ err error }

func (e *outcomeUnknown) Error() string {
	return "etcdstore: the commit's outcome is unknown: " + e.err.Error()
}
func (e *outcomeUnknown) Unwrap() error { return e.err }

// outcomeUnknownError is the answer to a commit whose outcome is unknown.
// UNAVAILABLE, whose next call (core.NoNextCall) is the caller's: re-read
// before retrying, since the change may already be there.
func outcomeUnknownError(cause error) *core.Error {
	d := map[string]any{"retry_after_ms": unavailableRetryMS, "outcome": "unknown"}
	if cause != nil {
		d["cause"] = cause.Error()
	}
	return core.NewError(errcode.Unavailable, "The etcd cluster did not answer the commit; the change may or may not have been committed. Re-read what it changes before retrying.", d)
}

// refusedUnapplied reports whether a commit's error proves etcd applied
// nothing: a request it refuses as such (too large, too many operations,
// invalid, not permitted) before proposing it.
func refusedUnapplied(err error) bool {
	if tooManyForCluster(err) {
		return true
	}
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		return true
	}
	return false
}

// commitErr is the error of a commit that etcd answered with err: as is
// when it proves nothing was applied, else an outcomeUnknown.
func commitErr(err error) error {
	if refusedUnapplied(err) {
		return err
	}
	return &outcomeUnknown{err: err}
}

func retryable(err error) bool {
	return errors.Is(err, errConflict) || errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, rpctypes.ErrGRPCCompacted) ||
		errors.Is(err, rpctypes.ErrFutureRev) || errors.Is(err, rpctypes.ErrGRPCFutureRev)
}

// view runs fn over one snapshot of the store. Errors: fn's, UNAVAILABLE,
// the context's.
func (s *Store) view(ctx context.Context, fn func(*txn) error) error {
	if s.closed.Load() {
		return core.NewError(errcode.Unavailable, "The store is closed; the server is shutting down.", nil)
	}
	op, cancel := s.callCtx(ctx)
	defer cancel()
	if err := s.meta(ctx, op); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		t := s.newTxn(op, false)
		err := t.run(fn)
		if t.err == nil {
			return err // fn's own answer
		}
		if pe, ok := t.err.(*pendingError); ok && attempt < s.opts.MaxRetries {
			if err := s.rollForward(op, pe); err != nil {
				return s.classify(ctx, err)
			}
			continue
		}
		if retryable(t.err) && attempt < s.opts.MaxRetries {
			time.Sleep(time.Duration(attempt) * time.Millisecond) // a member catching up on the revision
			continue
		}
		return s.classify(ctx, t.err)
	}
}

// update runs fn and commits its writes in one etcd transaction guarded by
// the mod revisions of what it read; a lost race re-runs fn from a fresh
// read. An error from fn (or a passed deadline) commits nothing. Errors:
// fn's, CONFLICT (still losing after MaxRetries), PAYLOAD_TOO_LARGE (one
// value beyond a request), UNAVAILABLE, the context's.
//
// Concurrent updates of this process share commits (group commit): each
// queues its fn, and whichever caller takes the writer lock starts a
// goroutine (lead) that runs every queued fn, in order, in one transaction
// (runBatch) — each still sees the writes of those before it and checks
// its guards against them, and one whose fn fails is rolled back to where
// it started, alone — then commits them all in one etcd transaction: one
// round trip of consensus for the batch instead of one per write. Each
// caller answers once its batch committed.
//
// Deadlines. A caller's budget (RequestTimeout within its context) bounds
// its own wait, never the others' work:
//   - when it ends before the caller's fn has started (queued, or taken
//     into a batch but not reached), the caller leaves at once with its
//     deadline's answer (the context's error, or UNAVAILABLE when the
//     cluster is what it waited for), and when it ends while the fn runs,
//     as soon as the fn returns (the fn may still be using the caller's
//     variables): its fn's writes are never committed, in this attempt or
//     a retry;
//   - when it ends after the fn was taken into the commit, the caller
//     answers at once that the outcome is unknown (UNAVAILABLE, outcome
//     "unknown": re-read before retrying), and the batch takes no further
//     fn, committing what it holds;
//   - the batch itself runs until the latest of its callers' budgets, so
//     no caller's deadline cuts another's reads or commit.
//
// A commit whose outcome is unknown is answered as such and never re-run.
func (s *Store) update(ctx context.Context, fn func(*txn) error) error {
	if s.closed.Load() {
		return core.NewError(errcode.Unavailable, "The store is closed; the server is shutting down.", nil)
	}
	op, cancel := s.callCtx(ctx)
	defer cancel()
	if err := s.meta(ctx, op); err != nil {
		return err
	}
	req := &writeReq{ctx: ctx, op: op, fn: fn, done: make(chan error, 1)}
	s.qmu.Lock()
	s.queue = append(s.queue, req)
	s.qmu.Unlock()
	for {
		select {
		case err := <-req.done:
			return req.answer(err)
		case s.wmu <- struct{}{}:
			go s.lead()
		case <-op.Done():
			return s.leave(req)
		}
	}
}

// answer returns err, the answer of req's batch, in its caller's
// goroutine: a fnPanic panics there, as without batching.
func (req *writeReq) answer(err error) error {
	if p, ok := err.(*fnPanic); ok {
		panic(p.v)
	}
	return err
}

// leave answers a caller whose budget ended before its answer came (see
// Deadlines at update).
func (s *Store) leave(req *writeReq) error {
	s.withdraw(req)
	switch {
	case req.state.CompareAndSwap(reqQueued, reqLeft), req.state.CompareAndSwap(reqRunning, reqLeft):
		req.awaitFn() // a fn under way may still write the caller's variables
		if err := req.ctx.Err(); err != nil {
			return s.classify(req.ctx, err)
		}
		return UnavailableError(fmt.Errorf("another operation of this server held the store for the whole request timeout (%s)", s.opts.RequestTimeout))
	case req.state.CompareAndSwap(reqKept, reqLeft):
		cause := req.op.Err()
		if err := req.ctx.Err(); err != nil {
			cause = err
		}
		return outcomeUnknownError(cause)
	}
	return req.answer(<-req.done) // answered meanwhile
}

// lead runs the queued updates as one batch; the caller holds the writer
// lock, which lead releases. A panic outside any fn (a bug) is re-raised
// in the goroutine of one caller still waiting; the others of the batch
// answer INTERNAL.
func (s *Store) lead() {
	defer unlock(s.wmu)
	s.qmu.Lock()
	batch := s.queue
	s.queue = nil
	if len(batch) > maxBatch {
		s.queue = batch[maxBatch:]
		batch = batch[:maxBatch]
	}
	s.qmu.Unlock()
	if len(batch) == 0 {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			var p error = &fnPanic{v: v}
			for _, r := range batch {
				if r.finish(p) {
					p = core.Internal(errors.New("etcdstore: the shared commit was interrupted"))
				}
			}
		}
	}()
	s.runBatch(batch)
}

// fnPanic carries a panic of an update's fn to its caller (update panics
// with v in the caller's goroutine).
type fnPanic struct{ v any }

func (p *fnPanic) Error() string { return fmt.Sprintf("panic: %v", p.v) }

// callFn runs r's fn over t, turning a panic of fn (but a failed read's
// abort, which ends the whole batch) into a fnPanic.
func callFn(r *writeReq, t *txn) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(abort); ok {
				panic(v)
			}
			err = &fnPanic{v: v}
		}
	}()
	return r.fn(t)
}

// runHeld runs r's fn over t (callFn) holding r.running, unless its caller
// left first (ran false). A failed read's abort passes through, r.running
// released.
func runHeld(r *writeReq, t *txn) (ran bool, err error) {
	r.running.Lock()
	defer r.running.Unlock()
	if !r.state.CompareAndSwap(reqQueued, reqRunning) && !r.state.CompareAndSwap(reqKept, reqRunning) {
		return false, nil
	}
	return true, callFn(r, t)
}

// maxBatch bounds the updates one commit carries.
const maxBatch = 64

// The states of a writeReq. The batch moves it queued → running → kept
// (its fn's writes are in the transaction), or back to queued when the fn
// failed (a retry runs it again), and to answered; its caller moves it to
// left when its budget ends first (leave). Whoever moves it first decides.
const (
	reqQueued   int32 = iota // its fn has not run in this attempt, or failed
	reqRunning               // its fn runs
	reqKept                  // its writes are in the transaction
	reqAnswered              // answered (done holds the answer)
	reqLeft                  // its caller left: nothing of it is committed
)

// writeReq is one queued update: its caller's context and budget, its fn,
// its state, and where its answer goes.
type writeReq struct {
	ctx, op context.Context
	fn      func(*txn) error
	state   atomic.Int32
	done    chan error
	// running is held while fn runs (taken before the move to running), so
	// a caller that leaves meanwhile waits until fn has returned.
	running sync.Mutex
}

// awaitFn returns once r's fn is not running (running is free).
func (r *writeReq) awaitFn() {
	r.running.Lock()
	defer r.running.Unlock()
}

// finish answers r with err unless its caller left or it was answered;
// it reports whether it did.
func (r *writeReq) finish(err error) bool {
	for {
		st := r.state.Load()
		if st == reqLeft || st == reqAnswered {
			return false
		}
		if r.state.CompareAndSwap(st, reqAnswered) {
			r.done <- err
			return true
		}
	}
}

// withdraw takes req out of the queue; false when a batch took it first.
func (s *Store) withdraw(req *writeReq) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for i, r := range s.queue {
		if r == req {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			return true
		}
	}
	return false
}

// runBatch runs the fns of batch in one transaction and commits them
// together (see update), answering each request. A lost race re-runs the
// batch from a fresh read; an error that proves nothing was applied and
// that retrying will not cure, in a batch of several, commits each request
// alone, so no request fails for another's sake. A commit whose outcome is
// unknown (outcomeUnknown) is never re-run: every request is answered
// that it may or may not have been committed.
func (s *Store) runBatch(batch []*writeReq) {
	// The batch's budget ends with its latest caller's; no caller's
	// deadline or cancellation ends it for the others (each leaves by its
	// own: see Deadlines at update).
	op, cancel := context.WithDeadline(context.WithoutCancel(batch[0].op), maxDeadline(batch))
	defer cancel()
	results := make([]error, len(batch))
	for attempt := 0; ; attempt++ {
		t := s.newTxn(op, true)
		var live int
		batch, live = s.runFns(t, batch, results)
		results = results[:len(batch)]
		err := t.settle(live)
		if err == nil {
			s.answer(batch, results, nil)
			return
		}
		if pe, ok := err.(*pendingError); ok && attempt < s.opts.MaxRetries {
			if err := s.rollForward(op, pe); err != nil {
				s.answer(batch, results, err)
				return
			}
			continue
		}
		if retryable(err) {
			if attempt >= s.opts.MaxRetries {
				for _, r := range batch {
					r.finish(core.NewError(errcode.Conflict, "The store kept changing under this call (other servers wrote the same spec); nothing was changed. Retry.",
						map[string]any{"retry_after_ms": conflictRetryMS, "attempts": attempt + 1}))
				}
				return
			}
			time.Sleep(time.Duration(rand.IntN(1+attempt*2)) * time.Millisecond)
			continue
		}
		var ou *outcomeUnknown
		if len(batch) > 1 && !errors.As(err, &ou) {
			for _, r := range batch {
				r.state.CompareAndSwap(reqKept, reqQueued) // nothing was applied: run it again, alone
				s.runBatch([]*writeReq{r})
			}
			return
		}
		s.answer(batch, results, err)
		return
	}
}

// answer finishes every request of batch: each with err as its caller
// is told it (see classify) when err is not nil, else each with its own
// fn's result (results, by position in batch).
func (s *Store) answer(batch []*writeReq, results []error, err error) {
	for i, r := range batch {
		if err != nil {
			r.finish(s.classify(r.ctx, err))
		} else {
			r.finish(results[i])
		}
	}
}

// settle ends a batch's transaction t once its fns ran, live of them
// with their writes in t: t's error when it failed; else the commit of
// its writes when a live fn left any; else, every fn failed or none wrote
// anything, so nothing commits to guard what they read, the check that
// their guesses were current (checkGuesses).
func (t *txn) settle(live int) error {
	if t.err != nil {
		return t.err
	}
	if live > 0 && len(t.writes) > 0 {
		return t.commit()
	}
	return t.checkGuesses()
}

// runFns runs the fns of batch over t in order, each from its own
// savepoint, setting each one's result (see update). It returns the batch
// it ran — shorter when it closed early (closing), the rest back in the
// queue — and how many of them have their writes in t. A failed read that
// ends t inside a fn leaves that request to run again.
func (s *Store) runFns(t *txn, batch []*writeReq, results []error) ([]*writeReq, int) {
	var kept []*writeReq
	var room usage // the most one fn of the batch added to t so far
	_ = t.run(func(t *txn) error {
		for i, r := range batch {
			// The batch also closes when one more fn like those before
			// might not fit one transaction: the rest wait for the next.
			if closing(kept) || (len(kept) > 0 && !t.fitsOne(room)) {
				s.requeue(batch[i:])
				batch = batch[:i]
				break
			}
			results[i] = nil
			mark, before := t.savepoint(), t.usage()
			ran, err := runHeld(r, t)
			if !ran {
				continue // its caller left
			}
			if err == nil {
				err = r.op.Err() // the budget ended while fn ran: nothing is kept
			}
			if err == nil && len(kept) > 0 && !t.fitsOne(usage{}) {
				// Its writes would take the batch past one transaction:
				// it runs again, first, in the next batch.
				t.rollbackTo(mark)
				r.state.CompareAndSwap(reqRunning, reqQueued)
				s.requeue(batch[i:])
				batch = batch[:i]
				break
			}
			room = room.grown(before, t.usage())
			if err == nil && r.state.CompareAndSwap(reqRunning, reqKept) {
				kept = append(kept, r)
				continue
			}
			t.rollbackTo(mark)
			r.state.CompareAndSwap(reqRunning, reqQueued)
			results[i] = err
		}
		return nil
	})
	for _, r := range batch {
		r.state.CompareAndSwap(reqRunning, reqQueued) // its fn met a failed read
	}
	return batch, len(kept)
}

// closing reports whether the budget of a caller whose writes the
// transaction holds has ended: the batch then takes no further fn.
func closing(kept []*writeReq) bool {
	for _, r := range kept {
		if r.op.Err() != nil {
			return true
		}
	}
	return false
}

// requeue puts the requests of rest that still wait back at the head of
// the queue, for the next batch. None of them ran in this attempt: one
// kept by an earlier attempt of the batch (which committed nothing) waits
// again.
func (s *Store) requeue(rest []*writeReq) {
	var back []*writeReq
	for _, r := range rest {
		if r.state.CompareAndSwap(reqKept, reqQueued) || r.state.Load() == reqQueued {
			back = append(back, r)
		}
	}
	s.qmu.Lock()
	s.queue = append(back, s.queue...)
	s.qmu.Unlock()
}

// maxDeadline is the latest deadline of the batch's budgets (every budget
// has one: RequestTimeout).
func maxDeadline(batch []*writeReq) time.Time {
	var out time.Time
	for _, r := range batch {
		if d, ok := r.op.Deadline(); ok && d.After(out) {
			out = d
		}
	}
	return out
}

// ensureMeta writes the meta keys (schema version, install id, creation
// time) on first use of an empty prefix, and refuses a newer schema, in at
// most RequestTimeout (within ctx's deadline).
func (s *Store) ensureMeta(ctx context.Context) error {
	op, cancel := s.callCtx(ctx)
	defer cancel()
	return s.meta(ctx, op)
}

// meta is ensureMeta within an operation's budget op (derived from the
// caller's ctx, which decides how errors are answered).
func (s *Store) meta(ctx, op context.Context) error {
	if err := s.lock(ctx, op, s.metaMu); err != nil {
		return err
	}
	defer unlock(s.metaMu)
	if s.installID != "" {
		return nil
	}
	k := func(name string) string { return s.root + metaBucket + sepKey + name }
	id := s.opts.NewID()
	now := s.opts.Now().UTC().Format(time.RFC3339)
	_, err := s.kv.Txn(op).If(clientv3.Compare(clientv3.CreateRevision(k(keyInstallID)), "=", 0)).
		Then(clientv3.OpPut(k(keyInstallID), id), clientv3.OpPut(k(keySchemaVersion), strconv.Itoa(SchemaVersion)), clientv3.OpPut(k(keyCreatedAt), now)).
		Commit()
	if err != nil {
		return s.classify(ctx, err)
	}
	resp, err := s.kv.Get(op, s.root+metaBucket+sepKey, clientv3.WithPrefix())
	if err != nil {
		return s.classify(ctx, err)
	}
	vals := map[string]string{}
	for _, kv := range resp.Kvs {
		vals[strings.TrimPrefix(string(kv.Key), s.root+metaBucket+sepKey)] = string(kv.Value)
	}
	v, _ := strconv.Atoi(vals[keySchemaVersion])
	if v >= lazyFrom && v < SchemaVersion {
		if v, err = s.markSchema(op, k(keySchemaVersion), vals[keySchemaVersion]); err != nil {
			return s.classify(ctx, err)
		}
	}
	if v > SchemaVersion {
		return newerSchemaError(v)
	}
	s.installID = vals[keyInstallID]
	s.noteRevision(resp.Header.Revision)
	return nil
}

// lazyFrom is the oldest layout this build takes over without a migration
// step: from layout 2 on, what a newer layout changes is converted lazily
// by the writes themselves (layout 3: a node's children move into chunks
// on its next write, specs/specstore).
const lazyFrom = 2

// markSchema records this build's layout in the schema key (whose stored
// value is old) before this server reads or writes anything else, as
// bbolt's open does to a file: a server of an older layout that starts
// afterwards refuses the store ("Upgrade specd") instead of reading what
// this build writes as damaged. (One already running read the meta before
// and does not look again: stop older servers before starting this one.)
// The put is guarded on the value still being old; it answers the layout
// stored afterwards (another server's, when one changed it first).
func (s *Store) markSchema(op context.Context, key, old string) (int, error) {
	resp, err := s.kv.Txn(op).If(clientv3.Compare(clientv3.Value(key), "=", old)).
		Then(clientv3.OpPut(key, strconv.Itoa(SchemaVersion))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return 0, err
	}
	s.noteRevision(resp.Header.Revision)
	if resp.Succeeded {
		s.log.Info("etcdstore: the store's layout is now this build's", "from", old, "to", SchemaVersion)
		return SchemaVersion, nil
	}
	var v int
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		v, _ = strconv.Atoi(string(kvs[0].Value))
	}
	return v, nil
}

// newerSchemaError is UNAVAILABLE for a store of a newer layout.
func newerSchemaError(v int) *core.Error {
	return core.NewError(errcode.Unavailable, fmt.Sprintf("The store has schema version %d; this specd understands up to %d. Upgrade specd.", v, SchemaVersion),
		map[string]any{"schema_version": v, "supported": SchemaVersion})
}

// Info reads the store's identity; SizeBytes is the cluster's database
// size as the first reachable member reports it. UNAVAILABLE when the
// cluster cannot serve.
func (s *Store) Info(ctx context.Context) (bucketstore.Info, error) {
	info := bucketstore.Info{Path: s.Path(), SchemaVersion: SchemaVersion}
	op, cancel := s.callCtx(ctx)
	defer cancel()
	if err := s.meta(ctx, op); err != nil {
		return info, err
	}
	info.InstallID = s.metaInstallID()
	for _, ep := range s.cli.Endpoints() {
		if st, err := s.cli.Status(op, ep); err == nil {
			info.SizeBytes = st.DbSize
			break
		}
	}
	return info, nil
}

// metaInstallID is the install id meta read ("" before).
func (s *Store) metaInstallID() string {
	s.metaMu <- struct{}{}
	defer unlock(s.metaMu)
	return s.installID
}

// InstallID is this store's stable UUID, created on first use: the meta
// keys only (no member status, unlike Info), in at most RequestTimeout
// within ctx's deadline.
func (s *Store) InstallID(ctx context.Context) (string, error) {
	if err := s.ensureMeta(ctx); err != nil {
		return "", err
	}
	return s.metaInstallID(), nil
}

// CheckWritable proves the cluster has quorum without changing anything: a
// linearizable read (which needs a leader and a quorum) of the meta keys.
// UNAVAILABLE when it cannot serve.
func (s *Store) CheckWritable(ctx context.Context) error {
	if s.closed.Load() {
		return core.NewError(errcode.Unavailable, "The store is closed; the server is shutting down.", nil)
	}
	op, cancel := s.callCtx(ctx)
	defer cancel()
	if err := s.meta(ctx, op); err != nil {
		return err
	}
	_, err := s.kv.Get(op, s.root+metaBucket+sepKey+keyInstallID)
	return s.classify(ctx, err)
}

// Check verifies the store answers and its meta is readable (etcd checks
// its own consistency: `etcdctl check datascale`, hash-kv between members).
func (s *Store) Check(ctx context.Context) error {
	return s.view(ctx, func(t *txn) error {
		if t.Bucket([]byte(metaBucket)).Get([]byte(keyInstallID)) == nil {
			return errors.New("etcdstore: no install id")
		}
		return nil
	})
}

var _ bucketstore.Store = (*Store)(nil)

// View runs fn over one consistent snapshot (one revision) of the store.
func (s *Store) View(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.view(ctx, func(t *txn) error { return fn(t) })
}

// Update runs fn in one guarded transaction: its commit compares what fn
// read, and a lost race re-runs fn from a fresh read (at most MaxRetries
// times, then CONFLICT); nothing of a failed fn is written.
func (s *Store) Update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.update(ctx, func(t *txn) error { return fn(t) })
}
