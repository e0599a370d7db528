package specs

import (
	"encoding/json"
	"iter"
	"slices"
	"sync/atomic"

	"github.com/specd/specd/core"
)

// ChildList is a node's ordered list of child ids (Node.Children). A list
// never changes once made: nodes, views, the store's node cache and
// goroutines share lists freely, and an edit (Inserted, Removed, ...)
// returns a new list.
//
// A list is a prefix of a shared, append-only array of ids (its head)
// followed by a short tail of its own. An insertion among the last
// tailKeep ids (a task added to a phase, before the phase's verify nodes,
// or appended) copies only the tail; when the tail outgrows tailMax its
// first ids move into the head array, in place when this list is the
// array's furthest extension (an atomic claim of the slots), else into a
// new array of twice the size. An add near the end therefore costs O(1)
// amortised in time and memory, however long the list; an edit elsewhere
// (an insertion in the middle, a removal) rebuilds the list, O(n).
//
// The zero value is the empty list (nil, as Slice reports it).
type ChildList struct {
	head  *childArray
	nhead int      // the list's first nhead ids are head.ids[:nhead]
	tail  []string // the rest; never written once the list exists
}

// childArray is a head array shared by lists. Its slots below used are
// written once, before used passes them, and never change; a list that
// ends its head part at used may claim the slots after it.
type childArray struct {
	ids  []string // len(ids) == cap(ids): the slots
	used atomic.Int64
}

const (
	tailMax  = 64 // a tail longer than this moves its first ids into the head
	tailKeep = 32 // the ids a tail keeps when it spills
)

// ChildListOf is the list of ids, which it keeps (the caller must not
// modify ids afterwards). A nil ids is the nil list, an empty non-nil one
// the empty list: Slice returns them as they were given.
func ChildListOf(ids []string) ChildList {
	if len(ids) <= tailMax {
		return ChildList{tail: ids}
	}
	k := len(ids) - tailKeep
	a := &childArray{ids: ids[:k:k]}
	a.used.Store(int64(k))
	return ChildList{head: a, nhead: k, tail: ids[k:]}
}

// Len is the number of ids.
func (l ChildList) Len() int { return l.nhead + len(l.tail) }

// At is the id at index i (0 ≤ i < Len).
func (l ChildList) At(i int) string {
	if i < l.nhead {
		return l.head.ids[i]
	}
	return l.tail[i-l.nhead]
}

// All yields every index and id in order.
func (l ChildList) All() iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for i := 0; i < l.nhead; i++ {
			if !yield(i, l.head.ids[i]) {
				return
			}
		}
		for i, id := range l.tail {
			if !yield(l.nhead+i, id) {
				return
			}
		}
	}
}

// Slice is the ids as a slice the caller must not modify: the list's own
// memory when its ids are in one piece (no copy), else a new copy.
func (l ChildList) Slice() []string {
	switch {
	case l.nhead == 0:
		return l.tail
	case len(l.tail) == 0:
		return l.head.ids[:l.nhead:l.nhead]
	}
	return l.Range(0, l.Len())
}

// Range is ids [from, to) as a slice the caller must not modify (a copy
// only when the range spans the head and the tail).
func (l ChildList) Range(from, to int) []string {
	switch {
	case from >= l.nhead:
		return l.tail[from-l.nhead : to-l.nhead : to-l.nhead]
	case to <= l.nhead:
		return l.head.ids[from:to:to]
	}
	out := make([]string, 0, to-from)
	out = append(out, l.head.ids[from:l.nhead]...)
	return append(out, l.tail[:to-l.nhead]...)
}

// Index is the index of the first id equal to id, or -1.
func (l ChildList) Index(id string) int { return l.indexBelow(id, l.Len()) }

// indexBelow is the index of the first id equal to id among the list's
// first limit ids (limit ≤ Len), or -1.
func (l ChildList) indexBelow(id string, limit int) int {
	if h := min(limit, l.nhead); h > 0 {
		if i := slices.Index(l.head.ids[:h], id); i >= 0 {
			return i
		}
	}
	if limit > l.nhead {
		if i := slices.Index(l.tail[:limit-l.nhead], id); i >= 0 {
			return l.nhead + i
		}
	}
	return -1
}

// Contains reports whether id is in the list.
func (l ChildList) Contains(id string) bool { return l.Index(id) >= 0 }

// isNil reports whether the list is the nil list (ChildListOf(nil)).
func (l ChildList) isNil() bool { return l.nhead == 0 && l.tail == nil }

// same reports whether l and o are the very same list: the same head part
// of the same array and the same tail memory. (Lists never change, so
// the same list holds the same ids.)
func (l ChildList) same(o ChildList) bool {
	return l.head == o.head && l.nhead == o.nhead && len(l.tail) == len(o.tail) &&
		(len(l.tail) == 0 || &l.tail[0] == &o.tail[0])
}

// sharedPrefix is a number of leading ids that l and o are known to have
// in common without reading them: their common head part when they share
// a head array (its slots never change).
func (l ChildList) sharedPrefix(o ChildList) int {
	if l.head == nil || l.head != o.head {
		return 0
	}
	return min(l.nhead, o.nhead)
}

// CommonPrefix is the length of the longest common prefix of l and o.
// Ids of a head array the two share are not read: the usual cost is the
// lists' tails, not their lengths.
func (l ChildList) CommonPrefix(o ChildList) int {
	p := l.sharedPrefix(o)
	for p < l.Len() && p < o.Len() && l.At(p) == o.At(p) {
		p++
	}
	return p
}

// prefixEqual reports whether the first k ids of l and o (both at least
// k long) are the same, reading only those after the head part they
// share.
func (l ChildList) prefixEqual(o ChildList, k int) bool {
	for p := l.sharedPrefix(o); p < k; p++ {
		if l.At(p) != o.At(p) {
			return false
		}
	}
	return true
}

// Equal reports whether l and o hold the same ids in the same order.
func (l ChildList) Equal(o ChildList) bool {
	return l.Len() == o.Len() && l.CommonPrefix(o) == l.Len()
}

// Inserted is l with id inserted at index i (0 ≤ i ≤ Len): O(1)
// amortised when i is among the last tailKeep positions (see ChildList),
// else a rebuild of the list.
func (l ChildList) Inserted(i int, id string) ChildList {
	if i < l.nhead {
		return ChildListOf(insertAt(l.Slice(), i, id))
	}
	j := i - l.nhead
	tail := make([]string, 0, len(l.tail)+1)
	tail = append(tail, l.tail[:j]...)
	tail = append(tail, id)
	tail = append(tail, l.tail[j:]...)
	out := ChildList{head: l.head, nhead: l.nhead, tail: tail}
	if len(tail) > tailMax {
		out = out.spilled()
	}
	return out
}

// spilled is l (whose tail is its own, unshared) with the first ids of its
// tail moved into the head: into the head array's slots after l's head
// part when l claims them, else into a new array.
func (l ChildList) spilled() ChildList {
	move := l.tail[:len(l.tail)-tailKeep]
	n := l.nhead + len(move)
	a := l.head
	if a == nil || n > len(a.ids) || !a.used.CompareAndSwap(int64(l.nhead), int64(n)) {
		a = &childArray{ids: make([]string, max(2*n, 4*tailMax))}
		if l.head != nil {
			copy(a.ids, l.head.ids[:l.nhead])
		}
		a.used.Store(int64(n))
	}
	copy(a.ids[l.nhead:n], move)
	return ChildList{head: a, nhead: n, tail: l.tail[len(move):]}
}

// Removed is l without any id equal to id (a rebuild of the list; the
// empty result is the empty list, not nil).
func (l ChildList) Removed(id string) ChildList {
	return ChildListOf(removeString(l.Slice(), id))
}

// MarshalJSON encodes the list as a JSON array of strings (nil: []).
func (l ChildList) MarshalJSON() ([]byte, error) { return l.appendJSON(nil), nil }

// UnmarshalJSON decodes a JSON array of strings (null: the nil list).
func (l *ChildList) UnmarshalJSON(data []byte) error {
	var ids []string
	if err := json.Unmarshal(data, &ids); err != nil {
		return err
	}
	*l = ChildListOf(ids)
	return nil
}

// appendJSON appends the list as json.Marshal encodes a []string (nil:
// []).
func (l ChildList) appendJSON(b []byte) []byte {
	if l.nhead == 0 {
		return AppendJSONStrings(b, l.tail)
	}
	b = AppendJSONStrings(b, l.head.ids[:l.nhead])
	for _, id := range l.tail {
		b[len(b)-1] = ','
		b = append(core.AppendJSONString(b, id), ']')
	}
	return b
}
