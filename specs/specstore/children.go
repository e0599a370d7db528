package specstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// Children in chunks (layout 3).
//
// A node's list of children is not kept in the node's own value: a phase
// holds thousands of tasks, and a task add rewrote the whole list (and
// copied it into the history) every time. A node with children is stored
// as
//
//	nodes/<id>               0x00 'c' uvarint(k) uvarint(size_1..size_k) stamp(8) node-JSON
//	nodes/<id>\x00<i:4 BE>   chunk i of its children: a JSON array of ids
//
// where node-JSON is the node with an empty children list, k the number of
// chunks and size_i the ids in chunk i. (The chunks sort right after their
// node, and an engine that fetches a spec's changed nodes in one read gets
// them with it; node ids never hold a NUL, and the bucket's node ids are
// its keys without one.) A write touches only the chunks its change
// overlaps (an add at the end: the last chunk, at most chunkMax ids), and
// records in history the node without its children plus a patch of the
// list (childrenPatch) instead of the whole old node. The stamp changes
// whenever the chunks do (a hash of the previous stamp, the new sizes and
// the chunks written), so a node's value differs whenever its children do:
// the decoded-node cache, which checks a node by its value, never pairs a
// value with stale children.
//
// A value that starts with '{' is a node with its children inline (what
// layouts 1 and 2 wrote, and what a node without children still is); it
// reads as before and turns into chunks on its next write (lazy: each
// conversion is part of the write's own transaction).

const (
	chunkMax   = 128 // a chunk never holds more ids
	chunkSplit = 64  // what an overfull run of ids is cut into
	chunkTag   = 'c'
)

// storedNode is a node's stored value, parsed.
type storedNode struct {
	json    []byte // the node's JSON (children [] when chunked)
	sizes   []int  // the chunks' sizes; nil for a node with its children inline
	stamp   uint64
	chunked bool
}

// isChunkKey reports whether a key of the nodes bucket is a chunk's, not a
// node's.
func isChunkKey(k []byte) bool { return bytes.IndexByte(k, 0) >= 0 }

// parseStored splits a stored node value.
func parseStored(v []byte) (storedNode, error) {
	if len(v) == 0 || v[0] != 0 {
		return storedNode{json: v}, nil
	}
	if len(v) < 2 || v[1] != chunkTag {
		return storedNode{}, errors.New("unknown node encoding")
	}
	rest := v[2:]
	k, n := binary.Uvarint(rest)
	if n <= 0 || k > uint64(len(rest)) {
		return storedNode{}, errors.New("bad chunk count")
	}
	rest = rest[n:]
	sizes := make([]int, k)
	for i := range sizes {
		s, n := binary.Uvarint(rest)
		if n <= 0 || s == 0 || s > chunkMax {
			return storedNode{}, errors.New("bad chunk size")
		}
		sizes[i] = int(s)
		rest = rest[n:]
	}
	if len(rest) < 8 {
		return storedNode{}, errors.New("truncated node value")
	}
	return storedNode{json: rest[8:], sizes: sizes, stamp: binary.BigEndian.Uint64(rest), chunked: true}, nil
}

// encodeStored is the stored value of node JSON js whose children are in
// chunks of sizes, with stamp.
func encodeStored(js []byte, sizes []int, stamp uint64) []byte {
	out := make([]byte, 0, len(js)+2+binary.MaxVarintLen64*(len(sizes)+1)+8)
	out = append(out, 0, chunkTag)
	out = binary.AppendUvarint(out, uint64(len(sizes)))
	for _, s := range sizes {
		out = binary.AppendUvarint(out, uint64(s))
	}
	out = binary.BigEndian.AppendUint64(out, stamp)
	return append(out, js...)
}

func chunkKey(id string, i int) []byte {
	k := make([]byte, 0, len(id)+5)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(i))
}

// decodeStored decodes the node stored under id as v, reading its chunks
// from nodes (its bucket) when it has them.
func decodeStored(id string, v []byte, nodes bucketstore.Bucket) (*specs.Node, error) {
	sn, err := parseStored(v)
	if err != nil {
		return nil, err
	}
	n, err := specs.DecodeNode(id, sn.json)
	if err != nil || !sn.chunked {
		return n, err
	}
	total := 0
	for _, s := range sn.sizes {
		total += s
	}
	kids := make([]string, 0, total)
	for i, s := range sn.sizes {
		var chunk []string
		raw := nodes.Get(chunkKey(id, i))
		if raw == nil {
			return nil, fmt.Errorf("children chunk %d missing", i)
		}
		if err := json.Unmarshal(raw, &chunk); err != nil {
			return nil, fmt.Errorf("children chunk %d: %w", i, err)
		}
		if len(chunk) != s {
			return nil, fmt.Errorf("children chunk %d holds %d ids, the node says %d", i, len(chunk), s)
		}
		kids = append(kids, chunk...)
	}
	n.Children = specs.ChildListOf(kids)
	return n, nil
}

// childrenPatch rebuilds a node's children before a version from its
// children after it: Head ids from the start of the later list, then Mid,
// then Tail ids from its end. An add at the end is {Head: n}.
type childrenPatch struct {
	Head int      `json:"head"`
	Mid  []string `json:"mid,omitempty"`
	Tail int      `json:"tail"`
}

// diffChildren is the patch from after back to before (its Head and Tail
// are the lists' common prefix and suffix). The common prefix is found
// without reading the head part the lists share (ChildList.CommonPrefix)
// and the suffix stops at the first difference: a task added near the end
// of a phase costs the lists' tails, not their lengths.
func diffChildren(before, after specs.ChildList) childrenPatch {
	p := before.CommonPrefix(after)
	nb, na := before.Len(), after.Len()
	q := 0
	for q < nb-p && q < na-p && before.At(nb-1-q) == after.At(na-1-q) {
		q++
	}
	return childrenPatch{Head: p, Mid: before.Range(p, nb-q), Tail: q}
}

// appendJSON appends c as json.Marshal encodes it.
func (c childrenPatch) appendJSON(out []byte) []byte {
	out = strconv.AppendInt(append(out, `{"head":`...), int64(c.Head), 10)
	if len(c.Mid) > 0 {
		out = appendIDs(append(out, `,"mid":`...), c.Mid)
	}
	out = strconv.AppendInt(append(out, `,"tail":`...), int64(c.Tail), 10)
	return append(out, '}')
}

// same reports whether the patch d of before against after says they are
// the same list (the common prefix is all of both).
func (c childrenPatch) same(before, after specs.ChildList) bool {
	return c.Head == before.Len() && c.Head == after.Len()
}

// apply rebuilds the earlier list from after.
func (c childrenPatch) apply(after specs.ChildList) (specs.ChildList, error) {
	n := after.Len()
	if c.Head < 0 || c.Tail < 0 || c.Head+c.Tail > n {
		return specs.ChildList{}, fmt.Errorf("children patch %d+%d does not fit %d children", c.Head, c.Tail, n)
	}
	out := make([]string, 0, c.Head+len(c.Mid)+c.Tail)
	out = append(out, after.Range(0, c.Head)...)
	out = append(out, c.Mid...)
	return specs.ChildListOf(append(out, after.Range(n-c.Tail, n)...)), nil
}

// nodeWriter writes nodes (and their chunks) into a spec's nodes bucket.
type nodeWriter struct{ nodes bucketstore.Bucket }

func newNodeWriter(spec bucketstore.Bucket) *nodeWriter {
	return &nodeWriter{nodes: spec.Bucket(bucketNodes)}
}

// put stores n, whose stored value was old (nil: absent) with children
// oldKids, and returns the value stored. Only the chunks the change of
// the children overlaps are written.
func (w *nodeWriter) put(n *specs.Node, old []byte, oldKids specs.ChildList) ([]byte, error) {
	prev, err := parseStored(old)
	if err != nil {
		return nil, err
	}
	return w.write(n, old, prev, oldKids, diffChildren(oldKids, n.Children))
}

// write stores n, whose stored value was old (nil: absent), parsed as
// prev, with children oldKids; d is diffChildren(oldKids, n.Children).
// It returns the value stored, never old itself, which nobody changes
// afterwards. A value equal to old is not put again (a Put of the same
// bytes still dirties the page).
func (w *nodeWriter) write(n *specs.Node, old []byte, prev storedNode, oldKids specs.ChildList, d childrenPatch) ([]byte, error) {
	plain := *n
	plain.Children = specs.ChildList{}
	js, err := specs.EncodeNode(&plain)
	if err != nil {
		return nil, err
	}
	var val []byte
	switch {
	case n.Children.Len() == 0:
		if err := w.dropChunks(n.ID, 0, len(prev.sizes)); err != nil {
			return nil, err
		}
		val = js
	case prev.chunked && d.same(oldKids, n.Children):
		// The children are as they were: keep the chunks and their stamp.
		head := old[:len(old)-len(prev.json)]
		val = append(append(make([]byte, 0, len(head)+len(js)), head...), js...)
	default:
		sizes, stamp, err := w.writeChunks(n.ID, prev.sizes, prev.stamp, oldKids, n.Children, d)
		if err != nil {
			return nil, err
		}
		val = encodeStored(js, sizes, stamp)
	}
	if old != nil && bytes.Equal(val, old) {
		return val, nil // old's bytes, but not the transaction's memory: callers may keep it
	}
	if err := w.nodes.Put([]byte(n.ID), val); err != nil {
		return nil, err
	}
	return val, nil
}

// remove deletes the node id (stored as old) and its chunks.
func (w *nodeWriter) remove(id string, old []byte) error {
	prev, err := parseStored(old)
	if err != nil {
		return err
	}
	if err := w.dropChunks(id, 0, len(prev.sizes)); err != nil {
		return err
	}
	return w.nodes.Delete([]byte(id))
}

// dropChunks deletes chunks [from, to) of id.
func (w *nodeWriter) dropChunks(id string, from, to int) error {
	for i := from; i < to; i++ {
		if err := w.nodes.Delete(chunkKey(id, i)); err != nil {
			return err
		}
	}
	return nil
}

// writeChunks stores kids, which replace oldKids (kept in chunks of
// oldSizes; nil: none), and returns the new sizes. Chunks before and
// after the changed run of ids (d: diffChildren(oldKids, kids)) are kept;
// those it overlaps are rewritten
// (cut in chunkSplit pieces once over chunkMax), and when their number
// changes the chunks after them move. The new stamp hashes the old one,
// the new sizes and every chunk written.
func (w *nodeWriter) writeChunks(id string, oldSizes []int, stamp uint64, oldKids, kids specs.ChildList, d childrenPatch) ([]int, uint64, error) {
	total := 0
	for _, s := range oldSizes {
		total += s
	}
	nOld := oldKids.Len()
	if total != nOld { // not the chunks of oldKids: rewrite them all
		if err := w.dropChunks(id, 0, len(oldSizes)); err != nil {
			return nil, 0, err
		}
		oldSizes, nOld = nil, 0
	}
	k := len(oldSizes)
	i, j, from, to := changedRun(oldSizes, nOld, d)
	pieces := splitChunks(to + kids.Len() - nOld - from)
	sizes := make([]int, 0, k+len(pieces))
	sizes = append(sizes, oldSizes[:i]...)
	sizes = append(sizes, pieces...)
	sizes = append(sizes, oldSizes[j+1:]...)
	end := i + len(pieces) // the rewritten run; when the count changed, every chunk after it moves
	if len(pieces) != j-i+1 {
		end = len(sizes)
	}
	h := fnv.New64a()
	var num [8]byte
	h.Write(binary.BigEndian.AppendUint64(num[:0], stamp))
	for _, s := range sizes {
		h.Write(binary.BigEndian.AppendUint64(num[:0], uint64(s)))
	}
	pos := from
	for c := i; c < end; c++ {
		raw := encodeIDs(kids.Range(pos, pos+sizes[c]))
		key := chunkKey(id, c)
		if err := w.nodes.Put(key, raw); err != nil {
			return nil, 0, err
		}
		h.Write(key)
		h.Write(raw)
		pos += sizes[c]
	}
	if err := w.dropChunks(id, len(sizes), k); err != nil {
		return nil, 0, err
	}
	return sizes, h.Sum64(), nil
}

// changedRun finds the old chunks [i, j] that hold the old ids [from, to)
// a change from the nOld old ids (in chunks of oldSizes) touches, d being the diff
// of the change (only added at the end: the last chunk); with no old
// chunks, i = 0 and j = -1. The cost is O(chunks), not O(ids).
func changedRun(oldSizes []int, nOld int, d childrenPatch) (i, j, from, to int) {
	k := len(oldSizes)
	if k == 0 {
		return 0, -1, 0, 0
	}
	first, last := d.Head, nOld-d.Tail-1 // the changed old ids (last < first: none)
	i, from = k-1, nOld-oldSizes[k-1]
	start := 0
	for c, s := range oldSizes {
		if first < start+s {
			i, from = c, start
			break
		}
		start += s
	}
	j, to = i, from+oldSizes[i]
	for to <= last {
		j++
		to += oldSizes[j]
	}
	return i, j, from, to
}

// splitChunks cuts n ids into chunk sizes: one chunk up to chunkMax, else
// pieces of about chunkSplit.
func splitChunks(n int) []int {
	if n == 0 {
		return nil
	}
	if n <= chunkMax {
		return []int{n}
	}
	m := (n + chunkSplit - 1) / chunkSplit
	out := make([]int, m)
	for c := range out {
		out[c] = n / m
		if c < n%m {
			out[c]++
		}
	}
	return out
}

// encodeIDs is json.Marshal(ids) for a non-nil list, byte for byte,
// without reflection: one allocation of the exact size for the usual ids
// (see core.AppendJSONString).
func encodeIDs(ids []string) []byte {
	size := 2
	for _, id := range ids {
		size += len(id) + 3
	}
	return appendIDs(make([]byte, 0, size), ids)
}

// appendIDs appends json.Marshal(ids) of a non-nil list.
func appendIDs(out []byte, ids []string) []byte { return specs.AppendJSONStrings(out, ids) }
