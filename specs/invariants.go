package specs

import (
	"fmt"
	"slices"
)

// Violation is one broken invariant found by CheckInvariants.
type Violation struct {
	Code    string `json:"code"`
	NodeID  string `json:"node_id,omitempty"`
	Message string `json:"message"`
}

func (v Violation) String() string { return v.Code + " " + v.NodeID + ": " + v.Message }

// CheckInvariants checks everything every mutation must preserve, reading the
// whole view: the root exists (type spec, no parent); each node's parent
// exists and lists it exactly once; each child exists and names its parent;
// every node is reachable from the root; phases sit directly under the root;
// counts, computed statuses and internal rollup summaries (when present:
// an absent one is rebuilt on the next change) match the rollup rules; the header's computed
// fields match the root; blocks and blocked_by are reciprocal, target
// existing nodes and contain no self edges or duplicates; the inherited wait
// graph has no cycle. It returns nil when all hold. Tests call it after every
// mutation; specs/specstore calls it in its consistency check (specd
// check).
func CheckInvariants(s *Spec) []Violation {
	var out violations
	root := s.Root()
	if root == nil {
		out.add("MISSING_ROOT", RootID, "the spec has no root node")
		return out
	}
	out.root(root)
	ids := s.IDs()
	for _, id := range ids {
		n := s.Node(id)
		out.nodeShape(s, id, n)
		out.children(s, id, n)
		out.edges(s, id, n)
		out.rollup(s, id, n)
	}
	out.reachable(s, ids)
	out.header(s, root)
	if len(out) == 0 {
		if cycle := FindDeadlock(s); cycle != nil {
			out.add("CYCLE", cycle[0], "dependency cycle %v", cycle)
		}
	}
	return out
}

// violations collects the findings of CheckInvariants; it stays nil while
// none is added.
type violations []Violation

func (v *violations) add(code, id, format string, args ...any) {
	*v = append(*v, Violation{Code: code, NodeID: id, Message: fmt.Sprintf(format, args...)})
}

// root: BAD_ROOT when the root is not of type spec or has a parent.
func (v *violations) root(root *Node) {
	if root.Type != TypeSpec || root.Parent != "" {
		v.add("BAD_ROOT", RootID, "root must have type spec and no parent (type %q parent %q)", root.Type, root.Parent)
	}
}

// nodeShape: ID_MISMATCH, BAD_TYPE, BAD_STATUS, ORPHAN, PARENT_CHILD (the
// parent's side), PHASE_PARENT.
func (v *violations) nodeShape(s *Spec, id string, n *Node) {
	v.nodeFields(id, n)
	if id == RootID {
		return
	}
	v.parentSide(s, id, n)
	v.placement(id, n)
}

// nodeFields: ID_MISMATCH, BAD_TYPE, BAD_STATUS.
func (v *violations) nodeFields(id string, n *Node) {
	if n.ID != id {
		v.add("ID_MISMATCH", id, "node stored under %q has ID %q", id, n.ID)
	}
	if !n.Type.Valid() {
		v.add("BAD_TYPE", id, "invalid type %q", n.Type)
	}
	if !n.Status.Valid() {
		v.add("BAD_STATUS", id, "invalid status %q", n.Status)
	}
}

// parentSide: ORPHAN, PARENT_CHILD (the parent does not list n exactly
// once).
func (v *violations) parentSide(s *Spec, id string, n *Node) {
	p := s.Node(n.Parent)
	if p == nil {
		v.add("ORPHAN", id, "parent %q does not exist", n.Parent)
	} else if c := countOf(p.Children, id); c != 1 {
		v.add("PARENT_CHILD", id, "parent %s lists it %d times", n.Parent, c)
	}
}

// placement: BAD_TYPE (a spec node below the root), PHASE_PARENT.
func (v *violations) placement(id string, n *Node) {
	if n.Type == TypeSpec {
		v.add("BAD_TYPE", id, "only the root may have type spec")
	}
	if n.Type == TypePhase && n.Parent != RootID {
		v.add("PHASE_PARENT", id, "a phase must sit under the root, not %s", n.Parent)
	}
}

// children: DUP_CHILD, MISSING_CHILD, PARENT_CHILD (the child's side).
func (v *violations) children(s *Spec, id string, n *Node) {
	seen := map[string]bool{}
	for _, c := range n.Children.All() {
		if seen[c] {
			v.add("DUP_CHILD", id, "child %s listed twice", c)
		}
		seen[c] = true
		cn := s.Node(c)
		if cn == nil {
			v.add("MISSING_CHILD", id, "child %s does not exist", c)
		} else if cn.Parent != id {
			v.add("PARENT_CHILD", id, "child %s names parent %q", c, cn.Parent)
		}
	}
}

// edges: SELF_EDGE, DANGLING_EDGE, EDGE_NOT_RECIPROCAL, DUP_EDGE.
func (v *violations) edges(s *Spec, id string, n *Node) {
	for _, side := range edgeSides {
		v.edgeSide(s, id, n, side)
	}
	if slices.ContainsFunc([][]string{n.Dependencies.BlockedBy, n.Dependencies.Blocks, n.Dependencies.Depends}, hasDup) {
		v.add("DUP_EDGE", id, "duplicate dependency entries")
	}
}

// edgeSide is one half of the blocks/blocked_by pair as edges checks it:
// the list a node holds, the list its targets must hold it in, and the
// messages (the target's id fills the %s).
type edgeSide struct {
	list, reverse                 func(d Dependencies) []string
	self, dangling, notReciprocal string
}

// edgeSides are blocked_by, then blocks.
var edgeSides = []edgeSide{
	{func(d Dependencies) []string { return d.BlockedBy }, func(d Dependencies) []string { return d.Blocks },
		"blocked by itself", "blocked_by target %s does not exist", "blocked by %s but %s.blocks lacks it"},
	{func(d Dependencies) []string { return d.Blocks }, func(d Dependencies) []string { return d.BlockedBy },
		"blocks itself", "blocks target %s does not exist", "blocks %s but %s.blocked_by lacks it"},
}

// edgeSide: SELF_EDGE, DANGLING_EDGE, EDGE_NOT_RECIPROCAL over one side of
// n's edges.
func (v *violations) edgeSide(s *Spec, id string, n *Node, side edgeSide) {
	for _, b := range side.list(n.Dependencies) {
		t := s.Node(b)
		switch {
		case b == id:
			v.add("SELF_EDGE", id, "%s", side.self)
		case t == nil:
			v.add("DANGLING_EDGE", id, side.dangling, b)
		case !containsString(side.reverse(t.Dependencies), id):
			v.add("EDGE_NOT_RECIPROCAL", id, side.notReciprocal, b, b)
		}
	}
}

// rollup: COUNTS, ROLLUP_STATUS, ROLLUP_SUMMARY.
func (v *violations) rollup(s *Spec, id string, n *Node) {
	total, completed, status, meta := computedRollupSum(s, n, true)
	if total != n.TotalTasks || completed != n.CompletedTasks {
		v.add("COUNTS", id, "counts %d/%d, expected %d/%d", n.CompletedTasks, n.TotalTasks, completed, total)
	}
	if status != n.Status {
		v.add("ROLLUP_STATUS", id, "status %s, expected %s", n.Status, status)
	}
	if _, has := n.Metadata[RollupMetaKey]; (has || meta == nil) && !sameRollupMeta(n, meta) {
		v.add("ROLLUP_SUMMARY", id, "metadata.%s %v, expected %v", RollupMetaKey, n.Metadata[RollupMetaKey], meta)
	}
}

// reachable: UNREACHABLE for every node the root's children lists do not
// lead to.
func (v *violations) reachable(s *Spec, ids []string) {
	reach := reachableFromRoot(s)
	for _, id := range ids {
		if !reach[id] {
			v.add("UNREACHABLE", id, "not reachable from the root")
		}
	}
}

// reachableFromRoot is the set of existing nodes the children lists lead
// to from the root (the root included).
func reachableFromRoot(s *Spec) map[string]bool {
	reach := map[string]bool{RootID: true}
	queue := []string{RootID}
	for len(queue) > 0 {
		n := s.Node(queue[0])
		queue = queue[1:]
		if n == nil {
			continue
		}
		for _, c := range n.Children.All() {
			if !reach[c] && s.Has(c) {
				reach[c] = true
				queue = append(queue, c)
			}
		}
	}
	return reach
}

// header: HEADER when the header's computed fields differ from the root's.
func (v *violations) header(s *Spec, root *Node) {
	h := s.Header
	if h.TotalTasks != root.TotalTasks || h.CompletedTasks != root.CompletedTasks || h.Status != root.Status ||
		h.ProgressPercentage != progress(root.CompletedTasks, root.TotalTasks) || h.CurrentPhase != currentPhase(s, root) {
		v.add("HEADER", RootID, "header computed fields out of date (%d/%d %s %d%% %q)", h.CompletedTasks, h.TotalTasks, h.Status, h.ProgressPercentage, h.CurrentPhase)
	}
}

func countOf(list ChildList, s string) int {
	c := 0
	for _, x := range list.All() {
		if x == s {
			c++
		}
	}
	return c
}

func hasDup(list []string) bool {
	if len(list) < 2 {
		return false
	}
	seen := make(map[string]bool, len(list))
	for _, x := range list {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}
