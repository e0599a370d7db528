package specs

import "iter"

// WalkFrom yields the nodes of scope's subtree in execution order (depth-first,
// pre-order, children order), scope itself excluded, each with its real
// tree depth (the root is 0, phases 1, …). With after != "" it resumes
// strictly after that node, at a cost proportional to the node's depth and
// the ids of its later siblings, never to the spec's size: that is what
// makes a cursor page O(page). maxDepth > 0 prunes nodes deeper than
// maxDepth. ok is false when scope does not reach the root, or when after
// is not a node of scope's subtree (it was removed or moved away since the
// cursor was issued).
//
// A node is decoded only when it is yielded; missing children are skipped
// and no node is yielded twice, so a corrupt children list cannot loop.
func WalkFrom(s *Spec, scope, after string, maxDepth int) (seq iter.Seq2[*Node, int], ok bool) {
	none := func(func(*Node, int) bool) {}
	scopeDepth, found := Depth(s, scope)
	if !found {
		return none, false
	}
	w := walker{s: s, maxDepth: maxDepth}
	if after == "" {
		if n := s.Node(scope); n != nil {
			w.push(n.Children, 0, scopeDepth+1)
		}
		return w.run, true
	}
	if after == scope || !w.resume(scope, after) {
		return none, false
	}
	return w.run, true
}

// walker is WalkFrom's explicit stack of (id, depth) frames.
type walker struct {
	s        *Spec
	maxDepth int
	stack    []walkFrame
}

type walkFrame struct {
	id    string
	depth int
}

// push stacks ids [from:] (at depth) so that they pop in order, unless
// depth is pruned.
func (w *walker) push(ids ChildList, from, depth int) {
	if w.maxDepth > 0 && depth > w.maxDepth {
		return
	}
	for i := ids.Len() - 1; i >= from; i-- {
		w.stack = append(w.stack, walkFrame{ids.At(i), depth})
	}
}

// resume stacks the continuation after node after: its children, then its
// later siblings, then its parent's later siblings, … up to scope. It
// reports false when after is not under scope.
func (w *walker) resume(scope, after string) bool {
	n := w.s.Node(after)
	if n == nil {
		return false
	}
	type segment struct {
		ids   ChildList
		from  int
		depth int
	}
	d, _ := Depth(w.s, after)
	segs := []segment{{n.Children, 0, d + 1}}
	for x := n; x.ID != scope; {
		p := w.s.Node(x.Parent)
		if p == nil {
			return false // not under scope
		}
		i := p.Children.Index(x.ID)
		if i < 0 {
			return false
		}
		segs = append(segs, segment{p.Children, i + 1, d})
		x, d = p, d-1
	}
	// Pushed last-first so that the stack pops them in order.
	for i := len(segs) - 1; i >= 0; i-- {
		w.push(segs[i].ids, segs[i].from, segs[i].depth)
	}
	return true
}

func (w *walker) run(yield func(*Node, int) bool) {
	seen := map[string]bool{}
	for len(w.stack) > 0 {
		f := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		if seen[f.id] {
			continue
		}
		seen[f.id] = true
		n := w.s.Node(f.id)
		if n == nil {
			continue
		}
		if !yield(n, f.depth) {
			return
		}
		w.push(n.Children, 0, f.depth+1)
	}
}

// Depth returns the real tree depth of id (the root is 0) and whether id
// exists and reaches the root.
func Depth(s *Spec, id string) (int, bool) {
	d := 0
	for x := id; ; d++ {
		n := s.Node(x)
		if n == nil || d > 10_000 {
			return 0, false
		}
		if n.Parent == "" {
			return d, x == RootID
		}
		x = n.Parent
	}
}

// Position is the 0-based position of id among its parent's children (0 is
// first, as positions count in task add and move; -1 when id or its parent
// is missing).
func Position(s *Spec, id string) int {
	n := s.Node(id)
	if n == nil {
		return -1
	}
	p := s.Node(n.Parent)
	if p == nil {
		return -1
	}
	return p.Children.Index(id)
}

// IsTaskNode reports whether n is what task lists show: a task, subtask,
// verify or research node.
func IsTaskNode(n *Node) bool {
	switch n.Type {
	case TypeTask, TypeSubtask, TypeVerify, TypeResearch:
		return true
	}
	return false
}

// PhaseOf returns the phase n sits in (n itself for a phase), or nil.
func PhaseOf(s *Spec, n *Node) *Node {
	for a := range lineage(s, n) {
		if a.Type == TypePhase {
			return a
		}
	}
	return nil
}

// lineage yields n and then its ancestors, nearest first, following
// parent ids through s until one is missing (at most 10 000 nodes, so a
// corrupt parent loop ends).
func lineage(s *Spec, n *Node) iter.Seq[*Node] {
	return func(yield func(*Node) bool) {
		for a, guard := n, 0; a != nil && guard < 10_000; a, guard = s.Node(a.Parent), guard+1 {
			if !yield(a) {
				return
			}
		}
	}
}

// NodePage is one page of a listing: the nodes kept, their depths, and
// whether a further node would pass the filter.
type NodePage struct {
	Nodes  []*Node
	Depths []int
	More   bool
}

// Last is the id of the page's last node ("" for an empty page): the key a
// cursor resumes after.
func (p NodePage) Last() string {
	if len(p.Nodes) == 0 {
		return ""
	}
	return p.Nodes[len(p.Nodes)-1].ID
}

// Listing is a paged walk: the subtree of Scope (the root when empty)
// pruned below MaxDepth (0: no limit), resumed after After, keeping the
// nodes Keep accepts (all when nil), at most Limit per page.
type Listing struct {
	Scope    string
	After    string
	MaxDepth int
	Limit    int
	Keep     func(n *Node, depth int) bool
}

// Page runs the listing over s. ok is false when After no longer sits
// under Scope (a stale cursor): the caller restarts the listing.
func (l Listing) Page(s *Spec) (page NodePage, ok bool) {
	scope := l.Scope
	if scope == "" {
		scope = RootID
	}
	seq, ok := WalkFrom(s, scope, l.After, l.MaxDepth)
	if !ok {
		return NodePage{}, false
	}
	for n, d := range seq {
		if l.Keep != nil && !l.Keep(n, d) {
			continue
		}
		if len(page.Nodes) == l.Limit {
			page.More = true
			break
		}
		page.Nodes = append(page.Nodes, n)
		page.Depths = append(page.Depths, d)
	}
	return page, true
}

// TaskFilter selects nodes for task query and metadata-batch; empty fields
// do not filter.
type TaskFilter struct {
	TasksOnly bool   // only task nodes (IsTaskNode)
	Status    string // the node's status
	NodeType  string // the node's type
	// Match, when set, must accept the node (metadata-batch's pattern).
	Match func(n *Node) bool
}

// Keeps reports whether n passes the filter.
func (f TaskFilter) Keeps(n *Node) bool {
	switch {
	case f.TasksOnly && !IsTaskNode(n):
		return false
	case f.NodeType != "" && string(n.Type) != f.NodeType:
		return false
	case f.Status != "" && string(n.Status) != f.Status:
		return false
	}
	return f.Match == nil || f.Match(n)
}

// QueryListing is task query's listing, filtered by f: without parent the
// task nodes of the whole spec (every node of f.NodeType when set); with
// parent the parent's direct children of any type (the walk is pruned at
// the parent's depth + 1). ok is false when parent does not exist or does
// not reach the root.
func QueryListing(s *Spec, parent string, f TaskFilter) (l Listing, ok bool) {
	if parent == "" {
		f.TasksOnly = f.NodeType == ""
	}
	keep := func(n *Node, _ int) bool { return f.Keeps(n) }
	if parent == "" {
		return Listing{Keep: keep}, true
	}
	depth, ok := Depth(s, parent)
	if !ok {
		return Listing{}, false
	}
	return Listing{Scope: parent, MaxDepth: depth + 1, Keep: keep}, true
}

// BlockedListing is task list-blocked's listing: every blocked node of the
// spec. It walks the whole spec (no status index): O(spec) per page.
func BlockedListing() Listing {
	return Listing{Keep: func(n *Node, _ int) bool { return n.Status == StatusBlocked && n.ID != RootID }}
}

// Phases lists the root's children (the phases) in order; missing ones are
// skipped.
func Phases(s *Spec) []*Node {
	root := s.Root()
	if root == nil {
		return nil
	}
	out := make([]*Node, 0, root.Children.Len())
	for _, id := range root.Children.All() {
		if p := s.Node(id); p != nil {
			out = append(out, p)
		}
	}
	return out
}
