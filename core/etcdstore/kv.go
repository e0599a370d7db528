package etcdstore

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core/store/bucketstore"
)

// Key layout. The store keeps core/store's buckets and keys, each bucket a
// key range under the store's prefix:
//
//	<prefix>/<bucket>\x00<key>      a key of a top-level bucket
//	<prefix>/<bucket>\x01<name>     the marker of a nested bucket
//	<prefix>/<bucket>/<name>\x00<k> a key of that nested bucket (and so on)
//	<prefix>/<bucket>\x02           the bucket's sequence (NextSequence)
//
// so specs/<spec_id>/nodes/<node_id> is "<prefix>/specs/<spec_id>/nodes\x00<node_id>",
// every bucket's keys are one contiguous range in key order, and a spec's
// whole subtree is the range of "<prefix>/specs/<spec_id>/".
const (
	sepKey    = "\x00"
	sepBucket = "\x01"
	sepSeq    = "\x02"
)

// errConflict is a lost race: a key the transaction read changed before it
// committed. The store retries from a fresh read.
var errConflict = errors.New("etcdstore: a key read by the transaction changed before it committed")

// txn is one store transaction over etcd: every read is served at one
// snapshot revision (the first read's), writes are buffered, and commit is
// one etcd transaction whose compares say "nothing this transaction read
// has changed since that revision". A read-only txn commits nothing.
type txn struct {
	s        *Store
	ctx      context.Context
	writable bool

	rev    int64            // snapshot revision (0 until the first read)
	points map[string]int64 // key → mod revision seen (0: absent)
	ranges map[string]string
	vals   map[string][]byte    // values read or written (nil: absent)
	loaded map[string]bool      // bucket paths whose whole key range is in vals
	writes map[string]*[]byte   // pending puts (non-nil) and deletes (nil)
	order  []string             // write keys in first-write order
	size   int                  // bytes of the writes (an estimate: a key written twice counts twice)
	err    error                // first etcd error of a read
	specs  map[string]*specRead // specs prefetched, by id (spans.go)
	// guessed are the keys a writable transaction read from the point
	// cache (pointCache) instead of the cluster: their mod revisions are
	// in points, and the commit guards each exactly.
	guessed []string
	// applied: the commit went through as one transaction, and committed
	// recorded its writes.
	applied bool
}

func (s *Store) newTxn(ctx context.Context, writable bool) *txn {
	return &txn{s: s, ctx: ctx, writable: writable, points: map[string]int64{}, ranges: map[string]string{},
		vals: map[string][]byte{}, loaded: map[string]bool{}, writes: map[string]*[]byte{}, specs: map[string]*specRead{}}
}

func (t *txn) get(key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.rev != 0 {
		// The first read is linearizable and fixes the revision; the
		// others read that revision from whichever member answers, without
		// another round of consensus (a member that has not applied it yet
		// answers ErrFutureRev, and the transaction starts again).
		opts = append(opts, clientv3.WithRev(t.rev), clientv3.WithSerializable())
	}
	ctx, cancel := t.s.callCtx(t.ctx)
	defer cancel()
	if t.rev == 0 {
		// The first read also reads !pending at its revision (large.go).
		resp, err := t.s.kv.Txn(ctx).Then(clientv3.OpGet(key, opts...), clientv3.OpGet(t.s.pendingKey)).Commit()
		if err != nil {
			t.err = err
			panic(abort{})
		}
		t.rev = resp.Header.Revision
		t.checkPending(resp.Responses[1].GetResponseRange().Kvs)
		return (*clientv3.GetResponse)(resp.Responses[0].GetResponseRange()), nil
	}
	resp, err := t.s.kv.Get(ctx, key, opts...)
	if err != nil {
		t.err = err
		panic(abort{}) // a read that failed ends the transaction (see run)
	}
	return resp, nil
}

// abort unwinds a transaction whose read failed: bbolt-shaped callers have
// no error to return from Get, so the failure ends fn at once and run
// answers t.err instead of letting fn go on with a value that is not there.
type abort struct{}

// run calls fn over t, turning an aborted read into t.err.
func (t *txn) run(fn func(*txn) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(abort); !ok {
				panic(v)
			}
			err = t.err
		}
	}()
	return fn(t)
}

// read returns the value of key (nil: absent) as of the snapshot, with the
// transaction's own writes applied.
func (t *txn) read(key string) []byte {
	if w, ok := t.writes[key]; ok {
		if w == nil {
			return nil
		}
		return *w
	}
	if v, ok := t.vals[key]; ok {
		return v
	}
	if _, ok := t.points[key]; ok {
		return nil
	}
	if v, mod, s, ok := t.known(key); ok {
		if end, guarded := t.ranges[s.start]; !guarded || end != s.end {
			t.points[key] = mod
			if s.guessed {
				t.guessed = append(t.guessed, key) // see specGuesses
			}
		}
		if v != nil {
			t.vals[key] = v
		}
		return v
	}
	if v, ok := t.guess(key); ok {
		return v
	}
	resp, err := t.get(key)
	if err != nil {
		return nil
	}
	var v []byte
	var mod int64
	if len(resp.Kvs) == 1 {
		v, mod = resp.Kvs[0].Value, resp.Kvs[0].ModRevision
		if v == nil {
			v = []byte{}
		}
	}
	t.points[key] = mod
	if v != nil {
		t.vals[key] = v
	}
	t.s.pointVals.put(key, mod, v)
	return v
}

// guess answers a writable transaction's point read of key from the
// point cache, recording the key as guessed; ok is false when it cannot.
func (t *txn) guess(key string) (v []byte, ok bool) {
	if !t.writable {
		return nil, false
	}
	v, mod, ok := t.s.pointVals.get(key)
	if !ok {
		return nil, false
	}
	t.points[key] = mod
	t.guessed = append(t.guessed, key)
	if v != nil {
		t.vals[key] = v
	}
	return v, true
}

// pointCache holds what point reads outside the specs' spans (bucket.Get
// and NextSequence of the other buckets: the spec list's index marker,
// sequences) last found, by key: its value (nil: absent) and mod
// revision (0: absent). A writable transaction reads such a key from here
// without a round trip (guessed) and its commit guards the key's exact
// mod revision, so a guess that went stale fails the commit (errConflict:
// the guesses are dropped and the transaction re-runs from the cluster),
// and a commit that succeeds proves every guess was the key's value when
// it committed. A batch whose fns all failed, or wrote nothing, commits
// nothing, so it checks its guesses with a guard-only transaction before
// answering (checkGuesses). A read-only transaction never guesses: it reads one
// revision.
type pointCache struct {
	mu      sync.Mutex
	entries map[string]cachedValue
}

// maxPointValues bounds the point cache; past it the cache starts over.
const maxPointValues = 10_000

func (c *pointCache) get(k string) ([]byte, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e.v, e.mod, ok
}

func (c *pointCache) put(k string, mod int64, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxPointValues {
		c.entries = make(map[string]cachedValue)
	}
	c.entries[k] = cachedValue{mod: mod, v: v}
}

// update records a commit's writes at revision rev for the keys the cache
// holds (v nil: deleted).
func (c *pointCache) update(k string, rev int64, v *[]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; !ok {
		return
	}
	if v == nil {
		c.entries[k] = cachedValue{}
		return
	}
	c.entries[k] = cachedValue{mod: rev, v: *v}
}

func (c *pointCache) drop(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.entries, k)
	}
}

// guessGuards are the compares that make a commit (or checkGuesses)
// prove the transaction's guesses: each guessed key's exact mod revision,
// and no large change pending (whose writes a guess could predate; a
// transaction that read from the cluster checked !pending at its first
// read). exact adds the point guards, which the commit's own guards
// already hold when it compares every point read; pending the !pending
// guard, which a commit that read nothing from the cluster already has.
func (t *txn) guessGuards(exact, pending bool) []clientv3.Cmp {
	if len(t.guessed) == 0 {
		return nil
	}
	var cmps []clientv3.Cmp
	if pending {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(t.s.pendingKey), "=", 0))
	}
	if exact {
		for _, k := range t.guessed {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", t.points[k]))
		}
	}
	return cmps
}

// checkGuesses proves, with one guard-only transaction, that the keys the
// transaction guessed still hold what it read (errConflict, and the
// guesses dropped, when not): what its fns decided from them, though
// nothing is committed, was decided on the store as it is.
// More guesses than one transaction compares are not checked but read
// again: errConflict, the guesses dropped, and the batch re-runs.
func (t *txn) checkGuesses() error {
	if len(t.guessed) == 0 {
		return nil
	}
	refused := func(err error) error {
		t.s.pointVals.drop(t.guessed)
		t.dropGuesses()
		return err
	}
	if len(t.guessed) > t.s.maxCompares() {
		return refused(errConflict)
	}
	ctx, cancel := t.s.callCtx(t.ctx)
	defer cancel()
	resp, err := t.s.kv.Txn(ctx).If(t.guessGuards(true, true)...).Else(clientv3.OpGet(t.s.pendingKey)).Commit()
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return refused(t.s.refusedBy(resp))
	}
	return nil
}

// load reads the whole key range of a bucket (keys start with path+sep) at
// the snapshot, once per transaction. It asks for keys and mod revisions
// only, takes the values whose revision this server has cached (a value
// never changes without its mod revision changing: the cache is
// invalidated by revision), and fetches the others in one more round trip
// (all of the range when most are missing).
func (t *txn) load(path, sep string) {
	id := path + sep
	if t.loaded[id] {
		return
	}
	end := clientv3.GetPrefixRangeEnd(id)
	resp, err := t.get(id, clientv3.WithRange(end), clientv3.WithKeysOnly())
	if err != nil {
		return
	}
	var missing []string
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		if _, seen := t.vals[k]; seen {
			continue
		}
		if v, ok := t.s.vals.get(k, kv.ModRevision); ok {
			t.vals[k] = v
			continue
		}
		missing = append(missing, k)
	}
	t.fetchMissing(id, end, missing, len(resp.Kvs), func(kv *mvccpb.KeyValue) { t.keep(kv.Key, kv.Value, kv.ModRevision) })
	t.ranges[id] = end
	t.loaded[id] = true
}

// maxFetchOps bounds the point reads of one fetch (they go in one
// read-only transaction, which --max-txn-ops also limits: see fetchMissing).
const maxFetchOps = 100

// fetchMissing reads at the snapshot, in one round trip, the values of
// the keys missing of the range [start, end) (which holds total keys),
// handing each to keep: the whole range when more than a quarter of it is
// missing or the point reads would not fit one transaction (maxFetchOps,
// and the store's MaxTxnOps), else the point reads in one read-only
// transaction. A failure aborts the transaction (see run).
func (t *txn) fetchMissing(start, end string, missing []string, total int, keep func(*mvccpb.KeyValue)) {
	switch {
	case len(missing) == 0:
	case len(missing) > total/4 || len(missing) > min(maxFetchOps, t.s.opts.MaxTxnOps):
		resp, _ := t.get(start, clientv3.WithRange(end))
		for _, kv := range resp.Kvs {
			keep(kv)
		}
	default:
		ops := make([]clientv3.Op, len(missing))
		for i, k := range missing {
			ops[i] = clientv3.OpGet(k, t.readOpts()...)
		}
		for _, r := range t.readTxn(ops).Responses {
			for _, kv := range r.GetResponseRange().Kvs {
				keep(kv)
			}
		}
	}
}

// keep records a value read at the snapshot, and caches it by revision.
func (t *txn) keep(key, v []byte, mod int64) {
	k := string(key)
	if v == nil {
		v = []byte{}
	}
	if _, seen := t.vals[k]; !seen {
		t.vals[k] = v
	}
	t.s.vals.put(k, mod, v)
}

// valueCache keeps values by key and mod revision across transactions.
type valueCache struct {
	mu      sync.Mutex
	entries map[string]cachedValue
}

type cachedValue struct {
	mod int64
	v   []byte
}

// maxCachedValues bounds the cache; past it the cache starts over.
const maxCachedValues = 500_000

func (c *valueCache) get(k string, mod int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.mod != mod {
		return nil, false
	}
	return e.v, true
}

func (c *valueCache) put(k string, mod int64, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedValues {
		c.entries = make(map[string]cachedValue)
	}
	c.entries[k] = cachedValue{mod: mod, v: v}
}

// savepoint is the transaction's writes at one moment (rollbackTo).
type savepoint struct {
	writes      map[string]*[]byte
	order, size int
}

// savepoint records the writes so far, for rollbackTo.
func (t *txn) savepoint() savepoint {
	w := make(map[string]*[]byte, len(t.writes))
	for k, v := range t.writes {
		w[k] = v
	}
	return savepoint{writes: w, order: len(t.order), size: t.size}
}

// rollbackTo undoes every write since sp (what the reads recorded stays:
// a guard on a key that was read is only stricter).
func (t *txn) rollbackTo(sp savepoint) {
	t.writes, t.order, t.size = sp.writes, t.order[:sp.order], sp.size
}

func (t *txn) put(key string, v []byte) {
	cp := append([]byte{}, v...)
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = &cp
	t.size += len(key) + len(v) + 8
}

func (t *txn) del(key string) {
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = nil
	t.size += len(key) + 8
}

// keys lists the present keys of a loaded bucket range in order, the
// transaction's writes applied.
func (t *txn) keys(path, sep string) []string {
	id := path + sep
	set := map[string]bool{}
	if known, ok := t.spanKeys(id); ok {
		for _, k := range known {
			set[k] = true
		}
	} else {
		t.load(path, sep)
		for k := range t.vals {
			if len(k) >= len(id) && k[:len(id)] == id {
				set[k] = true
			}
		}
	}
	for k, w := range t.writes {
		if len(k) >= len(id) && k[:len(id)] == id {
			set[k] = w != nil
		}
	}
	out := make([]string, 0, len(set))
	for k, ok := range set {
		if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// maxCompares bounds the compares of one commit: etcd bounds a
// transaction's compares by --max-txn-ops as it bounds its writes (each
// list on its own), and a large change's switch adds three (large.go).
// Past it the guard becomes "nothing under the prefix changed" (but the
// staged chunks of large changes), which is stricter and two compares, but
// makes every member read every value under the prefix: a batch closes
// before its guard grows that far (runFns).
func (s *Store) maxCompares() int { return max(2, s.opts.MaxTxnOps-4) }

// guards is the number of compares the commit's guard has (the point and
// range guards, and !pending's), and guardBytes their size in a request.
func (t *txn) guards() (n, bytes int) {
	for k := range t.points {
		bytes += len(k) + 32
	}
	for k, e := range t.ranges {
		bytes += len(k) + len(e) + 32
	}
	return len(t.points) + len(t.ranges) + 1, bytes
}

// fitsOne reports whether the transaction's writes and guard, grown by
// room (what one more mutation may add), still go in one etcd
// transaction of the cluster, guarded point by point.
func (t *txn) fitsOne(room usage) bool {
	n, gb := t.guards()
	return n+room.guards <= t.s.maxCompares() && len(t.order)+room.writes <= t.s.opts.MaxTxnOps &&
		t.size+gb+room.bytes+requestOverhead <= t.s.opts.MaxRequestBytes
}

// usage is what a transaction holds, or what one mutation added to it:
// guards (compares), writes (operations), and their bytes.
type usage struct{ guards, writes, bytes int }

func (t *txn) usage() usage {
	n, gb := t.guards()
	return usage{guards: n, writes: len(t.order), bytes: t.size + gb}
}

// grown is the larger, field by field, of u and what the transaction
// gained since before.
func (u usage) grown(before, after usage) usage {
	return usage{guards: max(u.guards, after.guards-before.guards), writes: max(u.writes, after.writes-before.writes),
		bytes: max(u.bytes, after.bytes-before.bytes)}
}

// commit applies the buffered writes in one etcd transaction guarded by the
// mod revisions of everything read, or, when they exceed one transaction
// of the cluster, as a redo log (commitLarge). errConflict when one of
// them changed; an outcomeUnknown when etcd's answer was lost.
func (t *txn) commit() error {
	err := t.commitOnce()
	if err != nil && len(t.guessed) > 0 {
		t.s.pointVals.drop(t.guessed) // the next attempt reads them from the cluster
	}
	if err != nil || (len(t.writes) > 0 && !t.applied) {
		t.dropGuesses() // a conflict, an unknown outcome, or a large change
	}
	return err
}

// commitOnce is commit without the guesses' upkeep.
func (t *txn) commitOnce() error {
	if t.err != nil {
		return t.err
	}
	if len(t.writes) == 0 {
		return nil
	}
	cmps, err := t.commitGuards()
	if err != nil {
		return err
	}
	ops, size := t.etcdOps(cmps)
	if !t.s.fits(len(ops), size) {
		return t.commitLarge(cmps, t.ops())
	}
	ctx, cancel := t.s.callCtx(t.ctx)
	defer cancel()
	resp, err := t.s.kv.Txn(ctx).If(cmps...).Then(ops...).Else(clientv3.OpGet(t.s.pendingKey)).Commit()
	if err != nil {
		if tooManyForCluster(err) {
			// The cluster's limits are lower than the options say.
			return t.commitLarge(cmps, t.ops())
		}
		return commitErr(err)
	}
	if !resp.Succeeded {
		return t.s.refusedBy(resp)
	}
	t.s.noteRevision(resp.Header.Revision)
	t.committed(resp.Header.Revision)
	return nil
}

// commitGuards returns the compares that guard the commit of a transaction
// with writes. One that read nothing (t.rev == 0) is guarded on
// !pending's absence and each guess's exact mod revision; one that read
// is guarded by readGuards, then the guesses (see guessGuards).
// errConflict, nothing guarded, when the guesses are too many to guard
// one by one: the batch runs again, reading them from the cluster.
func (t *txn) commitGuards() ([]clientv3.Cmp, error) {
	if t.rev != 0 {
		cmps, exact, err := t.readGuards()
		if err != nil {
			return nil, err
		}
		return append(cmps, t.guessGuards(exact, true)...), nil
	}
	if len(t.guessed) > t.s.maxCompares() {
		// Too many guesses to guard one by one (nothing else can
		// guard them: nothing was read): run again, reading them
		// from the cluster.
		return nil, errConflict
	}
	// Nothing was read (so no snapshot saw !pending): the write is
	// still guarded on no change being pending, which it would
	// otherwise land under and the roll-forward overwrite.
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(t.s.pendingKey), "=", 0)}
	return append(cmps, t.guessGuards(true, false)...), nil
}

// readGuards returns the guards of what a transaction read at t.rev:
// each point read's exact mod revision and each range's "unchanged since
// t.rev", or, when those exceed one transaction's compares, the whole
// root but its staged area unchanged since t.rev. exact reports whether
// the guesses (which predate t.rev, so the root's guard does not cover
// them) must then be guarded one by one; errConflict when they are too
// many for that beside the root's guards and !pending's.
func (t *txn) readGuards() (cmps []clientv3.Cmp, exact bool, err error) {
	for k, mod := range t.points {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", mod))
	}
	for start, end := range t.ranges {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(start), "<", t.rev+1).WithRange(end))
	}
	if len(cmps) <= t.s.maxCompares() {
		return cmps, false, nil
	}
	if len(t.guessed) > 0 && len(t.guessed)+3 > t.s.maxCompares() {
		// Too many guesses to guard one by one beside the
		// prefix's guard (and !pending's, which comes with
		// them): run again, reading them from the cluster.
		return nil, false, errConflict
	}
	// The guesses predate t.rev: guard them one by one.
	p, staged := t.s.root, t.s.root+stagedName
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.ModRevision(p), "<", t.rev+1).WithRange(staged),
		clientv3.Compare(clientv3.ModRevision(clientv3.GetPrefixRangeEnd(staged)), "<", t.rev+1).WithRange(clientv3.GetPrefixRangeEnd(p)),
	}, true, nil
}

// etcdOps sorts the buffered writes' keys (t.order) and returns them as
// etcd operations in that order, with the estimated size of a
// transaction of them guarded by cmps (see Store.fits).
func (t *txn) etcdOps(cmps []clientv3.Cmp) ([]clientv3.Op, int) {
	var ops []clientv3.Op
	size := 0
	sort.Strings(t.order)
	for _, k := range t.order {
		w := t.writes[k]
		if w == nil {
			ops = append(ops, clientv3.OpDelete(k))
			size += len(k) + 8
			continue
		}
		ops = append(ops, clientv3.OpPut(k, string(*w)))
		size += len(k) + len(*w) + 8
	}
	for _, c := range cmps {
		size += len(c.KeyBytes()) + 32
	}
	return ops, size
}

// ops lists the buffered writes in key order, keys relative to the root.
func (t *txn) ops() []op {
	out := make([]op, 0, len(t.order))
	for _, k := range t.order {
		w := t.writes[k]
		o := op{key: strings.TrimPrefix(k, t.s.root), del: w == nil}
		if w != nil {
			o.val = *w
		}
		out = append(out, o)
	}
	return out
}

// committed writes the values the transaction put in its specs (those a
// prefetch serves from the value cache, see cached) through to the value
// cache at the commit's revision (the mod revision of every key it put),
// so the next call finds them there, and drops the node keys it deleted
// from the spec's nodeSnapshot.
func (t *txn) committed(rev int64) {
	t.applied = true
	for _, k := range t.order {
		t.s.pointVals.update(k, rev, t.writes[k])
	}
	for _, k := range t.order {
		if w := t.writes[k]; w != nil && t.cached(k) {
			t.s.vals.put(k, rev, *w)
		}
	}
	for _, sp := range t.specs {
		for _, s := range sp.spans {
			if s.snap == nil {
				continue
			}
			var deleted []string
			for _, k := range t.order {
				if t.writes[k] == nil && s.has(k) {
					deleted = append(deleted, k)
				}
			}
			if len(deleted) > 0 {
				t.s.snaps.forgetDeleted(s.start, s.snap, rev, deleted)
			}
		}
		if t.writable {
			t.s.guesses.committed(sp, rev, t.order, t.writes)
		}
	}
}

// bucket is a bbolt-like bucket over a key range of the transaction.
type bucket struct {
	t    *txn
	path string
}

// Bucket returns the top-level bucket name (they always exist).
func (t *txn) Bucket(name []byte) bucketstore.Bucket {
	return &bucket{t: t, path: t.s.root + string(name)}
}

func (b *bucket) marker(name []byte) string { return b.path + sepBucket + string(name) }
func (b *bucket) child(name []byte) *bucket {
	return &bucket{t: b.t, path: b.path + "/" + string(name)}
}

// open prefetches the spec name when b is the specs bucket (spans.go)
// and name can be a spec bucket's (a name with a separator of the key
// layout is left to ordinary reads, which find no such bucket).
func (b *bucket) open(name []byte) {
	if b.path == b.t.s.specsRoot && len(name) > 0 && !bytes.ContainsAny(name, "/"+sepKey+sepBucket+sepSeq) {
		b.t.openSpec(string(name))
	}
}

// Bucket returns the nested bucket name, or nil when it does not exist.
func (b *bucket) Bucket(name []byte) bucketstore.Bucket {
	b.open(name)
	if b.t.read(b.marker(name)) == nil {
		return nil
	}
	return b.child(name)
}

// CreateBucket makes the nested bucket name; an error when it exists.
func (b *bucket) CreateBucket(name []byte) (bucketstore.Bucket, error) {
	b.open(name)
	if b.t.read(b.marker(name)) != nil {
		return nil, errors.New("bucket exists")
	}
	b.t.put(b.marker(name), []byte{})
	return b.child(name), nil
}

// CreateBucketIfNotExists returns the nested bucket name, making it if needed.
func (b *bucket) CreateBucketIfNotExists(name []byte) (bucketstore.Bucket, error) {
	b.open(name)
	if b.t.read(b.marker(name)) == nil {
		b.t.put(b.marker(name), []byte{})
	}
	return b.child(name), nil
}

// Get returns the value of key or nil.
func (b *bucket) Get(key []byte) []byte {
	k := b.path + sepKey + string(key)
	if b.t.loaded[b.path+sepKey] {
		if w, ok := b.t.writes[k]; ok {
			if w == nil {
				return nil
			}
			return *w
		}
		return b.t.vals[k]
	}
	return b.t.read(k)
}

// Put stores key.
func (b *bucket) Put(key, v []byte) error {
	b.t.put(b.path+sepKey+string(key), v)
	return nil
}

// Delete removes key.
func (b *bucket) Delete(key []byte) error {
	b.t.del(b.path + sepKey + string(key))
	return nil
}

// ForEach calls fn for every key in order.
func (b *bucket) ForEach(fn func(k, v []byte) error) error {
	id := b.path + sepKey
	for _, k := range b.t.keys(b.path, sepKey) {
		if err := fn([]byte(k[len(id):]), b.t.read(k)); err != nil {
			return err
		}
	}
	return b.t.err
}

// ForEachBucket calls fn for every nested bucket name in order.
func (b *bucket) ForEachBucket(fn func(k []byte) error) error {
	id := b.path + sepBucket
	for _, k := range b.t.keys(b.path, sepBucket) {
		if err := fn([]byte(k[len(id):])); err != nil {
			return err
		}
	}
	return b.t.err
}

// NextSequence increments and returns the bucket's sequence.
func (b *bucket) NextSequence() (uint64, error) {
	k := b.path + sepSeq
	var n uint64
	if v := b.t.read(k); v != nil {
		var err error
		if n, err = strconv.ParseUint(string(v), 10, 64); err != nil {
			return 0, err
		}
	}
	n++
	b.t.put(k, []byte(strconv.FormatUint(n, 10)))
	return n, b.t.err
}

// Cursor walks the bucket's keys and nested buckets (value nil) in order,
// as bbolt's does: the whole bucket is read once, but for a top-level
// bucket in a read-only transaction, which is read a page at a time from
// where the cursor goes (pagedCursor: a page of a list costs one round
// trip, not the whole index).
func (b *bucket) Cursor() bucketstore.Cursor {
	if !b.t.writable && !strings.Contains(b.path[len(b.t.s.root):], "/") {
		return &pagedCursor{b: b}
	}
	return &cursor{b: b, i: -1}
}

// cursor is a bbolt-like cursor over a loaded bucket.
type cursor struct {
	b       *bucket
	entries []entry
	i       int
}

type entry struct {
	name, full string
	bucket     bool
}

func (c *cursor) refresh() {
	c.entries = c.entries[:0]
	for _, k := range c.b.t.keys(c.b.path, sepKey) {
		c.entries = append(c.entries, entry{name: k[len(c.b.path)+1:], full: k})
	}
	for _, k := range c.b.t.keys(c.b.path, sepBucket) {
		c.entries = append(c.entries, entry{name: k[len(c.b.path)+1:], full: k, bucket: true})
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].name < c.entries[j].name })
}

func (c *cursor) at() ([]byte, []byte) {
	if c.i < 0 || c.i >= len(c.entries) {
		return nil, nil
	}
	e := c.entries[c.i]
	if e.bucket {
		return []byte(e.name), nil
	}
	return []byte(e.name), c.b.t.read(e.full)
}

func (c *cursor) First() ([]byte, []byte) { c.refresh(); c.i = 0; return c.at() }
func (c *cursor) Last() ([]byte, []byte)  { c.refresh(); c.i = len(c.entries) - 1; return c.at() }

// Seek moves to the first key >= seek.
func (c *cursor) Seek(seek []byte) ([]byte, []byte) {
	c.refresh()
	c.i = sort.Search(len(c.entries), func(i int) bool { return c.entries[i].name >= string(seek) })
	return c.at()
}

func (c *cursor) Next() ([]byte, []byte) {
	if c.i < len(c.entries) {
		c.i++
	}
	return c.at()
}

func (c *cursor) Prev() ([]byte, []byte) {
	if c.i >= 0 {
		c.i--
	}
	return c.at()
}
