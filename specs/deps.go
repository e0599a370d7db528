package specs

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Dependency rules.
//
// blocked_by edges are hard prerequisites and blocks is their reverse; both
// halves are always written together. depends is informational. A blocked_by
// on a phase or parent applies to every descendant, and a node waits for all
// of a prerequisite's descendants (a prerequisite is complete only when its
// whole subtree is). Cycle detection uses exactly these inherited edges, over
// a graph with two vertices per node:
//
//	up(x)   → up(parent(x))            x inherits its parent's prerequisites
//	up(x)   → down(b), b ∈ blocked_by(x)  x waits for b's whole subtree
//	down(b) → down(c), c ∈ children(b)  b's subtree includes its children's
//	down(b) → up(b)                     finishing b needs b's own prerequisites
//
// A spec deadlocks exactly when this graph has a cycle; adding "x blocked_by
// y" closes one exactly when down(y) reaches up(x).

type vertex struct {
	id string
	up bool
}

// waitNeighbors returns the out-edges of v in the wait graph.
func waitNeighbors(s *Spec, v vertex, buf []vertex) []vertex {
	buf = buf[:0]
	n := s.Node(v.id)
	if n == nil {
		return buf
	}
	if v.up {
		if n.Parent != "" && s.Has(n.Parent) {
			buf = append(buf, vertex{n.Parent, true})
		}
		for _, b := range n.Dependencies.BlockedBy {
			if b != v.id && s.Has(b) {
				buf = append(buf, vertex{b, false})
			}
		}
		return buf
	}
	for _, c := range n.Children {
		if s.Has(c) {
			buf = append(buf, vertex{c, false})
		}
	}
	return append(buf, vertex{v.id, true})
}

// waitPath searches the wait graph from `from` to `to` (depth-first, visiting
// only what is reachable) and returns the vertex path, or nil.
func waitPath(s *Spec, from, to vertex) []vertex {
	prev := map[vertex]vertex{from: from}
	stack := []vertex{from}
	var buf []vertex
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == to {
			var path []vertex
			for x := v; ; x = prev[x] {
				path = append(path, x)
				if x == from {
					break
				}
			}
			for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
				path[i], path[j] = path[j], path[i]
			}
			return path
		}
		buf = waitNeighbors(s, v, buf)
		for i := len(buf) - 1; i >= 0; i-- {
			w := buf[i]
			if _, seen := prev[w]; !seen {
				prev[w] = v
				stack = append(stack, w)
			}
		}
	}
	return nil
}

// cycleIDs renders a wait-graph path closing the edge "waiter blocked_by
// prereq" as a node list: waiter, prereq, then for every blocked_by edge on
// the path its two ends, and waiter again. Consecutive nodes are linked by
// "is blocked by" or by containment.
func cycleIDs(waiter, prereq string, path []vertex) []string {
	out := []string{waiter, prereq}
	for i := 0; i+1 < len(path); i++ {
		a, b := path[i], path[i+1]
		if a.up && !b.up {
			out = append(out, a.id, b.id)
		}
	}
	out = append(out, waiter)
	dedup := out[:1]
	for _, id := range out[1:] {
		if id != dedup[len(dedup)-1] {
			dedup = append(dedup, id)
		}
	}
	return dedup
}

// wouldCycle reports the cycle that "waiter blocked_by prereq" would close,
// or nil. Ancestor/descendant pairs are always cycles.
func wouldCycle(s *Spec, waiter, prereq string) []string {
	if path := waitPath(s, vertex{prereq, false}, vertex{waiter, true}); path != nil {
		return cycleIDs(waiter, prereq, path)
	}
	return nil
}

// FindDeadlock returns one cycle of the inherited wait graph of the whole
// view (see the package's dependency rules), or nil when there is none. It
// reads every node.
func FindDeadlock(s *Spec) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[vertex]int{}
	type frame struct {
		v    vertex
		next []vertex
	}
	for _, id := range s.IDs() {
		n := s.Node(id)
		for _, b := range n.Dependencies.BlockedBy {
			start := vertex{id, true}
			if !s.Has(b) || color[start] != white {
				continue
			}
			stack := []frame{{v: start, next: waitNeighbors(s, start, nil)}}
			color[start] = grey
			for len(stack) > 0 {
				top := &stack[len(stack)-1]
				if len(top.next) == 0 {
					color[top.v] = black
					stack = stack[:len(stack)-1]
					continue
				}
				w := top.next[0]
				top.next = top.next[1:]
				switch color[w] {
				case grey:
					// Cycle: the grey frames from w to the top.
					var path []vertex
					on := false
					for _, f := range stack {
						if f.v == w {
							on = true
						}
						if on {
							path = append(path, f.v)
						}
					}
					path = append(path, w)
					var out []string
					for i := 0; i+1 < len(path); i++ {
						if path[i].up && !path[i+1].up {
							out = append(out, path[i].id, path[i+1].id)
						}
					}
					if len(out) == 0 {
						// A loop of parent or children links, not of
						// dependencies: Validate reports it as a hierarchy
						// problem.
						continue
					}
					out = append(out, out[0])
					dedup := out[:1]
					for _, x := range out[1:] {
						if x != dedup[len(dedup)-1] {
							dedup = append(dedup, x)
						}
					}
					return dedup
				case white:
					color[w] = grey
					stack = append(stack, frame{v: w, next: waitNeighbors(s, w, nil)})
				}
			}
		}
	}
	return nil
}

func taskNotFound(s *Spec, field, id string) *core.Error {
	e := newErr(errcode.TaskNotFound, field, "node %q does not exist in spec %s", truncateForDetails(id), s.Header.SpecID)
	e.WithDetail("received", truncateForDetails(id))
	var candidates []string
	for _, x := range s.IDs() {
		if x != RootID {
			candidates = append(candidates, x)
		}
	}
	return withMatches(e, candidates)
}

// PhaseNotFound is PHASE_NOT_FOUND for id, given as argument field, with
// the closest phases of s as fuzzy matches.
func PhaseNotFound(s *Spec, field, id string) *core.Error {
	e := newErr(errcode.PhaseNotFound, field, "phase %q does not exist in spec %s", truncateForDetails(id), s.Header.SpecID)
	e.WithDetail("received", truncateForDetails(id))
	if r := s.Root(); r != nil {
		withMatches(e, r.Children)
	}
	return e
}

// AddDependency adds an edge between taskID and targetID. depType "blocks"
// (the default when empty) means taskID blocks targetID (target.blocked_by +=
// task, task.blocks += target); "blocked_by" means taskID is blocked by
// targetID; "depends" records an informational edge on taskID only. The
// reciprocal half is always written too.
//
// Errors: INVALID_FORMAT (unknown depType), TASK_NOT_FOUND (either id,
// field task_id or target_id), SELF_REFERENCE, VALIDATION_ERROR (an edge on
// the spec root), DUPLICATE_ENTRY (the edge exists), CIRCULAR_DEPENDENCY
// with details.cycle (the edge would close a cycle over inherited edges; see
// the package's dependency rules), details.cycle_edges and, when one stored
// edge closes the cycle, its removal as the step (breakCycle).
func AddDependency(s *Spec, taskID, targetID, depType string) (err error) {
	defer s.mutate(&err)()
	if depType == "" {
		depType = "blocks"
	}
	if !containsString(DependencyTypes, depType) {
		return newErr(errcode.InvalidFormat, "dependency_type", "dependency_type must be one of blocks, blocked_by, depends").
			WithDetail("received", truncateForDetails(depType)).WithDetail("allowed", DependencyTypes)
	}
	if taskID == targetID {
		return newErr(errcode.SelfReference, "target_id", "a node cannot depend on itself (%s)", taskID).WithDetail("received", taskID)
	}
	task, target := s.Node(taskID), s.Node(targetID)
	if task == nil {
		return taskNotFound(s, "task_id", taskID)
	}
	if target == nil {
		return taskNotFound(s, "target_id", targetID)
	}
	if taskID == RootID || targetID == RootID {
		return newErr(errcode.Validation, "task_id", "the spec root cannot take part in dependencies")
	}
	if depType == "depends" {
		if containsString(task.Dependencies.Depends, targetID) {
			return newErr(errcode.DuplicateEntry, "target_id", "%s already depends on %s", taskID, targetID)
		}
		e := s.Edit(taskID)
		e.Dependencies.Depends = append(e.Dependencies.Depends, targetID)
		s.touch()
		return nil
	}
	waiter, prereq := targetID, taskID
	if depType == "blocked_by" {
		waiter, prereq = taskID, targetID
	}
	w := s.Node(waiter)
	if containsString(w.Dependencies.BlockedBy, prereq) {
		return newErr(errcode.DuplicateEntry, "target_id", "%s is already blocked by %s", waiter, prereq)
	}
	if cycle := wouldCycle(s, waiter, prereq); cycle != nil {
		e := newErr(errcode.CircularDependency, "target_id",
			"%s blocked by %s would create a circular dependency: %v", waiter, prereq, cycle).WithDetail("cycle", cycle)
		return breakCycle(s, e, cycle)
	}
	linkBlocked(s, waiter, prereq)
	s.touch()
	return nil
}

// breakCycle is the CIRCULAR_DEPENDENCY e over cycle (waiter, prereq, …,
// waiter) with the stored edges it runs through in details.cycle_edges
// ({task_id, target_id, dependency_type: blocks}: task_id blocks
// target_id), and, when exactly one stored edge closes it, the removal of
// that edge as its step.
func breakCycle(s *Spec, e *core.Error, cycle []string) *core.Error {
	edges := []map[string]any{}
	for i := 1; i+1 < len(cycle); i++ {
		w, p := cycle[i], cycle[i+1]
		if n := s.Node(w); n != nil && containsString(n.Dependencies.BlockedBy, p) {
			edges = append(edges, map[string]any{"task_id": p, "target_id": w, "dependency_type": "blocks"})
		}
	}
	e.WithDetail("cycle_edges", edges)
	if len(edges) == 1 {
		args := map[string]any{"spec_id": s.Header.SpecID}
		for k, v := range edges[0] {
			args[k] = v
		}
		e.WithStep("task-remove-dependency", args, nil)
	}
	return e
}

// linkBlocked writes both halves of "waiter blocked_by prereq" (idempotent).
func linkBlocked(s *Spec, waiter, prereq string) {
	if w := s.Node(waiter); w != nil && !containsString(w.Dependencies.BlockedBy, prereq) {
		e := s.Edit(waiter)
		e.Dependencies.BlockedBy = append(e.Dependencies.BlockedBy, prereq)
	}
	if p := s.Node(prereq); p != nil && !containsString(p.Dependencies.Blocks, waiter) {
		e := s.Edit(prereq)
		e.Dependencies.Blocks = append(e.Dependencies.Blocks, waiter)
	}
}

// unlinkBlocked removes both halves of "waiter blocked_by prereq" (each only
// when present, editing only nodes that change).
func unlinkBlocked(s *Spec, waiter, prereq string) {
	if w := s.Node(waiter); w != nil && containsString(w.Dependencies.BlockedBy, prereq) {
		e := s.Edit(waiter)
		e.Dependencies.BlockedBy = removeString(e.Dependencies.BlockedBy, prereq)
	}
	if p := s.Node(prereq); p != nil && containsString(p.Dependencies.Blocks, waiter) {
		e := s.Edit(prereq)
		e.Dependencies.Blocks = removeString(e.Dependencies.Blocks, waiter)
	}
}

// RemoveDependency removes an edge added by AddDependency (same depType
// meaning), both halves.
//
// Errors: INVALID_FORMAT (unknown depType), TASK_NOT_FOUND (either id),
// DEPENDENCY_NOT_FOUND (no such edge; its fuzzy matches are the node's existing
// targets of that type).
func RemoveDependency(s *Spec, taskID, targetID, depType string) (err error) {
	defer s.mutate(&err)()
	if depType == "" {
		depType = "blocks"
	}
	if !containsString(DependencyTypes, depType) {
		return newErr(errcode.InvalidFormat, "dependency_type", "dependency_type must be one of blocks, blocked_by, depends").
			WithDetail("received", truncateForDetails(depType)).WithDetail("allowed", DependencyTypes)
	}
	task := s.Node(taskID)
	if task == nil {
		return taskNotFound(s, "task_id", taskID)
	}
	target := s.Node(targetID)
	switch depType {
	case "depends":
		if !containsString(task.Dependencies.Depends, targetID) {
			e := newErr(errcode.DependencyNotFound, "target_id", "%s does not depend on %s", taskID, targetID)
			withMatches(e, task.Dependencies.Depends)
			return e
		}
		e := s.Edit(taskID)
		e.Dependencies.Depends = removeString(e.Dependencies.Depends, targetID)
	default:
		waiter, prereq := targetID, taskID
		list := task.Dependencies.Blocks
		if depType == "blocked_by" {
			waiter, prereq = taskID, targetID
			list = task.Dependencies.BlockedBy
		}
		w, p := s.Node(waiter), s.Node(prereq)
		present := (w != nil && containsString(w.Dependencies.BlockedBy, prereq)) || (p != nil && containsString(p.Dependencies.Blocks, waiter))
		if !present {
			if target == nil {
				return taskNotFound(s, "target_id", targetID)
			}
			e := newErr(errcode.DependencyNotFound, "target_id", "%s is not blocked by %s", waiter, prereq)
			withMatches(e, list)
			return e
		}
		unlinkBlocked(s, waiter, prereq)
	}
	s.touch()
	return nil
}

// blocksNow reports whether target, as a prerequisite, is unfinished: it is
// not completed, and it is not a research node whose blocking_mode is other
// than hard. Missing targets do not block (Validate reports them).
func blocksNow(target *Node) bool {
	if target == nil || target.Status == StatusCompleted {
		return false
	}
	if target.Type == TypeResearch && target.BlockingMode() != "hard" {
		return false
	}
	return true
}

// Blockers returns the unfinished prerequisites of id: the blocked_by targets
// of the node and of each of its ancestors that are not completed (research
// nodes only when their blocking_mode is hard), deduplicated, in natural
// order. It returns nil for an unknown id.
func Blockers(s *Spec, id string) []string {
	seen := map[string]bool{}
	var out []string
	for guard := 0; id != "" && guard < 10000; guard++ {
		n := s.Node(id)
		if n == nil {
			break
		}
		for _, b := range n.Dependencies.BlockedBy {
			if seen[b] {
				continue
			}
			seen[b] = true
			if blocksNow(s.Node(b)) {
				out = append(out, b)
			}
		}
		id = n.Parent
	}
	SortIDs(out)
	return out
}

// IsUnblocked reports whether every prerequisite of id (its own and its
// ancestors', see Blockers) is finished.
func IsUnblocked(s *Spec, id string) bool { return len(Blockers(s, id)) == 0 }
