package specs

import (
	"slices"

	"github.com/specd/specd/core"
)

// NodeSource supplies a spec's nodes lazily: a map in memory
// ([MemorySource]) or a stored bucket in specs/specstore. Operations may Get the
// same id several times (a rollup reads a parent's children, the next-task
// search reads ancestors); a source that decodes on Get should keep the
// decoded nodes for the life of the view. Returned nodes are never mutated by
// this package.
type NodeSource interface {
	// Get returns the stored node with this id. Callers must not mutate it.
	Get(id string) (*Node, bool)
	// IDs returns every node id, in any order.
	IDs() []string
}

// MemorySource is a map-backed NodeSource. It is not safe for concurrent
// mutation; concurrent reads are fine.
type MemorySource map[string]*Node

// NewMemorySource builds a MemorySource from nodes (keyed by their ID).
func NewMemorySource(nodes ...*Node) MemorySource {
	m := make(MemorySource, len(nodes))
	for _, n := range nodes {
		m[n.ID] = n
	}
	return m
}

// Get implements NodeSource.
func (m MemorySource) Get(id string) (*Node, bool) {
	n, ok := m[id]
	return n, ok && n != nil
}

// IDs implements NodeSource.
func (m MemorySource) IDs() []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	return out
}

// Apply writes a view's changes into the source (what a store does at
// commit).
func (m MemorySource) Apply(put []*Node, deleted []string) {
	for _, id := range deleted {
		delete(m, id)
	}
	for _, n := range put {
		m[n.ID] = n
	}
}

// Spec is a lazily loaded, copy-on-write view of one spec: a Header, a
// NodeSource and an overlay of the nodes changed through this view. It is not
// safe for concurrent use. Clock supplies the time for mutations (nil:
// time.Now).
//
// Header's maps (Metadata, Extra) may be shared with other views and
// goroutines (see NewSpecView): they are read-only to everyone; the
// package's mutations copy them first (headerMeta).
type Spec struct {
	Header Header
	Clock  core.Clock

	// sharedHeader: Header.Metadata and Header.Extra are not this view's
	// own; headerMeta copies them before the first write.
	sharedHeader bool

	src     NodeSource
	overlay map[string]*Node
	deleted map[string]bool // nil until the first delete
	bumped  bool
	tx      *txLog
	nums    *childNumbers // the last child numbers made for a node without them (see childNumbersOf)
}

// NewSpecView returns a view of the spec with header h whose nodes come from
// src (nil means no nodes). Nothing is read until asked for. h's maps are
// not copied and never written: the view's first change to its header's
// metadata works on a deep copy, so h may be shared (a cached header).
func NewSpecView(h Header, src NodeSource) *Spec {
	if src == nil {
		src = MemorySource{}
	}
	return &Spec{Header: h, sharedHeader: true, src: src, overlay: map[string]*Node{}} // deleted: made by the first delete
}

// headerMeta returns s.Header.Metadata to be written (never nil): the
// header's maps are first deep-copied when they are shared.
func (s *Spec) headerMeta() map[string]any {
	if s.sharedHeader {
		s.Header = s.Header.Clone()
		s.sharedHeader = false
	}
	if s.Header.Metadata == nil {
		s.Header.Metadata = map[string]any{}
	}
	return s.Header.Metadata
}

// ShareHeader returns the view's header and marks its maps shared: the
// caller may keep the result (a cache) while the view goes on, since the
// view's later changes to its header's metadata work on a copy.
func (s *Spec) ShareHeader() Header {
	s.sharedHeader = true
	return s.Header
}

// Node returns the current node with this id (overlay first, then the
// source), or nil when it does not exist or was deleted in this view. The
// result is shared: do not mutate it; use Edit.
func (s *Spec) Node(id string) *Node {
	if n, ok := s.overlay[id]; ok {
		return n
	}
	if s.deleted[id] {
		return nil
	}
	return s.fromSource(id)
}

func (s *Spec) fromSource(id string) *Node {
	n, ok := s.src.Get(id)
	if !ok {
		return nil
	}
	return n
}

// Has reports whether a node with this id exists in the view.
func (s *Spec) Has(id string) bool { return s.Node(id) != nil }

// Root returns the root node (nil when missing).
func (s *Spec) Root() *Node { return s.Node(RootID) }

// Edit returns a private, mutable copy of the node (cloned into the overlay on
// first use, then the same copy), marking it changed; nil when absent.
func (s *Spec) Edit(id string) *Node {
	if n, ok := s.overlay[id]; ok {
		s.save(id)
		return n
	}
	if s.deleted[id] {
		return nil
	}
	n := s.fromSource(id)
	if n == nil {
		return nil
	}
	s.save(id)
	c := n.Clone()
	c.ID = id
	s.overlay[id] = c
	return c
}

// insertChild inserts child at index i of node id's children (the node
// must exist), editing the node as Edit does. The copy Edit makes shares
// the node's ChildList, and an insertion near the end of a list copies
// only its tail (see ChildList): a phase may hold thousands of children.
// The node's child numbers (see childNumbers) are carried to the new
// list, so that the next NewNodeID under it is a lookup, not a scan.
func (s *Spec) insertChild(id string, i int, child string) {
	n := s.Edit(id)
	nums := s.childNumbersOf(n)
	n.Children = n.Children.Inserted(i, child)
	n.nums = nums.inserted(n.Children, child)
}

// Put inserts or replaces a node (keyed by n.ID); the view keeps n itself.
func (s *Spec) Put(n *Node) {
	s.save(n.ID)
	delete(s.deleted, n.ID)
	s.overlay[n.ID] = n
}

// Delete removes the node with this id from the view.
func (s *Spec) Delete(id string) {
	s.save(id)
	delete(s.overlay, id)
	if s.fromSource(id) != nil {
		s.markDeleted(id)
	}
}

// markDeleted records id as deleted in the view.
func (s *Spec) markDeleted(id string) {
	if s.deleted == nil {
		s.deleted = map[string]bool{}
	}
	s.deleted[id] = true
}

// IDs returns every current id (source ∪ overlay − deleted) in natural
// order. It reads the whole id list of the source: avoid it on hot paths.
func (s *Spec) IDs() []string {
	seen := make(map[string]bool, len(s.overlay))
	var out []string
	for _, id := range s.src.IDs() {
		if s.deleted[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	for id := range s.overlay {
		if !seen[id] {
			out = append(out, id)
		}
	}
	SortIDs(out)
	return out
}

// Changes returns what a store must write: every node put or edited through
// this view (natural id order) and every deleted id that exists in the source.
func (s *Spec) Changes() (put []*Node, deleted []string) {
	if len(s.overlay) > 0 {
		put = make([]*Node, 0, len(s.overlay))
	}
	for _, n := range s.overlay {
		put = append(put, n)
	}
	slices.SortFunc(put, func(a, b *Node) int { return CompareIDs(a.ID, b.ID) }) // ids are unique: one order
	if len(s.deleted) > 0 {
		deleted = make([]string, 0, len(s.deleted))
	}
	for id := range s.deleted {
		deleted = append(deleted, id)
	}
	SortIDs(deleted)
	return put, deleted
}

// Dirty reports whether the view has node changes.
func (s *Spec) Dirty() bool { return len(s.overlay) > 0 || len(s.deleted) > 0 }

// FromDocument builds a view holding every node of doc as a pending change
// (over an empty source), so that Changes lists all nodes: what an import
// stores. Nodes are deep-copied; a node's ID is set from its hierarchy key;
// nil nodes are skipped; internal rollup summaries (metadata._rollup) are
// not trusted but rebuilt from the children's stored fields. Header computed fields are copied from
// the document and the root's counts, not recomputed (call RecomputeAll).
func FromDocument(doc Document) *Spec {
	h := Header{
		SpecID: doc.SpecID, Title: doc.Title, Generated: doc.Generated, LastUpdated: doc.LastUpdated,
		Version: doc.Version, Lifecycle: doc.Lifecycle, Metadata: cloneMap(doc.Metadata), Status: doc.Status,
		ProgressPercentage: doc.ProgressPercentage, CurrentPhase: doc.CurrentPhase,
	}
	if doc.Extra != nil {
		h.Extra = (Header{Extra: doc.Extra}).Clone().Extra
	}
	s := NewSpecView(h, nil)
	for id, n := range doc.Hierarchy {
		if n == nil {
			continue
		}
		c := n.Clone()
		c.ID = id
		s.overlay[id] = c
	}
	rebuildSummaries(s)
	if r := s.Root(); r != nil {
		s.Header.TotalTasks, s.Header.CompletedTasks = r.TotalTasks, r.CompletedTasks
	}
	return s
}

// Document returns the full document form of the view (deep copies; the
// journal is empty: the store adds it). Internal rollup summaries
// (metadata._rollup, see rollup.go) are left out: the document has the
// foundry shape, and FromDocument rebuilds them.
func (s *Spec) Document() Document {
	h := s.Header.Clone()
	d := Document{
		SpecID: h.SpecID, Title: h.Title, Generated: h.Generated, LastUpdated: h.LastUpdated,
		Version: h.Version, Lifecycle: h.Lifecycle, Metadata: h.Metadata, Status: h.Status,
		ProgressPercentage: h.ProgressPercentage, CurrentPhase: h.CurrentPhase, Extra: h.Extra,
		Journal: []JournalEntry{},
	}
	if d.Metadata == nil {
		d.Metadata = map[string]any{}
	}
	ids := s.IDs()
	d.Hierarchy = make(map[string]*Node, len(ids))
	for _, id := range ids {
		if n := s.Node(id); n != nil {
			c := n.Clone()
			c.ID = id
			delete(c.Metadata, RollupMetaKey)
			d.Hierarchy[id] = c
		}
	}
	return d
}

// ---- atomic mutations ----

// txLog records, for one exported mutation, the state of every node before
// its first change and the header, so that a failed mutation leaves the view
// untouched.
type txLog struct {
	header       Header
	sharedHeader bool
	bumped       bool
	saved        map[string]savedNode
}

type savedNode struct {
	node      *Node // overlay value before the mutation (a clone), nil if none
	inOverlay bool
	deleted   bool
}

func (s *Spec) save(id string) {
	if s.tx == nil {
		return
	}
	if _, ok := s.tx.saved[id]; ok {
		return
	}
	sv := savedNode{deleted: s.deleted[id]}
	if n, ok := s.overlay[id]; ok {
		sv.inOverlay = true
		sv.node = n.Clone()
	}
	s.tx.saved[id] = sv
}

// mutate starts an atomic mutation (a no-op when one is already running) and
// returns the function that ends it: on a non-nil *errp it restores the view.
// Usage: defer s.mutate(&err)().
func (s *Spec) mutate(errp *error) func() {
	if s.tx != nil {
		return func() {}
	}
	// The header is kept as it is, not copied: marked shared, its maps
	// are copied by the mutation's first write to them (headerMeta), so
	// the kept ones stay as they were.
	s.tx = &txLog{header: s.Header, sharedHeader: s.sharedHeader, bumped: s.bumped, saved: map[string]savedNode{}}
	s.sharedHeader = true
	return func() {
		tx := s.tx
		s.tx = nil
		if r := recover(); r != nil {
			s.restore(tx)
			panic(r)
		}
		if errp != nil && *errp != nil {
			s.restore(tx)
		}
	}
}

func (s *Spec) restore(tx *txLog) {
	s.Header = tx.header
	s.sharedHeader = tx.sharedHeader
	s.bumped = tx.bumped
	for id, sv := range tx.saved {
		if sv.inOverlay {
			s.overlay[id] = sv.node
		} else {
			delete(s.overlay, id)
		}
		if sv.deleted {
			s.markDeleted(id)
		} else {
			delete(s.deleted, id)
		}
	}
}

// touch records a mutation in the header: LastUpdated = now and, once per
// view, Version + 1.
func (s *Spec) touch() {
	s.Header.LastUpdated = FormatTime(s.Clock.Now())
	if !s.bumped {
		s.Header.Version++
		s.bumped = true
	}
}

func (s *Spec) nowString() string { return FormatTime(s.Clock.Now()) }
