package specs

import (
	"maps"
	"slices"

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
		return upNeighbors(s, n, buf)
	}
	return downNeighbors(s, n, buf)
}

// upNeighbors appends the out-edges of up(n): up(parent) and down(b) for
// each existing blocked_by target b other than n.
func upNeighbors(s *Spec, n *Node, buf []vertex) []vertex {
	if n.Parent != "" && s.Has(n.Parent) {
		buf = append(buf, vertex{n.Parent, true})
	}
	for _, b := range n.Dependencies.BlockedBy {
		if b != n.ID && s.Has(b) {
			buf = append(buf, vertex{b, false})
		}
	}
	return buf
}

// downNeighbors appends the out-edges of down(n): down(c) for each
// existing child c, then up(n).
func downNeighbors(s *Spec, n *Node, buf []vertex) []vertex {
	for _, c := range n.Children.All() {
		if s.Has(c) {
			buf = append(buf, vertex{c, false})
		}
	}
	return append(buf, vertex{n.ID, true})
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
			return tracePath(prev, from, to)
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

// tracePath is the path from `from` to `to` that the predecessor map prev
// records.
func tracePath(prev map[vertex]vertex, from, to vertex) []vertex {
	path := []vertex{to}
	for x := to; x != from; {
		x = prev[x]
		path = append(path, x)
	}
	slices.Reverse(path)
	return path
}

// cycleIDs renders a wait-graph path closing the edge "waiter blocked_by
// prereq" as a node list: waiter, prereq, then for every blocked_by edge on
// the path its two ends, and waiter again. Consecutive nodes are linked by
// "is blocked by" or by containment.
func cycleIDs(waiter, prereq string, path []vertex) []string {
	out := append([]string{waiter, prereq}, dependencyEnds(path)...)
	return dedupAdjacent(append(out, waiter))
}

// dependencyEnds lists, in path order, the two ends of every blocked_by
// edge (up → down) of a wait-graph path.
func dependencyEnds(path []vertex) []string {
	var out []string
	for i := 0; i+1 < len(path); i++ {
		if a, b := path[i], path[i+1]; a.up && !b.up {
			out = append(out, a.id, b.id)
		}
	}
	return out
}

// dedupAdjacent drops each id equal to the one before it, in place.
func dedupAdjacent(ids []string) []string {
	out := ids[:1]
	for _, id := range ids[1:] {
		if id != out[len(out)-1] {
			out = append(out, id)
		}
	}
	return out
}

// wouldCycle reports the cycle that "waiter blocked_by prereq" would close,
// or nil. Ancestor/descendant pairs are always cycles.
func wouldCycle(s *Spec, waiter, prereq string) []string {
	if path := waitPath(s, vertex{prereq, false}, vertex{waiter, true}); path != nil {
		return cycleIDs(waiter, prereq, path)
	}
	return nil
}

// Depth-first search colours of FindDeadlock: unvisited, on the stack, done.
const (
	dfsWhite = iota
	dfsGrey
	dfsBlack
)

// FindDeadlock returns one cycle of the inherited wait graph of the whole
// view (see the package's dependency rules), or nil when there is none. It
// reads every node.
func FindDeadlock(s *Spec) []string {
	d := deadlockSearch{s: s, color: map[vertex]int{}}
	for _, id := range s.IDs() {
		start := vertex{id, true}
		if d.color[start] == dfsWhite && slices.ContainsFunc(s.Node(id).Dependencies.BlockedBy, s.Has) {
			if cycle := d.from(start); cycle != nil {
				return cycle
			}
		}
	}
	return nil
}

// deadlockSearch is FindDeadlock's depth-first search, its colours kept
// across starts.
type deadlockSearch struct {
	s     *Spec
	color map[vertex]int
}

// deadlockFrame is a vertex on the search stack and its neighbours still
// to visit.
type deadlockFrame struct {
	v    vertex
	next []vertex
}

// from searches from the unvisited vertex start and returns the first cycle of
// dependencies it closes, or nil.
func (d *deadlockSearch) from(start vertex) []string {
	stack := []deadlockFrame{{v: start, next: waitNeighbors(d.s, start, nil)}}
	d.color[start] = dfsGrey
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.next) == 0 {
			d.color[top.v] = dfsBlack
			stack = stack[:len(stack)-1]
			continue
		}
		w := top.next[0]
		top.next = top.next[1:]
		switch d.color[w] {
		case dfsGrey:
			if cycle := greyCycle(stack, w); cycle != nil {
				return cycle
			}
		case dfsWhite:
			d.color[w] = dfsGrey
			stack = append(stack, deadlockFrame{v: w, next: waitNeighbors(d.s, w, nil)})
		}
	}
	return nil
}

// greyCycle renders the loop the edge top → w closes, w being on stack, as
// the ends of its blocked_by edges with the first repeated at the end; nil
// when the loop holds no dependency (a loop of parent or children links,
// which Validate reports as a hierarchy problem).
func greyCycle(stack []deadlockFrame, w vertex) []string {
	i := slices.IndexFunc(stack, func(f deadlockFrame) bool { return f.v == w })
	path := make([]vertex, 0, len(stack)-i+1)
	for _, f := range stack[i:] {
		path = append(path, f.v)
	}
	out := dependencyEnds(append(path, w))
	if len(out) == 0 {
		return nil
	}
	return dedupAdjacent(append(out, out[0]))
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
		withMatches(e, r.Children.Slice())
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
	depType, err = checkDepType(depType)
	if err != nil {
		return err
	}
	task, err := dependencyPair(s, taskID, targetID)
	if err != nil {
		return err
	}
	if depType == "depends" {
		return addDepends(s, task, taskID, targetID)
	}
	waiter, prereq, _ := blockEdge(task, taskID, targetID, depType)
	if err := checkNewBlock(s, waiter, prereq); err != nil {
		return err
	}
	linkBlocked(s, waiter, prereq)
	s.touch()
	return nil
}

// checkDepType is depType, "blocks" when empty; INVALID_FORMAT when it is
// not one of DependencyTypes.
func checkDepType(depType string) (string, error) {
	if depType == "" {
		depType = "blocks"
	}
	if !containsString(DependencyTypes, depType) {
		return "", newErr(errcode.InvalidFormat, "dependency_type", "dependency_type must be one of blocks, blocked_by, depends").
			WithDetail("received", truncateForDetails(depType)).WithDetail("allowed", DependencyTypes)
	}
	return depType, nil
}

// dependencyPair checks the two ends of a new edge and returns taskID's
// node. Errors: SELF_REFERENCE, TASK_NOT_FOUND (field task_id or
// target_id), VALIDATION_ERROR (either is the root).
func dependencyPair(s *Spec, taskID, targetID string) (*Node, error) {
	if taskID == targetID {
		return nil, newErr(errcode.SelfReference, "target_id", "a node cannot depend on itself (%s)", taskID).WithDetail("received", taskID)
	}
	task := s.Node(taskID)
	if task == nil {
		return nil, taskNotFound(s, "task_id", taskID)
	}
	if !s.Has(targetID) {
		return nil, taskNotFound(s, "target_id", targetID)
	}
	if taskID == RootID || targetID == RootID {
		return nil, newErr(errcode.Validation, "task_id", "the spec root cannot take part in dependencies")
	}
	return task, nil
}

// addDepends records the informational edge taskID (node task) depends on
// targetID. Errors: DUPLICATE_ENTRY.
func addDepends(s *Spec, task *Node, taskID, targetID string) error {
	if containsString(task.Dependencies.Depends, targetID) {
		return newErr(errcode.DuplicateEntry, "target_id", "%s already depends on %s", taskID, targetID)
	}
	e := s.Edit(taskID)
	e.Dependencies.Depends = append(e.Dependencies.Depends, targetID)
	s.touch()
	return nil
}

// blockEdge is the blocked_by edge an edge of depType between taskID (node
// task) and targetID means ("blocked_by": the task waits for the target;
// else the target waits for the task), with the list of task's that holds
// it.
func blockEdge(task *Node, taskID, targetID, depType string) (waiter, prereq string, listed []string) {
	if depType == "blocked_by" {
		return taskID, targetID, task.Dependencies.BlockedBy
	}
	return targetID, taskID, task.Dependencies.Blocks
}

// checkNewBlock refuses "waiter blocked_by prereq" when it exists
// (DUPLICATE_ENTRY) or would close a cycle (CIRCULAR_DEPENDENCY, see
// breakCycle).
func checkNewBlock(s *Spec, waiter, prereq string) error {
	if isBlockedBy(s, waiter, prereq) {
		return newErr(errcode.DuplicateEntry, "target_id", "%s is already blocked by %s", waiter, prereq)
	}
	if cycle := wouldCycle(s, waiter, prereq); cycle != nil {
		e := newErr(errcode.CircularDependency, "target_id",
			"%s blocked by %s would create a circular dependency: %v", waiter, prereq, cycle).WithDetail("cycle", cycle)
		return breakCycle(s, e, cycle)
	}
	return nil
}

// breakCycle is the CIRCULAR_DEPENDENCY e over cycle (waiter, prereq, …,
// waiter) with the stored edges it runs through in details.cycle_edges
// ({task_id, target_id, dependency_type: blocks}: task_id blocks
// target_id), and, when exactly one stored edge closes it, the removal of
// that edge as its step.
func breakCycle(s *Spec, e *core.Error, cycle []string) *core.Error {
	edges := storedCycleEdges(s, cycle)
	e.WithDetail("cycle_edges", edges)
	if len(edges) == 1 {
		args := map[string]any{"spec_id": s.Header.SpecID}
		maps.Copy(args, edges[0])
		e.WithStep("task-remove-dependency", args, nil)
	}
	return e
}

// storedCycleEdges are the stored blocked_by edges between consecutive
// nodes of cycle after its first, as task-add-dependency arguments.
func storedCycleEdges(s *Spec, cycle []string) []map[string]any {
	edges := []map[string]any{}
	for i := 1; i+1 < len(cycle); i++ {
		if w, p := cycle[i], cycle[i+1]; isBlockedBy(s, w, p) {
			edges = append(edges, map[string]any{"task_id": p, "target_id": w, "dependency_type": "blocks"})
		}
	}
	return edges
}

// isBlockedBy reports whether node waiter exists and lists prereq in its
// blocked_by.
func isBlockedBy(s *Spec, waiter, prereq string) bool {
	w := s.Node(waiter)
	return w != nil && containsString(w.Dependencies.BlockedBy, prereq)
}

// listsBlocks reports whether node prereq exists and lists waiter in its
// blocks.
func listsBlocks(s *Spec, prereq, waiter string) bool {
	p := s.Node(prereq)
	return p != nil && containsString(p.Dependencies.Blocks, waiter)
}

// linkBlocked writes both halves of "waiter blocked_by prereq" (idempotent).
func linkBlocked(s *Spec, waiter, prereq string) {
	if s.Has(waiter) && !isBlockedBy(s, waiter, prereq) {
		e := s.Edit(waiter)
		e.Dependencies.BlockedBy = append(e.Dependencies.BlockedBy, prereq)
	}
	if s.Has(prereq) && !listsBlocks(s, prereq, waiter) {
		e := s.Edit(prereq)
		e.Dependencies.Blocks = append(e.Dependencies.Blocks, waiter)
	}
}

// unlinkBlocked removes both halves of "waiter blocked_by prereq" (each only
// when present, editing only nodes that change).
func unlinkBlocked(s *Spec, waiter, prereq string) {
	if isBlockedBy(s, waiter, prereq) {
		e := s.Edit(waiter)
		e.Dependencies.BlockedBy = removeString(e.Dependencies.BlockedBy, prereq)
	}
	if listsBlocks(s, prereq, waiter) {
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
	depType, err = checkDepType(depType)
	if err != nil {
		return err
	}
	task := s.Node(taskID)
	if task == nil {
		return taskNotFound(s, "task_id", taskID)
	}
	if depType == "depends" {
		err = removeDepends(s, task, taskID, targetID)
	} else {
		err = removeBlock(s, task, taskID, targetID, depType)
	}
	if err != nil {
		return err
	}
	s.touch()
	return nil
}

// removeDepends removes the informational edge taskID (node task) depends
// on targetID. Errors: DEPENDENCY_NOT_FOUND (fuzzy matches: task's
// depends).
func removeDepends(s *Spec, task *Node, taskID, targetID string) error {
	if !containsString(task.Dependencies.Depends, targetID) {
		e := newErr(errcode.DependencyNotFound, "target_id", "%s does not depend on %s", taskID, targetID)
		withMatches(e, task.Dependencies.Depends)
		return e
	}
	e := s.Edit(taskID)
	e.Dependencies.Depends = removeString(e.Dependencies.Depends, targetID)
	return nil
}

// removeBlock removes both halves of the blocked_by edge an edge of
// depType between taskID and targetID means (blockEdge), when either half
// is there. Errors: TASK_NOT_FOUND (target_id, when neither half is there
// and the target does not exist), DEPENDENCY_NOT_FOUND (fuzzy matches:
// task's list of that type).
func removeBlock(s *Spec, task *Node, taskID, targetID, depType string) error {
	waiter, prereq, listed := blockEdge(task, taskID, targetID, depType)
	if isBlockedBy(s, waiter, prereq) || listsBlocks(s, prereq, waiter) {
		unlinkBlocked(s, waiter, prereq)
		return nil
	}
	if !s.Has(targetID) {
		return taskNotFound(s, "target_id", targetID)
	}
	e := newErr(errcode.DependencyNotFound, "target_id", "%s is not blocked by %s", waiter, prereq)
	withMatches(e, listed)
	return e
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
		out = appendUnfinished(s, out, n.Dependencies.BlockedBy, seen)
		id = n.Parent
	}
	SortIDs(out)
	return out
}

// appendUnfinished appends to out each prerequisite of prereqs not yet in
// seen that still blocks (blocksNow), marking every one seen.
func appendUnfinished(s *Spec, out, prereqs []string, seen map[string]bool) []string {
	for _, b := range prereqs {
		if seen[b] {
			continue
		}
		seen[b] = true
		if blocksNow(s.Node(b)) {
			out = append(out, b)
		}
	}
	return out
}

// IsUnblocked reports whether every prerequisite of id (its own and its
// ancestors', see Blockers) is finished.
func IsUnblocked(s *Spec, id string) bool { return len(Blockers(s, id)) == 0 }
