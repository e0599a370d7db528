package specs

import (
	"cmp"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/specd/specd/core/errcode"
)

// CompareIDs orders ids naturally: runs of digits compare as numbers, so
// task-1-2 < task-1-10; other runs compare bytewise. Ties (e.g. "01" vs "1")
// fall back to bytewise order, so the order is total.
func CompareIDs(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			var c int
			if c, i, j = compareNumbers(a, b, i, j); c != 0 {
				return c
			}
			continue
		}
		if a[i] != b[j] {
			return cmp.Compare(a[i], b[j])
		}
		i++
		j++
	}
	// The longer rest is greater; equal ids compare bytewise.
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// compareNumbers compares the runs of digits starting at a[i] and b[j] as
// numbers (leading zeros ignored) and returns the result with the indexes
// after the runs.
func compareNumbers(a, b string, i, j int) (c, nextI, nextJ int) {
	nextI, nextJ = digitsEnd(a, i), digitsEnd(b, j)
	na := strings.TrimLeft(a[i:nextI], "0")
	nb := strings.TrimLeft(b[j:nextJ], "0")
	if len(na) != len(nb) {
		return cmp.Compare(len(na), len(nb)), nextI, nextJ
	}
	return strings.Compare(na, nb), nextI, nextJ
}

// digitsEnd is the index after the run of digits of s starting at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// SortIDs sorts ids in natural order (see CompareIDs).
func SortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool { return CompareIDs(ids[i], ids[j]) < 0 })
}

// Slug lowercases name and turns every run of characters outside [a-z0-9]
// into one "-", trimmed at both ends. It returns "spec" when nothing is left.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if isSlugRune(r) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], "-")
	}
	if s == "" {
		return "spec"
	}
	return s
}

// isSlugRune reports whether r is kept in a slug: a-z or 0-9.
func isSlugRune(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') }

// GenerateSpecID returns slug(name)-YYYY-MM-DD-NNN for the UTC date of now,
// with NNN the first sequence number from 001 for which exists returns false
// (exists nil means nothing exists). After 999 the sequence keeps counting
// with more digits.
func GenerateSpecID(name string, now time.Time, exists func(id string) bool) string {
	base := Slug(name) + "-" + now.UTC().Format("2006-01-02") + "-"
	for n := 1; ; n++ {
		id := base + fmt.Sprintf("%03d", n)
		if exists == nil || !exists(id) {
			return id
		}
	}
}

// idNumbers returns the numeric segments after prefix in id ("task-1-10" with
// prefix "task" → [1 10]); ok is false when a segment is not a number.
func idNumbers(id, prefix string) ([]int, bool) {
	if !strings.HasPrefix(id, prefix+"-") {
		return nil, false
	}
	parts := strings.Split(id[len(prefix)+1:], "-")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// singleNumber is N of an id prefix-N (N ≥ 0); ok is false for any other
// id.
func singleNumber(id, prefix string) (int, bool) {
	// idNumbers(id, prefix) of one number, without its slices (every
	// task add asks for its phase's number)
	if len(id) <= len(prefix) || id[len(prefix)] != '-' || id[:len(prefix)] != prefix {
		return 0, false
	}
	rest := id[len(prefix)+1:]
	if strings.IndexByte(rest, '-') >= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// phaseNumber returns N of a phase-N id, or the phase's 1-based position
// among the root's children when its id has another form.
func phaseNumber(s *Spec, phaseID string) int {
	if n, ok := singleNumber(phaseID, "phase"); ok {
		return n
	}
	if r := s.Root(); r != nil {
		if i := r.Children.Index(phaseID); i >= 0 {
			return i + 1
		}
	}
	return 0
}

// NewPhaseID returns an unused phase-N id: N is one more than the largest
// phase number among the root's children, skipping numbers whose phase or
// verify-N-1 id is taken.
func NewPhaseID(s *Spec) string {
	for n := maxPhaseNumber(s) + 1; ; n++ {
		if id := "phase-" + strconv.Itoa(n); phaseNumberFree(s, n) {
			return id
		}
	}
}

// maxPhaseNumber is the largest N among the root's phase-N children (0
// when none).
func maxPhaseNumber(s *Spec) int {
	top := 0
	if r := s.Root(); r != nil {
		for _, c := range r.Children.All() {
			if n, ok := singleNumber(c, "phase"); ok {
				top = max(top, n)
			}
		}
	}
	return top
}

// phaseNumberFree reports whether phase-n, verify-n-1 and task-n-1 are all
// unused.
func phaseNumberFree(s *Spec, n int) bool {
	return !s.Has("phase-"+strconv.Itoa(n)) && !s.Has(fmt.Sprintf("verify-%d-1", n)) && !s.Has(fmt.Sprintf("task-%d-1", n))
}

// NewNodeID returns an unused id for a node of type t under parentID:
// subtasks (and tasks nested under a task or subtask) extend the parent's id
// (task-1-2 → task-1-2-1); other nodes under a phase or group are
// <type>-N-M with N the phase number and M one more than the largest M among
// the parent's children with that prefix. The id is checked against the
// whole view and incremented until free.
func NewNodeID(s *Spec, parentID string, t NodeType) string {
	parent := s.Node(parentID)
	prefix := nodeIDPrefix(s, parent, parentID, t)
	return freeID(s, prefix, maxChildNumber(s, parent, prefix)+1)
}

// nodeIDPrefix is the prefix of the ids NewNodeID gives a node of type t
// under parent (nil when absent), whose id is parentID.
func nodeIDPrefix(s *Spec, parent *Node, parentID string, t NodeType) string {
	if parent == nil || !isTaskLike(parent.Type) || !isTaskLike(t) {
		return idTypePrefix(t) + "-" + strconv.Itoa(phaseNumber(s, phaseOf(s, parentID)))
	}
	return parentID
}

// freeID is the first id prefix-M with M ≥ m that no node of s has.
func freeID(s *Spec, prefix string, m int) string {
	for ; ; m++ {
		if id := prefix + "-" + strconv.Itoa(m); !s.Has(id) {
			return id
		}
	}
}

// isTaskLike reports whether t is a task or a subtask.
func isTaskLike(t NodeType) bool { return t == TypeTask || t == TypeSubtask }

// maxChildNumber is the largest M among parent's children with an id
// prefix-M (0 when none or parent is nil): scanChildNumber, answered by one
// map lookup when the children are numbered (see childNumbers).
func maxChildNumber(s *Spec, parent *Node, prefix string) int {
	if parent == nil {
		return 0
	}
	if nums := s.childNumbersOf(parent); nums != nil {
		return nums.top[prefix]
	}
	return scanChildNumber(parent.Children, prefix)
}

// scanChildNumber is the largest M among kids with an id prefix-M (0 when
// none), by reading every id: the rule that childNumbers memoises.
func scanChildNumber(kids ChildList, prefix string) int {
	top := 0
	dash := prefix + "-" // once, not once per child: a phase may hold thousands
	for _, c := range kids.All() {
		if n, ok := numberAfter(c, dash); ok {
			top = max(top, n)
		}
	}
	return top
}

// numberAfter is the number that follows prefix in id, when id is prefix
// and a number.
func numberAfter(id, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// idNumber is the one (prefix, M) with M ≥ 1 for which scanChildNumber
// counts id, if any: numberAfter(id, prefix+"-") is M ≥ 1 only when id
// ends in a run of digits (strconv.Atoi takes an optional sign and
// digits) preceded by "-" (prefix is what comes before it) or by "-+"
// (Atoi's plus sign; prefix is what comes before "-+"). A "-" sign makes
// the number negative, and a negative or zero M never raises a maximum
// that starts at 0.
func idNumber(id string) (prefix string, m int, ok bool) {
	i := len(id)
	for i > 0 && isDigit(id[i-1]) {
		i--
	}
	if i == len(id) {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i:])
	if err != nil || n < 1 {
		return "", 0, false
	}
	if p, ok := strings.CutSuffix(id[:i], "-+"); ok {
		return p, n, true
	}
	if p, ok := strings.CutSuffix(id[:i], "-"); ok {
		return p, n, true
	}
	return "", 0, false
}

// memoMinChildren is the shortest children list that childNumbers are kept
// for: a shorter one is scanned, which costs less than a map.
const memoMinChildren = 32

// childNumbers memoises scanChildNumber for every prefix at once for one
// exact children list: the ChildList list (the same head array and
// length, the same tail memory and length; a ChildList never changes, so
// that identity is its content). A node's memo (Node.nums) answers only
// while the node's Children is that very list, so any edit that gives a
// node another list (Removed, Inserted, a decode, a plain assignment)
// leaves the memo unused, with no call site having to clear it
// (TestNewNodeIDMemoDifferential checks every memo after every kind of
// mutation). Only Spec.insertChild (the add path) carries a memo forward
// to the new list; Node.Clone shares the list and so the memo. A
// childNumbers is never modified once made, so nodes shared between
// goroutines read it freely.
type childNumbers struct {
	list ChildList
	top  map[string]int // prefix → largest M ≥ 1 (prefixes without one are absent)
}

// newChildNumbers numbers kids by reading every id once.
func newChildNumbers(kids ChildList) *childNumbers {
	top := map[string]int{}
	for _, c := range kids.All() {
		if p, m, ok := idNumber(c); ok && m > top[p] {
			top[p] = m
		}
	}
	return numbering(kids, top)
}

// numbering is the childNumbers of the list kids whose numbers are top.
func numbering(kids ChildList, top map[string]int) *childNumbers {
	return &childNumbers{list: kids, top: top}
}

// describes reports whether c numbers exactly the list kids (nil c: no).
func (c *childNumbers) describes(kids ChildList) bool {
	return c != nil && c.list.same(kids)
}

// inserted is c (numbering a list) for kids, that list with child
// inserted: c's numbers, raised by child's; nil when c is nil. c is left
// as it was.
func (c *childNumbers) inserted(kids ChildList, child string) *childNumbers {
	if c == nil {
		return nil
	}
	top := c.top
	if p, m, ok := idNumber(child); ok && m > top[p] {
		top = make(map[string]int, len(c.top)+1)
		for k, v := range c.top {
			top[k] = v
		}
		top[p] = m
	}
	return numbering(kids, top)
}

// childNumbersOf returns numbers for n's current children: n's own memo,
// else the view's last computed one when it describes them, else new ones
// (kept by the view, since n may be shared and is never written) for a
// list of at least memoMinChildren children; nil for a shorter list
// without a memo.
func (s *Spec) childNumbersOf(n *Node) *childNumbers {
	switch {
	case n.nums.describes(n.Children):
		return n.nums
	case s.nums.describes(n.Children):
		return s.nums
	case n.Children.Len() < memoMinChildren:
		return nil
	}
	s.nums = newChildNumbers(n.Children)
	return s.nums
}

// idPrefixes are the id prefixes of node types other than task.
var idPrefixes = map[NodeType]string{TypeVerify: "verify", TypeResearch: "research", TypeGroup: "group", TypePhase: "phase"}

// idTypePrefix is the id prefix of nodes of type t ("task" for tasks,
// subtasks and unknown types).
func idTypePrefix(t NodeType) string {
	if p, ok := idPrefixes[t]; ok {
		return p
	}
	return "task"
}

// phaseOf returns the id of the phase containing id (id itself when it is a
// phase), or "" when it has none.
func phaseOf(s *Spec, id string) string {
	for guard := 0; id != "" && guard < 1000; guard++ {
		n := s.Node(id)
		if n == nil {
			return ""
		}
		if n.Type == TypePhase {
			return id
		}
		id = n.Parent
	}
	return ""
}

// IDPattern is the grammar of every spec id and node id: lowercase ASCII
// letters and digits, with ".", "_" and "-" between them; it starts with a
// letter or digit, holds no ".." (a dot is always followed by a letter,
// digit, "_" or "-") and so never ends with a dot. An id is an identifier,
// never a path: no "/", "\", NUL, space or upper case can appear, so an id
// joined to a folder name always names a file directly inside that folder.
// Upper case is left out because foundry-mcp only ever generates lowercase
// ids (slugs of the name plus a date, spec-root, phase-N, task-N-M, …) and
// because ids become file names on export, where "Task-1" and "task-1" would
// be one file on a case-insensitive file system.
const IDPattern = `^[a-z0-9](?:\.?[a-z0-9_-])*$`

// MaxIDLength is the longest valid id, in bytes (every valid id is ASCII).
const MaxIDLength = 128

var idRE = regexp.MustCompile(IDPattern)

// ValidID reports whether id follows IDPattern and is at most MaxIDLength
// bytes long.
func ValidID(id string) bool {
	return len(id) > 0 && len(id) <= MaxIDLength && idRE.MatchString(id)
}

// IDConstraint describes the id grammar in one phrase, for error details.
const IDConstraint = "an id: 1-128 of a-z 0-9 . _ - starting with a letter or digit, no \"..\", no trailing dot"

// CheckID returns nil when id is valid, else an INVALID_FORMAT *core.Error
// naming field and the received value.
func CheckID(field, id string) error {
	if ValidID(id) {
		return nil
	}
	e := newErr(errcode.InvalidFormat, field, "%s must be an id (lowercase letters, digits, '.', '_', '-'; at most %d characters; no '..'), not a path or free text", field, MaxIDLength)
	e.WithDetail("constraint", IDConstraint).WithDetail("pattern", IDPattern).WithDetail("received", truncateForDetails(id))
	return e
}
