package specstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// historyRecord is the reverse delta of one version: what the header and the
// changed nodes were before the version was written. A node that did not
// exist before has a null value. Walking the records from the newest down
// to version v+1 reconstructs version v without ever storing a whole spec.
// A node in ChildrenBefore is recorded without its children (its value in
// NodesBefore has an empty list): they are rebuilt from its children after
// the version with the patch (children.go), so a task add records the
// phase's few fields and not its thousands of children.
type historyRecord struct {
	Version        int64                      `json:"version"`
	Timestamp      string                     `json:"timestamp"`
	Action         string                     `json:"action,omitempty"`
	Author         string                     `json:"author,omitempty"`
	HeaderBefore   json.RawMessage            `json:"header_before"`
	ChildrenBefore map[string]childrenPatch   `json:"children_before,omitempty"`
	NodesBefore    map[string]json.RawMessage `json:"nodes_before"`
}

// nodeBefore is one changed node of a version: its stored value before,
// and (for the reverse delta) what NodesBefore and ChildrenBefore record.
type nodeBefore struct {
	id       string
	old      []byte      // stored value before (nil: absent)
	prev     storedNode  // old, parsed
	oldN     *specs.Node // decoded, when old has chunks
	n        *specs.Node // the node written (nil: deleted)
	record   []byte      // NodesBefore's value (nil: null)
	patch    childrenPatch
	hasPatch bool // ChildrenBefore records patch (old has chunks, n is written)
}

// writeVersion records the reverse delta of a new version (header and the
// nodes as they were), then writes the changed nodes and removes the deleted
// ones. before is the header before the version, encoded; the header itself
// is written by the caller. src reads the nodes as
// they are before the write (the view's own source in a mutation). Written
// nodes go into src's cache with their new value (write-through), so the
// next read of a node that changes on every mutation (a phase, the root) is
// not a decode; if the transaction rolls back, the stored bytes differ and
// the entry never hits. The caller must not modify the nodes in put
// afterwards.
func writeVersion(b bucketstore.Bucket, before json.RawMessage, put []*specs.Node, deleted []string, o specs.RepoWriteOptions, after specs.Header, src *nodeSource) error {
	changes, err := nodesBefore(put, deleted, src)
	if err != nil {
		return err
	}
	return writeChanges(b, before, changes, o, after, src)
}

// writeChanges is writeVersion of the changes nodesBefore read.
func writeChanges(b bucketstore.Bucket, before json.RawMessage, changes []nodeBefore, o specs.RepoWriteOptions, after specs.Header, src *nodeSource) error {
	if err := writeDelta(b, before, changes, o, after); err != nil {
		return err
	}
	w := &nodeWriter{nodes: src.b} // the nodes bucket, open already
	for _, c := range changes {
		if c.n == nil {
			if err := w.remove(c.id, c.old); err != nil {
				return err
			}
			continue
		}
		var oldKids specs.ChildList
		if c.oldN != nil {
			oldKids = c.oldN.Children
		}
		val, err := w.write(c.n, c.old, c.prev, oldKids, c.patch)
		if err != nil {
			return err
		}
		src.shared.put(src.specID, c.id, val, c.n)
	}
	return nil
}

// nodesBefore reads what each changed node was (in id order) and what the
// reverse delta records of it. A written node that had chunks gets the
// diff of its children (the history's patch, and what tells its write
// which chunks change): the one O(children) pass of a write.
func nodesBefore(put []*specs.Node, deleted []string, src *nodeSource) ([]nodeBefore, error) {
	changes := make([]nodeBefore, 0, len(put)+len(deleted))
	for _, n := range put {
		changes = append(changes, nodeBefore{id: n.ID, n: n})
	}
	for _, id := range deleted {
		changes = append(changes, nodeBefore{id: id})
	}
	slices.SortFunc(changes, func(x, y nodeBefore) int { return strings.Compare(x.id, y.id) })
	changes = slices.CompactFunc(changes, func(x, y nodeBefore) bool { return x.id == y.id })
	for i := range changes {
		c := &changes[i]
		c.old = src.raw(c.id)
		if c.old == nil {
			continue
		}
		sn, err := parseStored(c.old)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", c.id, err)
		}
		c.prev = sn
		if !sn.chunked {
			c.record = c.old
			continue
		}
		old, ok := src.Get(c.id)
		if !ok {
			return nil, fmt.Errorf("node %s does not decode: %w", c.id, src.err)
		}
		c.oldN = old
		if c.n == nil { // deleted: nothing after it to patch from
			if c.record, err = specs.EncodeNode(old); err != nil {
				return nil, err
			}
			continue
		}
		c.record = sn.json
		c.patch, c.hasPatch = diffChildren(old.Children, c.n.Children), true
	}
	return changes, nil
}

// storedBefore looks up a changed node's stored value before the version
// (nil: absent, or not among changes) in changes (nodesBefore's, in id
// order): the values nodesBefore read, not read again.
func storedBefore(changes []nodeBefore) func(id string) []byte {
	return func(id string) []byte {
		i, ok := slices.BinarySearchFunc(changes, id, func(c nodeBefore, id string) int { return strings.Compare(c.id, id) })
		if !ok {
			return nil
		}
		return changes[i].old
	}
}

func writeDelta(b bucketstore.Bucket, before json.RawMessage, changes []nodeBefore, o specs.RepoWriteOptions, after specs.Header) error {
	raw, err := encodeHistoryRecord(historyRecord{Version: after.Version, Timestamp: after.LastUpdated, Action: o.Action, Author: o.Author, HeaderBefore: before}, changes)
	if err != nil {
		return err
	}
	hist := b.Bucket(bucketHistory)
	key := u64(uint64(after.Version)) // reused below: the bucket keeps no key
	if err := hist.Put(key, raw); err != nil {
		return err
	}
	limit := o.Keep
	if limit <= 0 {
		limit = DefaultHistoryKeep
	}
	// Prune: keep the newest `limit` versions. Versions are consecutive
	// (every write records version+1, and pruning always takes the oldest),
	// so the ones to drop are cutoff, cutoff-1, ... down to the first absent
	// one (usually just cutoff): point reads, where a cursor walk would read
	// the whole history on every mutation on an engine whose cursor loads
	// its bucket (etcd).
	cutoff := after.Version - int64(limit)
	for v := cutoff; v >= 1; v-- {
		binary.BigEndian.PutUint64(key, uint64(v))
		if hist.Get(key) == nil {
			break
		}
		if err := hist.Delete(key); err != nil {
			return err
		}
	}
	return nil
}

// encodeHistoryRecord encodes rec with ChildrenBefore holding the patch
// of each change that has one and NodesBefore each change's record (null
// when absent), byte for byte what json.Marshal of that record gives
// (rec's own ChildrenBefore and NodesBefore are not read), without
// reflection and without json.Marshal's re-scan and compaction of every
// stored node it embeds. Stored nodes are compact JSON already
// (EncodeNode), and so is the header before (json.Marshal); one that is
// not (an unknown key's raw value kept from an import) goes through
// json.Marshal. changes are in id order (json.Marshal's order of map
// keys), each id once.
func encodeHistoryRecord(rec historyRecord, changes []nodeBefore) ([]byte, error) {
	size := 160 + len(rec.Timestamp) + len(rec.Action) + len(rec.Author) + len(rec.HeaderBefore)
	for _, c := range changes {
		size += 2*len(c.id) + len(c.record) + 64 // quotes, escapes, colon, comma, null, a patch
		for _, id := range c.patch.Mid {
			size += len(id) + 3
		}
	}
	out := append(make([]byte, 0, size), `{"version":`...)
	out = strconv.AppendInt(out, rec.Version, 10)
	out = core.AppendJSONString(append(out, `,"timestamp":`...), rec.Timestamp)
	if rec.Action != "" {
		out = core.AppendJSONString(append(out, `,"action":`...), rec.Action)
	}
	if rec.Author != "" {
		out = core.AppendJSONString(append(out, `,"author":`...), rec.Author)
	}
	out, err := appendRawJSON(append(out, `,"header_before":`...), rec.HeaderBefore)
	if err != nil {
		return nil, err
	}
	out = appendChildrenBefore(out, changes)
	out = append(out, `,"nodes_before":{`...)
	for i, c := range changes {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(core.AppendJSONString(out, c.id), ':')
		if out, err = appendRawJSON(out, c.record); err != nil {
			return nil, err
		}
	}
	return append(out, "}}"...), nil
}

// appendChildrenBefore appends the record's "children_before" member: the
// changes' patches (none: no member, as omitempty).
func appendChildrenBefore(out []byte, changes []nodeBefore) []byte {
	first := true
	for _, c := range changes {
		if !c.hasPatch {
			continue
		}
		if first {
			out = append(out, `,"children_before":{`...)
			first = false
		} else {
			out = append(out, ',')
		}
		out = c.patch.appendJSON(append(core.AppendJSONString(out, c.id), ':'))
	}
	if !first {
		out = append(out, '}')
	}
	return out
}

// appendRawJSON appends raw as json.Marshal encodes a json.RawMessage
// (nil: null): as it is when compact, else compacted by json.Marshal.
func appendRawJSON(out, raw []byte) ([]byte, error) {
	switch {
	case raw == nil:
		return append(out, "null"...), nil
	case compactJSON(raw):
		return append(out, raw...), nil
	}
	v, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	return append(out, v...), nil
}

// compactJSON reports that b needs no change by json.Marshal's compaction:
// no whitespace outside strings, nothing it escapes for HTML (<, >, &,
// U+2028, U+2029).
func compactJSON(b []byte) bool {
	in, esc := false, false
	for i, c := range b {
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9):
			return false
		case in:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return !in
}

// History lists versions newest first, below `before` (0 = from the newest),
// at most limit; more reports whether older ones exist.
func (s *Repo) History(ctx context.Context, specID string, before int64, limit int) (out []specs.RepoVersion, more bool, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		out, more = []specs.RepoVersion{}, false // each run reads afresh (bucketstore.Engine)
		b, err := specBucket(tx, specID)
		if err != nil {
			return err
		}
		c := b.Bucket(bucketHistory).Cursor()
		var k, v []byte
		if before <= 0 {
			k, v = c.Last()
		} else {
			k, _ = c.Seek(u64(uint64(before)))
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			if len(out) == limit {
				more = true
				return nil
			}
			var rec historyRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return core.Internal(err)
			}
			ids := make([]string, 0, len(rec.NodesBefore))
			for id := range rec.NodesBefore {
				ids = append(ids, id)
			}
			specs.SortIDs(ids)
			out = append(out, specs.RepoVersion{Version: rec.Version, Timestamp: rec.Timestamp, Action: rec.Action, Author: rec.Author, ChangedNodes: ids})
		}
		return nil
	})
	return out, more, err
}

// deletedNode is err, unless err is TASK_NOT_FOUND for a node the kept
// history shows deleted: then the refusal names it as deleted
// (details.deleted: the version that removed it, its timestamp, action and
// author), offers no other node as a match (a sibling is not what was
// meant), and its step is the spec's history.
func deletedNode(b bucketstore.Bucket, specID string, err error) error {
	var e *core.Error
	if !errors.As(err, &e) || e.Code != errcode.TaskNotFound {
		return err
	}
	id, _ := e.Details["received"].(string)
	rec, ok := removal(b, id)
	if !ok {
		return err
	}
	e.Message = fmt.Sprintf("node %q was deleted from spec %s in version %d (%s)", id, specID, rec.Version, rec.Timestamp)
	e.WithDetail("deleted", map[string]any{"version": rec.Version, "timestamp": rec.Timestamp, "action": rec.Action, "author": rec.Author})
	return e.WithStep("spec-history", map[string]any{"spec_id": specID}, nil)
}

// removal is the kept version that deleted node id: the newest history
// record that changed id, when id existed before it (a node that exists
// now is not looked up: its caller found none).
func removal(b bucketstore.Bucket, id string) (historyRecord, bool) {
	if id == "" {
		return historyRecord{}, false
	}
	key := []byte(`"` + id + `":`)
	c := b.Bucket(bucketHistory).Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if !bytes.Contains(v, key) {
			continue
		}
		var rec historyRecord
		if json.Unmarshal(v, &rec) != nil {
			return historyRecord{}, false
		}
		before, changed := rec.NodesBefore[id]
		if !changed {
			continue
		}
		return rec, string(before) != "null"
	}
	return historyRecord{}, false
}

// HistoryCount is how many versions History lists: the history's keys
// are contiguous (every mutation adds the next version, pruning drops the
// oldest), so their count is the span between the first and the last key
// — two cursor seeks, not a scan.
func (s *Repo) HistoryCount(ctx context.Context, specID string) (n int, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		b, err := specBucket(tx, specID)
		if err != nil {
			return err
		}
		c := b.Bucket(bucketHistory).Cursor()
		first, _ := c.First()
		last, _ := c.Last()
		if first != nil && last != nil {
			n = int(binary.BigEndian.Uint64(last)-binary.BigEndian.Uint64(first)) + 1
		}
		return nil
	})
	return n, err
}

// versionNotFound is VERSION_NOT_FOUND with the oldest kept version.
func versionNotFound(specID string, v, oldest, current int64) *core.Error {
	return core.NewError(errcode.VersionNotFound,
		fmt.Sprintf("Spec %s has no stored version %d (kept: %d to %d).", specID, v, oldest, current),
		map[string]any{"field": "version", "received": v, "oldest_version": oldest, "current_version": current}).
		WithStep("spec-history", map[string]any{"spec_id": specID}, nil)
}

// AtVersion is a spec as it was at one version: its header and, for the
// nodes that changed since, their value then (absent = did not exist).
type AtVersion struct {
	Header specs.Header
	// Changed maps node id → the node at that version (nil = absent then)
	// for every node changed after it; nodes not in Changed are unchanged
	// since and equal to their current value.
	Changed map[string]*specs.Node
	Current *specs.Spec // a view of the current spec (valid inside the callback only)
}

// CurrentNode is the node as it is now (nil if absent).
func (a *AtVersion) CurrentNode(id string) *specs.Node { return a.Current.Node(id) }

// CurrentHeader is the header as it is now.
func (a *AtVersion) CurrentHeader() specs.Header { return a.Current.Header }

// VersionHeader is the header at the version.
func (a *AtVersion) VersionHeader() specs.Header { return a.Header }

// ChangedSince lists the nodes changed after the version, in id order.
func (a *AtVersion) ChangedSince() []string {
	ids := make([]string, 0, len(a.Changed))
	for id := range a.Changed {
		ids = append(ids, id)
	}
	specs.SortIDs(ids)
	return ids
}

// NodeAt returns the node id as it was at the version (nil if absent then).
func (a *AtVersion) NodeAt(id string) *specs.Node {
	if n, ok := a.Changed[id]; ok {
		return n
	}
	return a.Current.Node(id)
}

// Document assembles the whole spec document at the version.
func (a *AtVersion) Document() specs.Document {
	h := map[string]*specs.Node{}
	for _, id := range a.Current.IDs() {
		if n := a.NodeAt(id); n != nil {
			h[id] = n
		}
	}
	for id, n := range a.Changed {
		if n != nil {
			h[id] = n
		}
	}
	view := specs.NewSpecView(a.Header, specs.MemorySource(h))
	return view.Document()
}

// ReadVersion runs fn over specID as it was at version (the current version
// reads the current spec). Only the reverse deltas newer than version are
// read. Errors: SPEC_NOT_FOUND, VERSION_NOT_FOUND (pruned or never existed).
func (s *Repo) ReadVersion(ctx context.Context, specID string, version int64, fn func(v specs.VersionView) error) error {
	return s.view(ctx, func(tx bucketstore.Tx) error {
		b, h, err := loadSpec(tx, specID)
		if err != nil {
			return err
		}
		return readVersionTx(b, specID, h, version, func(a *AtVersion) error { return fn(a) })
	})
}

// readVersionTx reconstructs specID at version inside an open transaction.
func readVersionTx(b bucketstore.Bucket, specID string, h specs.Header, version int64, fn func(a *AtVersion) error) error {
	src := newSource(b)
	a := &AtVersion{Header: h, Changed: map[string]*specs.Node{}, Current: specs.NewSpecView(h, src)}
	if version > h.Version || version < 0 {
		return versionNotFound(specID, version, oldestVersion(b, h.Version), h.Version)
	}
	if version < h.Version {
		c := b.Bucket(bucketHistory).Cursor()
		// Apply deltas from the newest down to version+1; each overwrites
		// with an older value, so the last applied wins.
		first, _ := c.First()
		if first == nil || int64(binary.BigEndian.Uint64(first)) > version+1 {
			return versionNotFound(specID, version, oldestVersion(b, h.Version), h.Version)
		}
		for k, v := c.Last(); k != nil && int64(binary.BigEndian.Uint64(k)) > version; k, v = c.Prev() {
			if err := a.undo(v); err != nil {
				return core.Internal(err)
			}
		}
	}
	if err := fn(a); err != nil {
		return err
	}
	if src.err != nil {
		return core.Internal(src.err)
	}
	return nil
}

// undo applies one history record (raw) to a: the header and the changed
// nodes become what they were before its version. A node recorded without
// its children gets them from its value after the version (what a holds
// for it so far, else its current value) through the record's patch.
func (a *AtVersion) undo(raw []byte) error {
	var rec historyRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return err
	}
	var hb specs.Header
	if err := json.Unmarshal(rec.HeaderBefore, &hb); err != nil {
		return err
	}
	a.Header = hb
	for id, raw := range rec.NodesBefore {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			a.Changed[id] = nil
			continue
		}
		n, err := specs.DecodeNode(id, raw)
		if err != nil {
			return err
		}
		if patch, ok := rec.ChildrenBefore[id]; ok {
			later, seen := a.Changed[id]
			if !seen {
				later = a.Current.Node(id)
			}
			if later == nil {
				return fmt.Errorf("history %d: node %s has a children patch but no later value", rec.Version, id)
			}
			if n.Children, err = patch.apply(later.Children); err != nil {
				return fmt.Errorf("history %d: node %s: %w", rec.Version, id, err)
			}
		}
		a.Changed[id] = n
	}
	return nil
}

// oldestVersion is the oldest version that can still be reconstructed.
func oldestVersion(b bucketstore.Bucket, current int64) int64 {
	k, _ := b.Bucket(bucketHistory).Cursor().First()
	if k == nil {
		return current
	}
	return int64(binary.BigEndian.Uint64(k)) - 1
}

// RollbackSpec restores specID to how it was at version, as a new version
// (history keeps the state it replaces; the journal is never touched).
// Nodes changed since are written back (or removed when they did not exist
// then); the header's title and metadata are restored, while lifecycle,
// version and timestamps move forward. Errors: SPEC_NOT_FOUND,
// VERSION_NOT_FOUND, VERSION_CONFLICT.
func (s *Repo) RollbackSpec(ctx context.Context, specID string, version int64, o specs.RepoWriteOptions, now func() string) (specs.RepoWriteResult, error) {
	var at *AtVersion
	var res specs.RepoWriteResult
	// Reconstruct and write in one transaction, so nothing can change between.
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		b, h, hraw, err := s.loadForWrite(tx, specID, o)
		if err != nil {
			return err
		}
		if version == h.Version {
			res.Version = h.Version
			return nil
		}
		// Reuse the read path against this write transaction.
		if err := readVersionTx(b, specID, h, version, func(a *AtVersion) error { at = a; return nil }); err != nil {
			return err
		}
		nodes := b.Bucket(bucketNodes)
		var put []*specs.Node
		var deleted []string
		ids := make([]string, 0, len(at.Changed))
		for id := range at.Changed {
			ids = append(ids, id)
		}
		specs.SortIDs(ids)
		for _, id := range ids {
			if n := at.Changed[id]; n != nil {
				put = append(put, n)
			} else if nodes.Get([]byte(id)) != nil {
				deleted = append(deleted, id)
			}
		}
		newHeader := h.Clone()
		newHeader.Title = at.Header.Title
		newHeader.Metadata = at.Header.Metadata
		newHeader.Status, newHeader.ProgressPercentage, newHeader.CurrentPhase = at.Header.Status, at.Header.ProgressPercentage, at.Header.CurrentPhase
		newHeader.TotalTasks, newHeader.CompletedTasks = at.Header.TotalTasks, at.Header.CompletedTasks
		newHeader.Version = h.Version + 1
		newHeader.LastUpdated = now()
		res.Version = newHeader.Version
		res.Changes = describeChanges(put, deleted, func(id string) []byte { return nodes.Get([]byte(id)) }, true)
		if o.DryRun {
			res.DryRun = true
			return errDryRun
		}
		before, err := headerJSON(h, hraw)
		if err != nil {
			return core.Internal(err)
		}
		if err := writeVersion(b, before, put, deleted, o, newHeader, s.newSource(specID, b)); err != nil {
			return core.Internal(err)
		}
		if err := putHeader(b, newHeader); err != nil {
			return err
		}
		return indexSpec(tx, newHeader, h.Lifecycle)
	})
	if err == errDryRun {
		err = nil
	}
	return res, err
}
