package specs

import "fmt"

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
// mutation; core/store may call it in its consistency check.
func CheckInvariants(s *Spec) []Violation {
	var out []Violation
	add := func(code, id, format string, args ...any) {
		out = append(out, Violation{Code: code, NodeID: id, Message: fmt.Sprintf(format, args...)})
	}
	root := s.Root()
	if root == nil {
		add("MISSING_ROOT", RootID, "the spec has no root node")
		return out
	}
	if root.Type != TypeSpec || root.Parent != "" {
		add("BAD_ROOT", RootID, "root must have type spec and no parent (type %q parent %q)", root.Type, root.Parent)
	}
	ids := s.IDs()
	for _, id := range ids {
		n := s.Node(id)
		if n.ID != id {
			add("ID_MISMATCH", id, "node stored under %q has ID %q", id, n.ID)
		}
		if !n.Type.Valid() {
			add("BAD_TYPE", id, "invalid type %q", n.Type)
		}
		if !n.Status.Valid() {
			add("BAD_STATUS", id, "invalid status %q", n.Status)
		}
		if id != RootID {
			p := s.Node(n.Parent)
			if p == nil {
				add("ORPHAN", id, "parent %q does not exist", n.Parent)
			} else if c := countOf(p.Children, id); c != 1 {
				add("PARENT_CHILD", id, "parent %s lists it %d times", n.Parent, c)
			}
			if n.Type == TypeSpec {
				add("BAD_TYPE", id, "only the root may have type spec")
			}
			if n.Type == TypePhase && n.Parent != RootID {
				add("PHASE_PARENT", id, "a phase must sit under the root, not %s", n.Parent)
			}
		}
		seen := map[string]bool{}
		for _, c := range n.Children {
			if seen[c] {
				add("DUP_CHILD", id, "child %s listed twice", c)
			}
			seen[c] = true
			cn := s.Node(c)
			if cn == nil {
				add("MISSING_CHILD", id, "child %s does not exist", c)
			} else if cn.Parent != id {
				add("PARENT_CHILD", id, "child %s names parent %q", c, cn.Parent)
			}
		}
		for _, b := range n.Dependencies.BlockedBy {
			t := s.Node(b)
			switch {
			case b == id:
				add("SELF_EDGE", id, "blocked by itself")
			case t == nil:
				add("DANGLING_EDGE", id, "blocked_by target %s does not exist", b)
			case !containsString(t.Dependencies.Blocks, id):
				add("EDGE_NOT_RECIPROCAL", id, "blocked by %s but %s.blocks lacks it", b, b)
			}
		}
		for _, b := range n.Dependencies.Blocks {
			t := s.Node(b)
			switch {
			case b == id:
				add("SELF_EDGE", id, "blocks itself")
			case t == nil:
				add("DANGLING_EDGE", id, "blocks target %s does not exist", b)
			case !containsString(t.Dependencies.BlockedBy, id):
				add("EDGE_NOT_RECIPROCAL", id, "blocks %s but %s.blocked_by lacks it", b, b)
			}
		}
		if hasDup(n.Dependencies.BlockedBy) || hasDup(n.Dependencies.Blocks) || hasDup(n.Dependencies.Depends) {
			add("DUP_EDGE", id, "duplicate dependency entries")
		}
		total, completed, status, meta := computedRollupSum(s, n, true)
		if total != n.TotalTasks || completed != n.CompletedTasks {
			add("COUNTS", id, "counts %d/%d, expected %d/%d", n.CompletedTasks, n.TotalTasks, completed, total)
		}
		if status != n.Status {
			add("ROLLUP_STATUS", id, "status %s, expected %s", n.Status, status)
		}
		if _, has := n.Metadata[RollupMetaKey]; (has || meta == nil) && !sameRollupMeta(n, meta) {
			add("ROLLUP_SUMMARY", id, "metadata.%s %v, expected %v", RollupMetaKey, n.Metadata[RollupMetaKey], meta)
		}
	}
	// Reachability.
	reach := map[string]bool{RootID: true}
	queue := []string{RootID}
	for len(queue) > 0 {
		n := s.Node(queue[0])
		queue = queue[1:]
		if n == nil {
			continue
		}
		for _, c := range n.Children {
			if !reach[c] && s.Has(c) {
				reach[c] = true
				queue = append(queue, c)
			}
		}
	}
	for _, id := range ids {
		if !reach[id] {
			add("UNREACHABLE", id, "not reachable from the root")
		}
	}
	h := s.Header
	if h.TotalTasks != root.TotalTasks || h.CompletedTasks != root.CompletedTasks || h.Status != root.Status ||
		h.ProgressPercentage != progress(root.CompletedTasks, root.TotalTasks) || h.CurrentPhase != currentPhase(s, root) {
		add("HEADER", RootID, "header computed fields out of date (%d/%d %s %d%% %q)", h.CompletedTasks, h.TotalTasks, h.Status, h.ProgressPercentage, h.CurrentPhase)
	}
	if len(out) == 0 {
		if cycle := FindDeadlock(s); cycle != nil {
			add("CYCLE", cycle[0], "dependency cycle %v", cycle)
		}
	}
	return out
}

func countOf(list []string, s string) int {
	c := 0
	for _, x := range list {
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
