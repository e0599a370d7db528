package etcdstore

import (
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A spec's reads in few round trips. A call on a spec (task next, a claim,
// a complete) reads a dozen keys of its subtree one after the other — the
// spec's marker, its header, its sub-bucket markers, the root node, the
// phases, the first task — and on a cluster each read is a round trip. So
// the first touch of a spec's bucket (openSpec) asks for, in ONE read-only
// etcd transaction at the snapshot revision:
//
//   - the spec's marker, and the whole range [<spec>\x00, <spec>\x03) with
//     values (its header, sub-bucket markers and sequence: a few keys);
//   - in a writable transaction, its journal's sequence and the first
//     maxBatch+1 keys (keys only) of its history, which is what the
//     mutations of a batch (group commit: up to maxBatch of one spec) read
//     when they append and prune it (each prunes the oldest version left,
//     then finds the one below absent; a value then comes from the value
//     cache: this server wrote it);
//   - the keys and mod revisions of its nodes changed since this server's
//     last look (a keys-only range with a minimum mod revision, served from
//     etcd's in-memory index: a few keys, not a thousand), which with that
//     last look (a nodeSnapshot) and the range's count gives the mod revision
//     of every node at the snapshot.
//
// A node's value then comes from the value cache by its mod revision (a
// value never changes without its mod revision changing), and a node whose
// value is not cached fetches every uncached node of the spec in one more
// round trip. Everything else in the call is local. What a read records for
// the commit's guard is unchanged: the key and its mod revision at the
// snapshot (0: absent), or the whole range once it is enumerated.

// span is a key range [start, end) of a spec's subtree whose keys the
// transaction knows at its snapshot: every key present in it is in mods
// (with its mod revision), so a key absent from mods is absent. vals holds
// the values fetched with or after it (others come from the value cache).
// A nil mods is a range not listed yet (no usable nodeSnapshot): its first
// use lists it.
type span struct {
	start, end string
	mods       map[string]int64
	vals       map[string][]byte
	// fetchAll: a value missing from the cache fetches every missing value
	// of the span (the nodes: a call reads many of them), else just the one.
	fetchAll bool
	snap     *nodeSnapshot // the snapshot mods came from (nodes), or nil
	// valued: every key of mods has its value in vals. guessable: a span
	// of a write's openSpec, which a later write may take from a guess
	// (specGuesses); guessed: mods (and vals) are that guess, not a read
	// at the snapshot.
	valued, guessable, guessed bool
}

func (s *span) has(key string) bool { return key >= s.start && key < s.end }

// specRead is what one transaction has prefetched of one spec.
type specRead struct {
	path    string // the spec bucket's path
	spans   []*span
	guessed bool // its guessable spans came from a guess (specGuesses)
}

// nodeSnapshot is the keys and mod revisions of a spec's nodes as of
// revision rev, kept across transactions (nodeSnapshots): the next look
// asks only for the nodes changed after rev. Its contract, for a read at
// any revision R >= from (from >= rev): every node key present at R with a
// mod revision <= rev is in mods, with that mod revision. Never changed
// once published.
type nodeSnapshot struct {
	rev, from int64
	mods      map[string]int64
}

// usableAt reports whether a read at revision r may build on the snapshot.
func (n *nodeSnapshot) usableAt(r int64) bool { return r >= n.rev && r >= n.from }

// nodeSnapshots keeps one nodeSnapshot per spec (by its nodes range start).
type nodeSnapshots struct {
	mu sync.Mutex
	m  map[string]*nodeSnapshot
}

// maxNodeSnapshots bounds the snapshots kept; past it they start over.
const maxNodeSnapshots = 4096

func (c *nodeSnapshots) get(start string) *nodeSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[start]
}

// put publishes snap unless a newer one is there.
func (c *nodeSnapshots) put(start string, snap *nodeSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[start]; old != nil && old.rev >= snap.rev {
		return
	}
	if c.m == nil || len(c.m) >= maxNodeSnapshots {
		c.m = make(map[string]*nodeSnapshot)
	}
	c.m[start] = snap
}

// forgetDeleted drops keys a commit at revision rev deleted from the
// snapshot it read (when it is still the published one), for reads at rev
// or later: the keys are gone then, and one re-created since has a newer
// mod revision, which the next look reports as changed. (A read at an
// earlier revision may still see them, so it may not use the result.)
// Without this every deletion would make the next look count keys that
// are not there and list the whole range again.
func (c *nodeSnapshots) forgetDeleted(start string, read *nodeSnapshot, rev int64, deleted []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[start] != read {
		return
	}
	mods := make(map[string]int64, len(read.mods))
	for k, m := range read.mods {
		mods[k] = m
	}
	for _, k := range deleted {
		delete(mods, k)
	}
	c.m[start] = &nodeSnapshot{rev: read.rev, from: rev, mods: mods}
}

// specGuesses is, for each spec this server writes, what it takes the
// spec's keys that a write reads on opening it to be: its marker, its own
// keys (header, sub-bucket markers) and journal sequence with their
// values, the keys of its history's start and of its nodes, each with its
// mod revision — the last reads of a write of this server (at its
// snapshot) with the writes this server committed since (at their
// revisions). A writable transaction opens a guessed spec without a round
// trip: no read of those keys, nor of the nodes changed since the last
// look and the history's start, which etcd answers by walking every key
// of the range in its index (the deleted ones too, until the cluster is
// compacted) on the member that serves it. Node values then come from the
// value cache, as after a read. Every key read from a guess is guarded by
// its exact mod revision and counts among the transaction's guessed keys
// (the commit, checkGuesses and the prefix-wide guard compare them one
// by one; a transaction that read nothing else from the cluster is
// guarded by them and !pending's absence, as a write that read nothing):
// a guess gone stale (another server wrote the spec) fails the commit
// (errConflict), the guess is dropped, the batch runs again from the
// cluster, and the spec is not guessed for guessPause. An enumeration of
// a guessed range (spanKeys) lists it at the snapshot first, since a
// range guard cannot tell a guessed key list from the real one.
// Read-only transactions never guess. Only the batch leader (which holds
// the writer lock) takes and updates a guess, so the maps of its
// keys-only spans change in place after each commit.
type specGuesses struct {
	mu    sync.Mutex
	m     map[string]*specGuess // by the spec's path
	pause map[string]time.Time  // no guess for the spec until then
}

// specGuess is one spec's guess: its spans as a write's openSpec makes
// them.
type specGuess struct{ spans []*guessSpan }

type guessSpan struct {
	start, end string
	mods       map[string]int64
	vals       map[string][]byte // of a valued span; nil: values from the cache
	fetchAll   bool
}

// read is the spec at path as the guess has it, for one transaction.
func (g *specGuess) read(path string) *specRead {
	sp := &specRead{path: path, guessed: true}
	for _, gs := range g.spans {
		s := &span{start: gs.start, end: gs.end, mods: gs.mods, vals: make(map[string][]byte, len(gs.vals)),
			fetchAll: gs.fetchAll, valued: gs.vals != nil, guessable: true, guessed: true}
		for k, v := range gs.vals {
			s.vals[k] = v
		}
		sp.spans = append(sp.spans, s)
	}
	return sp
}

// guessPause is how long a spec whose guess failed is not guessed.
const guessPause = time.Second

// get returns the guess for the spec at path, or nil.
func (g *specGuesses) get(path string) *specGuess {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until, ok := g.pause[path]; ok {
		if time.Now().Before(until) {
			return nil
		}
		delete(g.pause, path)
	}
	return g.m[path]
}

// committed makes the guess of spec sp what its spans held with the
// writes of a commit at revision rev applied; none when a span was never
// listed, or the history's known start runs shorter than a batch's
// pruning.
func (g *specGuesses) committed(sp *specRead, rev int64, order []string, writes map[string]*[]byte) {
	next := &specGuess{}
	for _, s := range sp.spans {
		gs := s.advance(rev, order, writes)
		if gs == nil {
			g.drop(sp.path, false)
			return
		}
		next.spans = append(next.spans, gs)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, paused := g.pause[sp.path]; paused {
		return
	}
	if g.m == nil || (len(g.m) >= maxNodeSnapshots && g.m[sp.path] == nil) {
		g.m = make(map[string]*specGuess)
	}
	g.m[sp.path] = next
}

// advance is the guess of span s after a commit at revision rev of
// writes (keys in order), or nil when s cannot be guessed: not a span of
// a write's openSpec, never listed, or a history start known for fewer
// keys than a batch prunes. A guessed keys-only span's map changes in
// place (see specGuesses); the others are copied.
func (s *span) advance(rev int64, order []string, writes map[string]*[]byte) *guessSpan {
	if !s.guessable || s.mods == nil {
		return nil
	}
	mods, vals := s.guessMaps()
	s.applyWrites(mods, vals, rev, order, writes)
	if !s.fetchAll && !s.valued && s.end != clientv3.GetPrefixRangeEnd(s.start) && len(mods) <= maxBatch {
		return nil // the history's known start runs short: read it again
	}
	return &guessSpan{start: s.start, end: s.end, mods: mods, vals: vals, fetchAll: s.fetchAll}
}

// guessMaps returns the maps a guess of s starts from: its mod revisions
// (s.mods itself for a guessed keys-only span, whose map changes in
// place; else a copy, since a listing may be shared by nodeSnapshots)
// and, for a valued span, a copy of its values by those keys (else nil).
func (s *span) guessMaps() (map[string]int64, map[string][]byte) {
	mods := s.mods
	if !s.guessed || s.valued {
		mods = make(map[string]int64, len(s.mods)+8) // a listing may be shared (nodeSnapshots)
		for k, m := range s.mods {
			mods[k] = m
		}
	}
	if !s.valued {
		return mods, nil
	}
	vals := make(map[string][]byte, len(mods))
	for k := range mods {
		vals[k] = s.vals[k]
	}
	return mods, vals
}

// applyWrites applies to mods and vals (nil for a keys-only span) the
// writes (keys in order) of a commit at revision rev that fall in s: a
// delete removes the key, a put sets its mod revision to rev and its
// value.
func (s *span) applyWrites(mods map[string]int64, vals map[string][]byte, rev int64, order []string, writes map[string]*[]byte) {
	for _, k := range order {
		if !s.has(k) {
			continue
		}
		if w := writes[k]; w == nil {
			delete(mods, k)
			delete(vals, k)
		} else {
			mods[k] = rev
			if vals != nil {
				vals[k] = *w
			}
		}
	}
}

// drop forgets the guess of the spec at path, and pauses guessing it.
// The pauses are bounded as the guesses are (a pause ends only when its
// spec is opened again): past the bound they start over, which at worst
// lets a spec be guessed, and fail once more, before its second is up.
func (g *specGuesses) drop(path string, pause bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.m, path)
	if pause {
		if g.pause == nil || len(g.pause) >= maxNodeSnapshots {
			g.pause = make(map[string]time.Time)
		}
		g.pause[path] = time.Now().Add(guessPause)
	}
}

// dropGuesses forgets the guesses of the specs the transaction touched,
// and pauses those it guessed (see specGuesses).
func (t *txn) dropGuesses() {
	for _, sp := range t.specs {
		t.s.guesses.drop(sp.path, sp.guessed)
	}
}

// readOpts are the options of a read at the transaction's snapshot: none
// for the first read (linearizable; its revision becomes the snapshot),
// else that revision, served by any member without a round of consensus.
func (t *txn) readOpts(opts ...clientv3.OpOption) []clientv3.OpOption {
	if t.rev != 0 {
		opts = append(opts, clientv3.WithRev(t.rev), clientv3.WithSerializable())
	}
	return opts
}

// readTxn sends ops (all reads) in one etcd transaction, the transaction's
// first read when no revision is fixed yet. A failure aborts the
// transaction (see run).
func (t *txn) readTxn(ops []clientv3.Op) *clientv3.TxnResponse {
	if t.err != nil {
		panic(abort{})
	}
	first := t.rev == 0
	if first {
		ops = append(ops, clientv3.OpGet(t.s.pendingKey)) // see large.go
	}
	ctx, cancel := t.s.callCtx(t.ctx)
	defer cancel()
	resp, err := t.s.kv.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		t.err = err
		panic(abort{})
	}
	if first {
		t.rev = resp.Header.Revision
		last := len(resp.Responses) - 1
		t.checkPending(resp.Responses[last].GetResponseRange().Kvs)
		resp.Responses = resp.Responses[:last]
	}
	return resp
}

// specOf returns what the transaction prefetched of the spec key belongs
// to (its marker "specs\x01<id>" or a key under "specs/<id>"), or nil.
func (t *txn) specOf(key string) *specRead {
	if len(t.specs) == 0 {
		return nil
	}
	r := t.s.specsRoot
	if len(key) <= len(r) || key[:len(r)] != r || (key[len(r)] != '/' && key[len(r)] != sepBucket[0]) {
		return nil
	}
	id := key[len(r)+1:]
	for i := 0; i < len(id); i++ {
		if c := id[i]; c == '/' || c == sepKey[0] || c == sepBucket[0] || c == sepSeq[0] {
			id = id[:i]
			break
		}
	}
	return t.specs[id]
}

// cached reports whether a value the transaction puts at key is worth
// keeping in the value cache: a key of a prefetched spec that a later
// prefetch serves from there (its header and markers, nodes and history;
// not its journal, which grows with every call and is read by range).
func (t *txn) cached(key string) bool {
	if t.specOf(key) == nil {
		return false
	}
	rest := key[len(t.s.specsRoot)+1:]
	if i := strings.IndexAny(rest, "/"+sepKey+sepBucket+sepSeq); i >= 0 {
		rest = rest[i:]
	}
	return !strings.HasPrefix(rest, "/journal")
}

// openSpec prefetches the spec id (see the top of this file) once per
// transaction.
func (t *txn) openSpec(id string) {
	if _, ok := t.specs[id]; ok {
		return
	}
	p := t.s.specsRoot + "/" + id
	if g := t.specGuess(p); g != nil {
		t.specs[id] = g.read(p)
		return
	}
	marker := t.s.specsRoot + sepBucket + id
	nodes := p + "/nodes" + sepKey
	snap := t.usableSnapshot(nodes)
	ops := []clientv3.Op{
		clientv3.OpGet(marker, t.readOpts()...),
		clientv3.OpGet(p+sepKey, t.readOpts(clientv3.WithRange(p+"\x03"))...),
	}
	var seq, hist string
	if t.writable {
		seq, hist = p+"/journal"+sepSeq, p+"/history"+sepKey
		ops = append(ops,
			clientv3.OpGet(seq, t.readOpts()...),
			clientv3.OpGet(hist, t.readOpts(clientv3.WithRange(clientv3.GetPrefixRangeEnd(hist)), clientv3.WithKeysOnly(), clientv3.WithLimit(maxBatch+1))...))
	}
	if snap != nil {
		ops = append(ops, clientv3.OpGet(nodes, t.readOpts(clientv3.WithRange(clientv3.GetPrefixRangeEnd(nodes)),
			clientv3.WithKeysOnly(), clientv3.WithMinModRev(snap.rev+1))...))
	}
	resp := t.readTxn(ops)
	sp := &specRead{path: p}
	sp.spans = append(sp.spans,
		t.valuedSpan(marker, marker+"\x00", resp.Responses[0].GetResponseRange()),
		t.valuedSpan(p+sepKey, p+"\x03", resp.Responses[1].GetResponseRange()))
	if t.writable {
		sp.spans = append(sp.spans,
			t.valuedSpan(seq, seq+"\x00", resp.Responses[2].GetResponseRange()),
			historySpan(hist, resp.Responses[3].GetResponseRange()))
	}
	ns := &span{start: nodes, end: clientv3.GetPrefixRangeEnd(nodes), vals: map[string][]byte{}, fetchAll: true, guessable: t.writable}
	// A first (linearizable) read never answers a revision older than one
	// already seen; the check keeps a snapshot from the future out anyway.
	if snap != nil && snap.usableAt(t.rev) {
		ns.mods, ns.snap = t.mergeNodes(nodes, snap, resp.Responses[len(resp.Responses)-1].GetResponseRange())
	}
	sp.spans = append(sp.spans, ns)
	t.specs[id] = sp
}

// specGuess returns the guess of the spec at path for a writable
// transaction, or nil (read-only transactions never guess).
func (t *txn) specGuess(path string) *specGuess {
	if !t.writable {
		return nil
	}
	return t.s.guesses.get(path)
}

// usableSnapshot returns the node snapshot of the nodes range starting at
// nodes, or nil when there is none or it is newer than the transaction's
// snapshot (of no use to it). Before the first read (t.rev == 0) any
// snapshot is returned; openSpec checks it again at the revision read.
func (t *txn) usableSnapshot(nodes string) *nodeSnapshot {
	snap := t.s.snaps.get(nodes)
	if snap != nil && t.rev != 0 && !snap.usableAt(t.rev) {
		return nil // newer than this transaction's snapshot: of no use to it
	}
	return snap
}

// valuedSpan is the span [start, end) with the keys, values (an empty
// value for a nil one) and mod revisions r listed, which it also puts in
// the value cache. Guessable in a writable transaction.
func (t *txn) valuedSpan(start, end string, r *etcdserverpb.RangeResponse) *span {
	s := &span{start: start, end: end, mods: map[string]int64{}, vals: map[string][]byte{}, valued: true, guessable: t.writable}
	for _, kv := range r.Kvs {
		k, v := string(kv.Key), kv.Value
		if v == nil {
			v = []byte{}
		}
		s.mods[k], s.vals[k] = kv.ModRevision, v
		t.s.vals.put(k, kv.ModRevision, v)
	}
	return s
}

// historySpan is the keys-only span of the history under hist with the
// keys and mod revisions r listed. r is limited (maxBatch+1 keys): when
// it has more, the span ends after the last key returned, the part of
// the history known.
func historySpan(hist string, r *etcdserverpb.RangeResponse) *span {
	s := &span{start: hist, end: clientv3.GetPrefixRangeEnd(hist), mods: map[string]int64{}, vals: map[string][]byte{}, guessable: true}
	for _, kv := range r.Kvs {
		s.mods[string(kv.Key)] = kv.ModRevision
	}
	if r.More {
		s.end = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00" // known up to the last key returned
	}
	return s
}

// mergeNodes applies the nodes changed since snap (keys and mod revisions
// newer than snap.rev) and publishes the result as of the snapshot. nil
// when the range's count shows keys were deleted since (which a minimum
// mod revision cannot report): the range is then listed in full on first
// use.
func (t *txn) mergeNodes(start string, snap *nodeSnapshot, changed *etcdserverpb.RangeResponse) (map[string]int64, *nodeSnapshot) {
	mods := snap.mods
	if len(changed.Kvs) > 0 {
		mods = make(map[string]int64, len(snap.mods)+len(changed.Kvs))
		for k, m := range snap.mods {
			mods[k] = m
		}
		for _, kv := range changed.Kvs {
			mods[string(kv.Key)] = kv.ModRevision
		}
	}
	// Every key present now is in mods (unchanged since snap.rev, or
	// changed after it), so equal counts mean no key of mods was deleted.
	if int64(len(mods)) != changed.Count {
		return nil, nil
	}
	now := &nodeSnapshot{rev: t.rev, from: t.rev, mods: mods}
	t.s.snaps.put(start, now)
	return mods, now
}

// list reads the keys and mod revisions of a span not listed yet, and
// publishes them as the spec's nodeSnapshot.
func (t *txn) list(s *span) {
	resp, _ := t.get(s.start, clientv3.WithRange(s.end), clientv3.WithKeysOnly())
	mods := make(map[string]int64, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		mods[string(kv.Key)] = kv.ModRevision
	}
	s.mods, s.snap, s.guessed = mods, &nodeSnapshot{rev: t.rev, from: t.rev, mods: mods}, false
	t.s.snaps.put(s.start, s.snap)
}

// known answers a read of key from what the transaction prefetched: ok is
// false when key is outside every span (an ordinary read then). A value
// not in the span or the value cache is fetched at the snapshot (with
// every other missing one of a fetchAll span).
func (t *txn) known(key string) (v []byte, mod int64, s *span, ok bool) {
	sp := t.specOf(key)
	if sp == nil {
		return nil, 0, nil, false
	}
	for _, s := range sp.spans {
		if !s.has(key) {
			continue
		}
		if s.mods == nil {
			t.list(s)
		}
		mod, present := s.mods[key]
		if !present {
			return nil, 0, s, true
		}
		if v, ok := s.vals[key]; ok {
			return v, mod, s, true
		}
		if v, ok := t.s.vals.get(key, mod); ok {
			return v, mod, s, true
		}
		t.fetch(s, key)
		return s.vals[key], mod, s, true
	}
	return nil, 0, nil, false
}

// fetch reads the value of key at the snapshot into the span (and the
// value cache); in a fetchAll span every value the cache lacks, in one
// round trip (fetchMissing).
func (t *txn) fetch(s *span, key string) {
	keep := func(kv *mvccpb.KeyValue) {
		k, v := string(kv.Key), kv.Value
		if v == nil {
			v = []byte{}
		}
		s.vals[k] = v
		t.s.vals.put(k, kv.ModRevision, v)
	}
	if !s.fetchAll {
		resp, _ := t.get(key)
		for _, kv := range resp.Kvs {
			keep(kv)
		}
		return
	}
	var missing []string
	for k, mod := range s.mods {
		if _, ok := s.vals[k]; ok {
			continue
		}
		if v, ok := t.s.vals.get(k, mod); ok {
			s.vals[k] = v
			continue
		}
		missing = append(missing, k)
	}
	t.fetchMissing(s.start, s.end, missing, len(s.mods), keep)
}

// spanKeys lists the present keys of a whole bucket range a span covers
// (nil, false when no span covers it), and, in a writable transaction,
// guards the range as load does: an enumeration depends on keys that are
// not there too.
func (t *txn) spanKeys(id string) ([]string, bool) {
	sp := t.specOf(id)
	if sp == nil {
		return nil, false
	}
	end := clientv3.GetPrefixRangeEnd(id)
	for _, s := range sp.spans {
		if s.start != id || s.end != end {
			continue
		}
		if s.mods == nil || s.guessed {
			t.list(s)
		}
		out := make([]string, 0, len(s.mods))
		for k := range s.mods {
			out = append(out, k)
		}
		t.ranges[id] = end
		return out, true
	}
	return nil, false
}
