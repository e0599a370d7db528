package specstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// Spec layout (spec-model "Storage"):
//
//	specs/<spec_id>/header        the header JSON (version, lifecycle, rollups, metadata)
//	specs/<spec_id>/nodes/<id>    one key per node
//	specs/<spec_id>/journal/<seq> journal entries, seq as 8-byte big endian
//	specs/<spec_id>/journal_task/<task_id>\x00<seq>  index of entries by task
//	specs/<spec_id>/history/<v>   reverse delta of version v: the header and the
//	                              nodes as they were before v was written
//	lifecycle/<folder>\x00<id>    the lifecycle index, for listing by folder
//
// The names are the store port's (bucketstore), which both engines and the
// layout migrations share.
var (
	bucketSpecs     = bucketstore.BucketSpecs
	bucketLifecycle = bucketstore.BucketLifecycle

	keyHeader         = []byte(bucketstore.SpecHeaderKey)
	bucketNodes       = bucketstore.BucketNodes
	bucketJournal     = bucketstore.BucketJournal
	bucketJournalTask = bucketstore.BucketJournalTask // <task_id>\x00<seq> → nothing
	bucketHistory     = bucketstore.BucketHistory
)

// DefaultHistoryKeep is how many versions of history a spec keeps.
const DefaultHistoryKeep = 50

func u64(v uint64) []byte { b := make([]byte, 8); binary.BigEndian.PutUint64(b, v); return b }

// nodeSource reads a spec's nodes lazily from its nodes bucket (with their
// children's chunks, children.go), decoding each at most once per
// transaction. A node that fails to decode is recorded in err and reads as
// absent; callers check Err after the operation.
type nodeSource struct {
	b      bucketstore.Bucket
	cache  map[string]*specs.Node
	err    error
	shared *nodeCache
	specID string
	key    []byte // reused for lookups (Get keeps no key): a conversion per read would escape through the bucketstore.Bucket interface
}

// newSource reads the nodes of spec (a spec's bucket) through the
// decoded-node cache.
func (s *Repo) newSource(specID string, spec bucketstore.Bucket) *nodeSource {
	return &nodeSource{b: spec.Bucket(bucketNodes), cache: map[string]*specs.Node{}, shared: &s.nodes, specID: specID}
}

// newSource reads the nodes of spec without a cache.
func newSource(spec bucketstore.Bucket) *nodeSource {
	return &nodeSource{b: spec.Bucket(bucketNodes), cache: map[string]*specs.Node{}}
}

func (s *nodeSource) Get(id string) (*specs.Node, bool) {
	if n, ok := s.cache[id]; ok {
		return n, n != nil
	}
	v := s.raw(id)
	if v == nil {
		s.cache[id] = nil
		return nil, false
	}
	if n := s.shared.get(s.specID, id, v); n != nil {
		s.cache[id] = n
		return n, true
	}
	n, err := decodeStored(id, v, s.b)
	if err != nil {
		s.err = errors.Join(s.err, fmt.Errorf("node %s: %w", id, err))
		s.cache[id] = nil
		return nil, false
	}
	s.shared.put(s.specID, id, bytes.Clone(v), n) // v lives as long as the transaction
	s.cache[id] = n
	return n, true
}

// raw is the stored value of node id (nil: absent).
func (s *nodeSource) raw(id string) []byte {
	s.key = append(s.key[:0], id...)
	return s.b.Get(s.key)
}

// nodeCache keeps decoded nodes across transactions, keyed by spec and node
// id and validated by the stored bytes: a hit costs a byte comparison
// instead of a JSON decode, and a node changed by any process (the bytes
// differ) is decoded afresh. Cached nodes are shared read-only (the domain
// clones before editing). A nil cache is disabled.
type nodeCache struct {
	mu      sync.Mutex
	entries map[nodeKey]cachedNode
}

// nodeKey names a cached node (a struct, not a joined string: a lookup
// builds no key).
type nodeKey struct{ spec, id string }

type cachedNode struct {
	raw  []byte
	node *specs.Node
}

// headerCache keeps each spec's decoded header with its stored bytes, the
// way nodeCache keeps nodes: every mutation writes its new header through,
// so the next write's load is a byte comparison instead of a JSON decode,
// and, since the bytes written through are the header's json.Marshal, the
// next write's history record takes them as its header_before instead of
// encoding the header again. A rolled-back write's entry never matches the
// stored bytes. Headers are shared read-only.
type headerCache struct {
	mu      sync.Mutex
	entries map[string]cachedHeader
}

type cachedHeader struct {
	raw     []byte
	h       specs.Header
	encoded bool // raw is json.Marshal(h) (a stored header read back may be encoded otherwise)
}

// maxCachedHeaders bounds the header cache; past it the cache starts over.
const maxCachedHeaders = 4096

// get is the header stored as raw, when cached, and its json.Marshal when
// the cache knows it (nil otherwise; the caller must not change it).
func (c *headerCache) get(specID string, raw []byte) (h specs.Header, encoded []byte, ok bool) {
	if raw == nil {
		return specs.Header{}, nil, false
	}
	c.mu.Lock()
	e, ok := c.entries[specID]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		if e.encoded {
			encoded = e.raw
		}
		return e.h, encoded, true
	}
	return specs.Header{}, nil, false
}

// put keeps h and raw (which nobody may change afterwards: raw is not
// copied) for the stored bytes raw; encoded says that raw is
// json.Marshal(h).
func (c *headerCache) put(specID string, raw []byte, h specs.Header, encoded bool) {
	if raw == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedHeaders {
		c.entries = make(map[string]cachedHeader)
	}
	c.entries[specID] = cachedHeader{raw: raw, h: h, encoded: encoded}
}

// maxCachedNodes bounds the cache; past it the cache starts over.
const maxCachedNodes = 250_000

func (c *nodeCache) get(specID, id string, raw []byte) *specs.Node {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	e, ok := c.entries[nodeKey{specID, id}]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.node
	}
	return nil
}

// put keeps n for the stored bytes raw; both are kept as they are (raw is
// not copied): nobody may change them afterwards.
func (c *nodeCache) put(specID, id string, raw []byte, n *specs.Node) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedNodes {
		c.entries = make(map[nodeKey]cachedNode)
	}
	c.entries[nodeKey{specID, id}] = cachedNode{raw: raw, node: n}
}

func (s *nodeSource) IDs() []string {
	var out []string
	_ = s.b.ForEach(func(k, _ []byte) error {
		if !isChunkKey(k) {
			out = append(out, string(k))
		}
		return nil
	})
	return out
}

// specBucket returns the bucket of specID or SPEC_NOT_FOUND with the closest
// existing ids.
func specBucket(tx bucketstore.Tx, specID string) (bucketstore.Bucket, error) {
	if specID != "" {
		if b := tx.Bucket(bucketSpecs).Bucket([]byte(specID)); b != nil {
			return b, nil
		}
	}
	return nil, specNotFound(tx, specID)
}

func specNotFound(tx bucketstore.Tx, specID string) *core.Error {
	var ids []string
	_ = tx.Bucket(bucketSpecs).ForEachBucket(func(k []byte) error { ids = append(ids, string(k)); return nil })
	return core.NewError(errcode.SpecNotFound, fmt.Sprintf("No spec %q.", specID),
		map[string]any{"field": "spec_id", "received": specID}).
		WithStep("spec-list", nil, rankIDs(specID, ids))
}

// loadSpec returns the bucket and header of specID: SPEC_NOT_FOUND (with the
// closest ids) when absent, INTERNAL_ERROR when the header is unreadable.
func loadSpec(tx bucketstore.Tx, specID string) (bucketstore.Bucket, specs.Header, error) {
	b, err := specBucket(tx, specID)
	if err != nil {
		return nil, specs.Header{}, err
	}
	h, err := readHeader(b)
	if err != nil {
		return nil, specs.Header{}, core.Internal(err)
	}
	return b, h, nil
}

func readHeader(b bucketstore.Bucket) (specs.Header, error) {
	var h specs.Header
	raw := b.Get(keyHeader)
	if raw == nil {
		return h, errors.New("spec has no header")
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("decode header: %w", err)
	}
	return h, nil
}

// journalReader implements specs.JournalReader over a spec's journal and
// its task index, opened when read (most writes never read them).
type journalReader struct{ spec bucketstore.Bucket }

func newJournalReader(spec bucketstore.Bucket) journalReader { return journalReader{spec: spec} }

// Records is the spec's record space: the nested bucket records_<space>
// of the spec's bucket, made on its first write (specs/<spec_id>/records_<space>/<key>).
// Read through a ReadSpec view, the space refuses writes (etcd would drop
// them silently).
func (r journalReader) Records(space string) specs.Records {
	return &records{spec: r.spec, name: recordsBucket(space), readOnly: true}
}

// Records is the writable record space of a mutation.
func (w *journalWriter) Records(space string) specs.Records {
	return &records{spec: w.spec, name: recordsBucket(space)}
}

// recordNames keeps each record space's bucket name (a space → []byte):
// every guarded write looks its space up (the autonomy write lock), and
// the spaces are a few names fixed in code. The names are shared: a
// bucket keeps no name it is given (bucketstore), and nobody changes them.
var recordNames sync.Map

// recordsBucket is the name of space's bucket, records_<space>.
func recordsBucket(space string) []byte {
	if v, ok := recordNames.Load(space); ok {
		return v.([]byte)
	}
	name := []byte("records_" + space)
	recordNames.Store(space, name)
	return name
}

// records implements specs.Records over one nested bucket of a spec.
type records struct {
	spec     bucketstore.Bucket
	name     []byte
	readOnly bool
}

var errReadOnlyRecords = errors.New("records written through a read transaction")

func (r *records) Get(key string) []byte {
	b := r.spec.Bucket(r.name)
	if b == nil {
		return nil
	}
	return b.Get([]byte(key))
}

func (r *records) Put(key string, value []byte) error {
	if r.readOnly {
		return core.Internal(errReadOnlyRecords)
	}
	b, err := r.spec.CreateBucketIfNotExists(r.name)
	if err != nil {
		return core.Internal(err)
	}
	if err := b.Put([]byte(key), value); err != nil {
		return core.Internal(err)
	}
	return nil
}

func (r *records) Delete(key string) error {
	if r.readOnly {
		return core.Internal(errReadOnlyRecords)
	}
	b := r.spec.Bucket(r.name)
	if b == nil {
		return nil
	}
	if err := b.Delete([]byte(key)); err != nil {
		return core.Internal(err)
	}
	return nil
}

func (r *records) Scan(prefix, after string, fn func(key string, value []byte) bool) error {
	b := r.spec.Bucket(r.name)
	if b == nil {
		return nil
	}
	start := prefix
	if after > start {
		start = after
	}
	c := b.Cursor()
	for k, v := c.Seek([]byte(start)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
		if v == nil || string(k) <= after {
			continue
		}
		if !fn(string(k), v) {
			return nil
		}
	}
	return nil
}

func (r journalReader) Entries(before uint64, limit int, keep func(*specs.JournalEntry) bool) ([]specs.JournalEntry, bool, error) {
	return readJournal(r.spec.Bucket(bucketJournal), before, limit, keep)
}

// TaskEntries walks the task index backwards from before (0 = newest).
func (r journalReader) TaskEntries(taskID string, before uint64, limit int, keep func(*specs.JournalEntry) bool) ([]specs.JournalEntry, bool, error) {
	out := []specs.JournalEntry{}
	b, index := r.spec.Bucket(bucketJournal), r.spec.Bucket(bucketJournalTask)
	if index == nil || b == nil {
		return readJournal(b, before, limit, func(e *specs.JournalEntry) bool {
			return e.TaskID == taskID && (keep == nil || keep(e))
		})
	}
	prefix := []byte(taskID + "\x00")
	start := before
	if start == 0 {
		start = ^uint64(0)
	}
	c := index.Cursor()
	k, _ := c.Seek(append(append([]byte{}, prefix...), u64(start)...))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		if seq >= start {
			continue
		}
		v := b.Get(u64(seq))
		if v == nil {
			continue
		}
		var e specs.JournalEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, false, fmt.Errorf("journal %d: %w", seq, err)
		}
		e.Seq = seq
		if keep != nil && !keep(&e) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, e)
	}
	return out, false, nil
}

func taskIndexKey(taskID string, seq uint64) []byte { return bucketstore.TaskIndexKey(taskID, seq) }

// journalWriter queues entries for the mutation's transaction.
type journalWriter struct {
	journalReader
	pending []specs.JournalEntry
}

func (w *journalWriter) Append(e specs.JournalEntry) { w.pending = append(w.pending, e) }

func readJournal(b bucketstore.Bucket, before uint64, limit int, keep func(*specs.JournalEntry) bool) ([]specs.JournalEntry, bool, error) {
	out := []specs.JournalEntry{}
	if b == nil {
		return out, false, nil
	}
	c := b.Cursor()
	var k, v []byte
	if before == 0 {
		k, v = c.Last()
	} else {
		k, _ = c.Seek(u64(before))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	for ; k != nil; k, v = c.Prev() {
		var e specs.JournalEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, false, fmt.Errorf("journal %x: %w", k, err)
		}
		e.Seq = binary.BigEndian.Uint64(k)
		if keep != nil && !keep(&e) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, e)
	}
	return out, false, nil
}

// ReadSpec runs fn over a read-only view of specID (nodes load lazily) and
// its journal. fn must not keep either after it returns. Errors:
// SPEC_NOT_FOUND, LOCK_TIMEOUT, INTERNAL_ERROR on a corrupt record.
func (s *Repo) ReadSpec(ctx context.Context, specID string, fn func(sp *specs.Spec, j specs.JournalReader) error) error {
	return s.view(ctx, func(tx bucketstore.Tx) error {
		b, h, err := loadSpec(tx, specID)
		if err != nil {
			return err
		}
		src := s.newSource(specID, b)
		if err := fn(specs.NewSpecView(h, src), newJournalReader(b)); err != nil {
			return deletedNode(b, specID, err)
		}
		if src.err != nil {
			return core.Internal(src.err)
		}
		return nil
	})
}

// errNoIndex: the store has no spec list index (ListSpecs lists the old way).
var errNoIndex = errors.New("no spec list index")

// errDryRun aborts the transaction of a dry run after the changes are known.
var errDryRun = errors.New("dry run")

// loadForWrite loads specID for a write in tx and applies the write's
// guards before anything is written: expected_version (VERSION_CONFLICT)
// and o.Guard. Errors: SPEC_NOT_FOUND, VERSION_CONFLICT, o.Guard's.
// The header comes from the header cache when its stored bytes are the
// cached ones; it is shared: the caller must not change it. encoded is
// json.Marshal(h) when the cache knows it (nil otherwise), shared too.
func (s *Repo) loadForWrite(tx bucketstore.Tx, specID string, o specs.RepoWriteOptions) (b bucketstore.Bucket, h specs.Header, encoded []byte, err error) {
	b, err = specBucket(tx, specID)
	if err != nil {
		return nil, specs.Header{}, nil, err
	}
	raw := b.Get(keyHeader)
	h, encoded, ok := s.headers.get(specID, raw)
	if !ok {
		if h, err = readHeader(b); err != nil {
			return nil, h, nil, core.Internal(err)
		}
		s.headers.put(specID, bytes.Clone(raw), h, false) // raw lives as long as tx
	}
	if verr := checkVersion(o, h.Version); verr != nil {
		return nil, h, nil, verr
	}
	if o.Guard != nil {
		if err := o.Guard(&journalWriter{journalReader: newJournalReader(b)}); err != nil {
			return nil, h, nil, err
		}
	}
	return b, h, encoded, nil
}

// MutateSpec runs fn over a writable view of specID in one read-modify-write
// transaction. Inside it: the header is read, expected_version is checked
// (VERSION_CONFLICT, nothing changes), fn changes the view, and then only the
// nodes fn changed are written, with a reverse delta in history, the journal
// entries fn appended, the new header and the lifecycle index. An error from
// fn, a panic or a passed deadline changes nothing. With DryRun the changes
// are computed and reported (RepoWriteResult.Changes, which only a dry run
// fills) and nothing is stored. A mutation that changes nothing writes
// nothing and keeps the version.
func (s *Repo) MutateSpec(ctx context.Context, specID string, o specs.RepoWriteOptions, fn func(sp *specs.Spec, j specs.JournalWriter) error) (specs.RepoWriteResult, error) {
	var res specs.RepoWriteResult
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		res = specs.RepoWriteResult{} // only the run that commits answers (bucketstore.Engine)
		m, err := s.runMutation(tx, specID, o, fn)
		if err != nil {
			return err
		}
		return s.storeMutation(tx, m, o, &res)
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return res, err
}

// mutation is a MutateSpec's fn run over its spec: the spec's bucket, its
// header as loaded (shared, with its cached encoding hraw or nil), the view
// fn changed, what it read through and the journal it appended.
type mutation struct {
	specID string
	b      bucketstore.Bucket
	h      specs.Header
	hraw   []byte
	src    *nodeSource
	sp     *specs.Spec
	w      *journalWriter
}

// runMutation loads specID for a write in tx (loadForWrite's guards) and
// runs fn over a writable view of it.
func (s *Repo) runMutation(tx bucketstore.Tx, specID string, o specs.RepoWriteOptions, fn func(sp *specs.Spec, j specs.JournalWriter) error) (mutation, error) {
	b, h, hraw, err := s.loadForWrite(tx, specID, o)
	if err != nil {
		return mutation{}, err
	}
	m := mutation{specID: specID, b: b, h: h, hraw: hraw, src: s.newSource(specID, b), w: &journalWriter{journalReader: newJournalReader(b)}}
	m.sp = specs.NewSpecView(h, m.src) // copies h's maps before changing them
	if err := fn(m.sp, m.w); err != nil {
		return m, deletedNode(b, specID, err)
	}
	if m.src.err != nil {
		return m, core.Internal(m.src.err)
	}
	return m, nil
}

// storeMutation writes what m changed: the changed nodes with the reverse
// delta in history, the journal, the header and the spec list index; a
// dry run (errDryRun) or a mutation that changed nothing writes nothing.
// It fills res.
func (s *Repo) storeMutation(tx bucketstore.Tx, m mutation, o specs.RepoWriteOptions, res *specs.RepoWriteResult) error {
	put, deleted := m.sp.Changes()
	// Each header is encoded once at most: the comparison's encodings
	// are the history's header_before (the cached encoding of the
	// header loaded, when the cache has it) and (when the version did
	// not move again) the header stored.
	before, after, err := encodeHeaders(m.h, m.hraw, m.sp.Header)
	if err != nil {
		return core.Internal(err)
	}
	headerChanged := !bytes.Equal(before, after)
	changes, err := nodesBefore(put, deleted, m.src)
	if err != nil {
		return core.Internal(err)
	}
	if o.DryRun { // only a dry run reports its changes (RepoWriteResult)
		res.Changes = describeChanges(put, deleted, storedBefore(changes), headerChanged)
	}
	if len(put) == 0 && len(deleted) == 0 && !headerChanged && len(m.w.pending) == 0 {
		res.Version, res.DryRun = m.h.Version, o.DryRun
		if o.DryRun {
			return errDryRun
		}
		return nil
	}
	if m.sp.Header.Version == m.h.Version {
		m.sp.Header.Version++ // journal-only changes still make a new version
		after = nil
	}
	res.Version = m.sp.Header.Version
	if o.DryRun {
		res.DryRun, res.Journal = true, m.w.pending
		return errDryRun
	}
	if err := writeChanges(m.b, before, changes, o, m.sp.Header, m.src); err != nil {
		return core.Internal(err)
	}
	if res.Journal, err = appendJournal(m.b, m.w.pending); err != nil {
		return core.Internal(err)
	}
	if err := s.putHeader(m.b, m.specID, m.sp.ShareHeader(), after); err != nil {
		return core.Internal(err)
	}
	return indexSpec(tx, m.sp.Header, m.h.Lifecycle)
}

// encodeHeaders encodes a mutation's header before (unless its encoding
// is known: encoded, not nil) and after.
func encodeHeaders(before specs.Header, encoded []byte, after specs.Header) ([]byte, []byte, error) {
	b, err := headerJSON(before, encoded)
	if err != nil {
		return nil, nil, err
	}
	a, err := specs.EncodeHeader(after)
	return b, a, err
}

// headerJSON is json.Marshal(h): encoded when known (not nil).
func headerJSON(h specs.Header, encoded []byte) ([]byte, error) {
	if encoded != nil {
		return encoded, nil
	}
	return specs.EncodeHeader(h)
}

// putHeader stores h, given encoded as raw (nil: encode it here), and
// writes it through to the header cache, which keeps h and raw as they
// are: nobody may change h's maps or raw afterwards (a view's header
// given by Spec.ShareHeader).
func (s *Repo) putHeader(b bucketstore.Bucket, specID string, h specs.Header, raw []byte) error {
	if raw == nil {
		var err error
		if raw, err = specs.EncodeHeader(h); err != nil {
			return err
		}
	}
	if err := b.Put(keyHeader, raw); err != nil {
		return err
	}
	s.headers.put(specID, raw, h, true)
	return nil
}

// describeChanges lists a mutation's changes; stored is a node's stored
// value before it (nil: absent).
func describeChanges(put []*specs.Node, deleted []string, stored func(id string) []byte, header bool) []specs.RepoChange {
	out := make([]specs.RepoChange, 0, len(put)+len(deleted)+1)
	if header {
		out = append(out, specs.RepoChange{Op: "update", Target: "spec"})
	}
	for _, n := range put {
		op := "update"
		if stored(n.ID) == nil {
			op = "add"
		}
		out = append(out, specs.RepoChange{Op: op, Target: "node:" + n.ID, Detail: string(n.Type) + " " + n.Title})
	}
	for _, id := range deleted {
		out = append(out, specs.RepoChange{Op: "remove", Target: "node:" + id})
	}
	return out
}

func putHeader(b bucketstore.Bucket, h specs.Header) error {
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return b.Put(keyHeader, raw)
}

// appendJournal appends entries to the spec's journal and its task index.
func appendJournal(spec bucketstore.Bucket, entries []specs.JournalEntry) ([]specs.JournalEntry, error) {
	out := make([]specs.JournalEntry, 0, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	b := spec.Bucket(bucketJournal)
	index, err := spec.CreateBucketIfNotExists(bucketJournalTask)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		seq, err := b.NextSequence()
		if err != nil {
			return nil, err
		}
		e.Seq = seq
		raw, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		if err := b.Put(u64(seq), raw); err != nil {
			return nil, err
		}
		if e.TaskID != "" {
			if err := index.Put(taskIndexKey(e.TaskID, seq), nil); err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// indexKey is the lifecycle index's key of specID in lifecycle l.
func indexKey(l specs.Lifecycle, specID string) []byte {
	return []byte(string(indexFolder(l)) + "\x00" + specID)
}

// indexFolder is the lifecycle index folder of lifecycle l ("" is pending).
func indexFolder(l specs.Lifecycle) specs.Lifecycle {
	if l == "" {
		return specs.LifecyclePending
	}
	return l
}

// CreateSpec stores a new spec built by build inside the transaction. build
// receives an exists func to pick a free id (the same name twice on one day
// gets -002) and returns the spec view (all its nodes in the view). Errors:
// DUPLICATE_ENTRY when the id is taken, whatever build returns.
func (s *Repo) CreateSpec(ctx context.Context, o specs.RepoWriteOptions, build func(exists func(id string) bool) (*specs.Spec, []specs.JournalEntry, error)) (specs.Header, error) {
	var out specs.Header
	if o.DryRun {
		err := s.view(ctx, func(tx bucketstore.Tx) error {
			sp, _, err := build(specExists(tx))
			if err == nil {
				out = sp.Header
			}
			return err
		})
		return out, err
	}
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		sp, journal, err := build(specExists(tx))
		if err != nil {
			return err
		}
		if err := writeNewSpec(tx, sp, journal, false); err != nil {
			return err
		}
		out = sp.Header
		return nil
	})
	return out, err
}

func specExists(tx bucketstore.Tx) func(string) bool {
	return func(id string) bool { return tx.Bucket(bucketSpecs).Bucket([]byte(id)) != nil }
}

// writeNewSpec writes every node of sp as a new spec (replacing an existing
// one when replace is set: its history and journal are kept, and the
// replacement is recorded as a new version).
func writeNewSpec(tx bucketstore.Tx, sp *specs.Spec, journal []specs.JournalEntry, replace bool) error {
	id := sp.Header.SpecID
	all := tx.Bucket(bucketSpecs)
	if old := all.Bucket([]byte(id)); old != nil {
		if !replace {
			return core.NewError(errcode.DuplicateEntry, fmt.Sprintf("A spec %q already exists.", id),
				map[string]any{"field": "spec_id", "received": id}).
				WithStep("spec-get", map[string]any{"spec_id": id}, nil)
		}
		return replaceSpec(tx, old, sp, journal)
	}
	b, err := all.CreateBucket([]byte(id))
	if err != nil {
		return core.Internal(err)
	}
	if _, err := b.CreateBucket(bucketNodes); err != nil {
		return core.Internal(err)
	}
	for _, sub := range [][]byte{bucketJournal, bucketJournalTask, bucketHistory} {
		if _, err := b.CreateBucket(sub); err != nil {
			return core.Internal(err)
		}
	}
	w := newNodeWriter(b)
	for _, nid := range sp.IDs() {
		if _, err := w.put(sp.Node(nid), nil, specs.ChildList{}); err != nil {
			return core.Internal(err)
		}
	}
	if _, err := appendJournal(b, journal); err != nil {
		return core.Internal(err)
	}
	if err := putHeader(b, sp.Header); err != nil {
		return core.Internal(err)
	}
	if err := markNewStoreIndexed(tx, id); err != nil {
		return core.Internal(err)
	}
	return indexSpec(tx, sp.Header, sp.Header.Lifecycle)
}

// replaceSpec overwrites an existing spec's nodes and header with sp as a
// new version (history keeps what was replaced; the journal is appended to).
func replaceSpec(tx bucketstore.Tx, b bucketstore.Bucket, sp *specs.Spec, journal []specs.JournalEntry) error {
	h, err := readHeader(b)
	if err != nil {
		return core.Internal(err)
	}
	nodes := b.Bucket(bucketNodes)
	want := map[string]bool{}
	var put []*specs.Node
	for _, id := range sp.IDs() {
		want[id] = true
		put = append(put, sp.Node(id))
	}
	var deleted []string
	_ = nodes.ForEach(func(k, _ []byte) error {
		if !want[string(k)] && !isChunkKey(k) {
			deleted = append(deleted, string(k))
		}
		return nil
	})
	sp.Header.Version = h.Version + 1
	before, err := json.Marshal(h)
	if err != nil {
		return core.Internal(err)
	}
	if err := writeVersion(b, before, put, deleted, specs.RepoWriteOptions{Action: "spec.import"}, sp.Header, newSource(b)); err != nil {
		return core.Internal(err)
	}
	if _, err := appendJournal(b, journal); err != nil {
		return core.Internal(err)
	}
	if err := putHeader(b, sp.Header); err != nil {
		return core.Internal(err)
	}
	return indexSpec(tx, sp.Header, h.Lifecycle)
}

// ListSpecs returns up to limit specs after the key `after` (a cursor key from
// a previous page), in spec id order; folder "" or "all" lists every spec,
// otherwise the lifecycle index of that folder is walked. The cost is
// O(page): a cursor seek over the spec list index (speclist.go), one row
// per spec; a store without the index (that cannot be written to build it)
// reads one header per row instead. next is "" on the last page.
func (s *Repo) ListSpecs(ctx context.Context, folder, after string, limit int) (rows []specs.RepoSummary, next string, err error) {
	indexed, err := s.ensureIndex(ctx)
	if err != nil {
		return []specs.RepoSummary{}, "", err
	}
	if indexed {
		err = s.view(ctx, func(tx bucketstore.Tx) error {
			if !indexBuilt(tx) {
				return errNoIndex
			}
			rows, next, err = listIndexed(tx, folder, after, limit)
			return err
		})
		if !errors.Is(err, errNoIndex) {
			return rows, next, err
		}
		s.indexed.Store(false) // the store was replaced under this Repo
	}
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		rows, next = []specs.RepoSummary{}, "" // each run lists afresh (bucketstore.Engine)
		all := tx.Bucket(bucketSpecs)
		emit := func(id string) (bool, error) {
			if len(rows) == limit {
				next = rows[len(rows)-1].SpecID
				return false, nil
			}
			b := all.Bucket([]byte(id))
			if b == nil {
				return true, nil
			}
			row, err := readSummary(b)
			if err != nil {
				return false, core.Internal(err)
			}
			rows = append(rows, row)
			return true, nil
		}
		if folder == "" || folder == "all" {
			c := all.Cursor()
			k, _ := c.First()
			if after != "" {
				k, _ = c.Seek([]byte(after))
				if k != nil && string(k) == after {
					k, _ = c.Next()
				}
			}
			for ; k != nil; k, _ = c.Next() {
				if ok, err := emit(string(k)); !ok || err != nil {
					return err
				}
			}
			return nil
		}
		prefix := []byte(folder + "\x00")
		c := tx.Bucket(bucketLifecycle).Cursor()
		start := prefix
		if after != "" {
			start = append(append([]byte{}, prefix...), after...)
		}
		for k, _ := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			id := string(k[len(prefix):])
			if id == after {
				continue
			}
			if ok, err := emit(id); !ok || err != nil {
				return err
			}
		}
		return nil
	})
	return rows, next, err
}

// readSummary decodes only the header fields a listing shows (not the
// metadata maps), which is most of a list page's cost.
func readSummary(b bucketstore.Bucket) (specs.RepoSummary, error) {
	raw := b.Get(keyHeader)
	if raw == nil {
		return specs.RepoSummary{}, errors.New("spec has no header")
	}
	var h struct {
		SpecID             string          `json:"spec_id"`
		Title              string          `json:"title"`
		LastUpdated        string          `json:"last_updated"`
		Version            int64           `json:"version"`
		Lifecycle          specs.Lifecycle `json:"lifecycle"`
		Status             specs.Status    `json:"status"`
		ProgressPercentage int             `json:"progress_percentage"`
		CurrentPhase       string          `json:"current_phase"`
		TotalTasks         int             `json:"total_tasks"`
		CompletedTasks     int             `json:"completed_tasks"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return specs.RepoSummary{}, fmt.Errorf("decode header: %w", err)
	}
	return summaryOf(specs.Header{SpecID: h.SpecID, Title: h.Title, LastUpdated: h.LastUpdated, Version: h.Version, Lifecycle: h.Lifecycle,
		Status: h.Status, ProgressPercentage: h.ProgressPercentage, CurrentPhase: h.CurrentPhase, TotalTasks: h.TotalTasks, CompletedTasks: h.CompletedTasks}), nil
}

func summaryOf(h specs.Header) specs.RepoSummary {
	l := string(h.Lifecycle)
	if l == "" {
		l = string(specs.LifecyclePending)
	}
	return specs.RepoSummary{
		SpecID: h.SpecID, Title: h.Title, Lifecycle: l, Status: string(h.Status),
		TotalTasks: h.TotalTasks, CompletedTasks: h.CompletedTasks, ProgressPercentage: h.ProgressPercentage,
		CurrentPhase: h.CurrentPhase, Version: h.Version, LastUpdated: h.LastUpdated,
	}
}

// SpecIDs lists every spec id (for fuzzy matching and find).
func (s *Repo) SpecIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.view(ctx, func(tx bucketstore.Tx) error {
		ids = nil // each run lists afresh (bucketstore.Engine)
		return tx.Bucket(bucketSpecs).ForEachBucket(func(k []byte) error { ids = append(ids, string(k)); return nil })
	})
	return ids, err
}

// ImportSpec stores a complete spec (from a foundry document), replacing an
// existing one with the same id when replace is set. Errors: DUPLICATE_ENTRY.
func (s *Repo) ImportSpec(ctx context.Context, sp *specs.Spec, journal []specs.JournalEntry, replace bool) error {
	return s.update(ctx, func(tx bucketstore.Tx) error { return writeNewSpec(tx, sp, journal, replace) })
}

func rankIDs(q string, ids []string) []string {
	if len(ids) == 0 {
		return []string{}
	}
	return fuzzy.Rank(q, ids, 5)
}

// checkVersion answers VERSION_CONFLICT when an expected version was given
// and differs from the stored one.
func checkVersion(o specs.RepoWriteOptions, current int64) *core.Error {
	return core.Mutation{DryRun: o.DryRun, ExpectedVersion: o.ExpectedVersion}.CheckVersion(current)
}

// JournalRange returns the entries of specID with seq in [from, to], oldest
// first. Journal entries never change once written, so a range pinned by an
// archive id reads the same at any later version.
func (s *Repo) JournalRange(ctx context.Context, specID string, from, to uint64) ([]specs.JournalEntry, error) {
	var out []specs.JournalEntry
	err := s.view(ctx, func(tx bucketstore.Tx) error {
		out = []specs.JournalEntry{} // each run reads afresh (bucketstore.Engine)
		b, err := specBucket(tx, specID)
		if err != nil {
			return err
		}
		c := b.Bucket(bucketJournal).Cursor()
		for k, v := c.Seek(u64(from)); k != nil && binary.BigEndian.Uint64(k) <= to; k, v = c.Next() {
			var e specs.JournalEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return core.Internal(err)
			}
			e.Seq = binary.BigEndian.Uint64(k)
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
