package specs

// Rollups: counts and computed statuses.
//
// A leaf task/subtask/verify counts 1 (completed 1 iff completed); other
// leaves count 0. A parent's counts are the sums over its children; a parent
// is not counted itself. A parent's status: blocked stays blocked (except the
// root); else in_progress when a non-research child is in progress; else
// pending when it counts nothing or nothing is completed; completed when
// everything is; otherwise in_progress. The root is archived while the
// lifecycle is archived. A phase that becomes completed gets completed_at
// (now) and needs_journaling; a phase that stops being completed loses both.
//
// Incremental maintenance. Every node with children keeps, besides its
// public total_tasks/completed_tasks, a small internal summary of its direct
// children in metadata under [RollupMetaKey] (a key of metadata, so the node's
// JSON keeps the foundry shape):
//
//	"_rollup": {"in_progress": k, "first_open": i}
//
// in_progress counts the direct non-research children whose status is
// in_progress (the only input of the parent status that the counts do not
// give); first_open is the index in children of the first child that still
// has unfinished work (total_tasks != completed_tasks), len(children) when
// none. With the counts, a node's status follows from its summary alone.
//
// Every exported mutation runs inside [Spec.mutate], whose log holds the
// state of every node it changed as it was before the mutation. Rolling up a
// parent P therefore needs no child scan: start from P's summary before the
// mutation, subtract the old contribution (counts, in-progress flag) of
// every changed node that was a child of P and add the new contribution of
// every changed node that is now a child of P. The result does not depend on
// how often P is rolled up within the mutation. first_open is kept the same
// way: lowered to a changed child that is now open, then advanced past
// finished children (reading them one by one; a sequential completion reads
// one). When the children list itself changed (add, remove, move) the
// prefix known finished before the mutation is reused without reads.
// A leaf status change thus reads O(depth) nodes plus the changed ones.
//
// Fallbacks to a full scan of the children: outside a mutation, for a node
// whose pre-mutation summary is missing (stored before the summary existed)
// or inconsistent. [FromDocument] (import) rebuilds the summaries from the
// document's children, never trusting the document's own. [RecomputeAll]
// rebuilds every summary; [CheckInvariants] verifies them.

// RollupMetaKey is the metadata key of a parent's internal rollup summary.
// It is maintained by the rollups: never set it by hand. Its value is
// replaced or removed whole, never changed in place: node copies share it
// (Node.Clone).
const RollupMetaKey = "_rollup"

// rollupSum is a node's children summary.
type rollupSum struct {
	total, completed int
	inProgress       int // direct non-research children in progress
	firstOpen        int // index of the first child with unfinished work
}

// openNode reports whether n has unfinished counted work below or at it.
func openNode(n *Node) bool { return n != nil && n.TotalTasks != n.CompletedTasks }

// contribution is what child c adds to its parent's summary.
func contribution(c *Node) (total, completed, inProgress int) {
	total, completed = c.TotalTasks, c.CompletedTasks
	if c.Type != TypeResearch && c.Status == StatusInProgress {
		inProgress = 1
	}
	return total, completed, inProgress
}

// add adds sign (+1 or -1) times child c's contribution to the counters of
// sum; firstOpen is left alone.
func (sum *rollupSum) add(c *Node, sign int) {
	t, d, ip := contribution(c)
	sum.total += sign * t
	sum.completed += sign * d
	sum.inProgress += sign * ip
}

// consistent reports whether the counters of sum can be a real summary.
func (sum rollupSum) consistent() bool {
	return sum.total >= 0 && sum.completed >= 0 && sum.completed <= sum.total && sum.inProgress >= 0
}

// rollupCounters reads the stored summary counters of n.
func rollupCounters(n *Node) (inProgress, firstOpen int, ok bool) {
	m, isMap := n.Metadata[RollupMetaKey].(map[string]any)
	if !isMap {
		return 0, 0, false
	}
	ip, ok1 := toFloat(m["in_progress"])
	fo, ok2 := toFloat(m["first_open"])
	if !ok1 || !ok2 || ip < 0 || fo < 0 || ip != float64(int(ip)) || fo != float64(int(fo)) {
		return 0, 0, false
	}
	return int(ip), int(fo), true
}

func rollupMeta(sum rollupSum) map[string]any {
	return map[string]any{"in_progress": float64(sum.inProgress), "first_open": float64(sum.firstOpen)}
}

// fullSum computes a parent's summary by reading all its children.
func fullSum(s *Spec, n *Node) rollupSum {
	sum := rollupSum{firstOpen: -1}
	for i, cid := range n.Children.All() {
		c := s.Node(cid)
		if c == nil {
			continue
		}
		sum.add(c, 1)
		if sum.firstOpen < 0 && openNode(c) {
			sum.firstOpen = i
		}
	}
	if sum.firstOpen < 0 {
		sum.firstOpen = n.Children.Len()
	}
	return sum
}

// preMutation returns node id as it was when the running mutation started
// (nil when it did not exist).
func (s *Spec) preMutation(id string) *Node {
	if sv, ok := s.tx.saved[id]; ok {
		switch {
		case sv.inOverlay:
			return sv.node
		case sv.deleted:
			return nil
		}
		return s.fromSource(id)
	}
	return s.Node(id)
}

// incrementalSum computes a parent's summary from its pre-mutation summary
// and the nodes changed by the running mutation. ok is false when that is
// not possible (no mutation running, no usable summary).
func incrementalSum(s *Spec, n *Node) (sum rollupSum, ok bool) {
	if s.tx == nil {
		return sum, false
	}
	sum, preChildren, ok := preMutationSum(s, n)
	if !ok {
		return sum, false
	}
	fo := sum.firstOpen
	lowestChangedOpen := applyChangedChildren(s, n, &sum, fo)
	if !sum.consistent() {
		return sum, false
	}
	if fo <= n.Children.Len() && preChildren.prefixEqual(n.Children, fo) {
		// The finished prefix is where it was (an unchanged list, or one
		// changed only after it, as an add at the end): finished before
		// first_open, or changed.
		sum.firstOpen = advanceFirstOpen(s, n, min(fo, lowestChangedOpen))
	} else {
		sum.firstOpen = firstOpenAfterReorder(s, n, preChildren, fo)
	}
	return sum, true
}

// preMutationSum returns n's summary and children as they were when the
// running mutation started: the zero summary and no children when n did not
// exist or had no children then. ok is false when n had children but its
// stored summary is missing or inconsistent with them.
func preMutationSum(s *Spec, n *Node) (sum rollupSum, children ChildList, ok bool) {
	pre := s.preMutation(n.ID)
	if pre == nil || pre.Children.Len() == 0 {
		return sum, ChildList{}, true
	}
	ip, fo, valid := rollupCounters(pre)
	if !valid || fo > pre.Children.Len() {
		return sum, ChildList{}, false
	}
	sum = rollupSum{total: pre.TotalTasks, completed: pre.CompletedTasks, inProgress: ip, firstOpen: fo}
	return sum, pre.Children, true
}

// applyChangedChildren moves sum's counters from the pre-mutation state of
// n's children to their current one: it subtracts the old contribution of
// every changed node that was a child of n and adds the new contribution of
// every changed node that is one now. It returns the lowest index below
// limit in n's children of a changed child that is open now (limit: none);
// only the first limit children are searched, so an add to a long list
// does not read the whole list.
func applyChangedChildren(s *Spec, n *Node, sum *rollupSum, limit int) int {
	low := limit
	for id := range s.tx.saved {
		if id == n.ID {
			continue
		}
		if p := s.preMutation(id); p != nil && p.Parent == n.ID {
			sum.add(p, -1)
		}
		if c := s.Node(id); c != nil && c.Parent == n.ID {
			sum.add(c, 1)
			low = openChildIndex(n, c, low)
		}
	}
	return low
}

// openChildIndex is c's index in n's children when c is open and listed
// there below limit, else limit.
func openChildIndex(n, c *Node, limit int) int {
	if !openNode(c) {
		return limit
	}
	if i := n.Children.indexBelow(c.ID, min(limit, n.Children.Len())); i >= 0 {
		return i
	}
	return limit
}

// advanceFirstOpen returns the index of n's first open child, starting at
// h, below which every child is known finished.
func advanceFirstOpen(s *Spec, n *Node, h int) int {
	for h < n.Children.Len() && !openNode(s.Node(n.Children.At(h))) {
		h++
	}
	return h
}

// firstOpenAfterReorder returns n's first open child index when its children
// list changed: the children of the pre-mutation finished prefix that the
// mutation did not touch are still finished; the others are read until an
// open one.
func firstOpenAfterReorder(s *Spec, n *Node, pre ChildList, fo int) int {
	done := make(map[string]bool, fo)
	for _, id := range pre.Range(0, fo) {
		if _, touched := s.tx.saved[id]; !touched {
			done[id] = true
		}
	}
	h := 0
	for h < n.Children.Len() && (done[n.Children.At(h)] || !openNode(s.Node(n.Children.At(h)))) {
		h++
	}
	return h
}

// rollupStatus is the computed status of parent n with summary sum.
func rollupStatus(s *Spec, n *Node, sum rollupSum) Status {
	switch {
	case n.ID == RootID && s.Header.Lifecycle == LifecycleArchived:
		return StatusArchived
	case n.ID != RootID && n.Status == StatusBlocked:
		return StatusBlocked
	case sum.inProgress > 0:
		return StatusInProgress
	case sum.total == 0 || sum.completed == 0:
		return StatusPending
	case sum.completed == sum.total:
		return StatusCompleted
	}
	return StatusInProgress
}

// computedRollupSum returns n's counts, status and, for a node with children,
// its summary (nil for a leaf). full forces a scan of the children.
func computedRollupSum(s *Spec, n *Node, full bool) (total, completed int, status Status, meta map[string]any) {
	total, completed, status, sum, parent := computedRollup(s, n, full)
	if parent {
		meta = rollupMeta(sum)
	}
	return total, completed, status, meta
}

// computedRollup is computedRollupSum with the summary as counters (sum,
// meaningful when parent: n has children), so that a rollup that leaves
// the summary as stored builds no map for it.
func computedRollup(s *Spec, n *Node, full bool) (total, completed int, status Status, sum rollupSum, parent bool) {
	if n.IsLeaf() {
		if n.Type.Counted() {
			total = 1
			if n.Status == StatusCompleted {
				completed = 1
			}
			return total, completed, n.Status, sum, false
		}
		if n.Type == TypeResearch {
			return 0, 0, n.Status, sum, false
		}
		return 0, 0, rollupStatus(s, n, sum), sum, false
	}
	ok := false
	if !full {
		sum, ok = incrementalSum(s, n)
	}
	if !ok {
		sum = fullSum(s, n)
	}
	return sum.total, sum.completed, rollupStatus(s, n, sum), sum, true
}

// sameRollupMeta reports whether n's stored summary equals want (nil: none).
func sameRollupMeta(n *Node, want map[string]any) bool {
	v, has := n.Metadata[RollupMetaKey]
	if want == nil {
		return !has
	}
	ip, fo, ok := rollupCounters(n)
	if !ok {
		return false
	}
	m, _ := v.(map[string]any)
	return len(m) == 2 && float64(ip) == want["in_progress"] && float64(fo) == want["first_open"]
}

// sameRollupSummary is sameRollupMeta(n, rollupMeta(sum)) when parent,
// sameRollupMeta(n, nil) otherwise, without building the map.
func sameRollupSummary(n *Node, sum rollupSum, parent bool) bool {
	v, has := n.Metadata[RollupMetaKey]
	if !parent {
		return !has
	}
	ip, fo, ok := rollupCounters(n)
	if !ok {
		return false
	}
	m, _ := v.(map[string]any)
	return len(m) == 2 && ip == sum.inProgress && fo == sum.firstOpen
}

// rollupNode recomputes one node (incrementally when full is false, see the
// package comment above), editing it only when something changes. It reports
// whether the node changed.
func rollupNode(s *Spec, id string, full bool) bool {
	n := s.Node(id)
	if n == nil {
		return false
	}
	total, completed, status, sum, parent := computedRollup(s, n, full)
	flips := phaseCompletionFlips(n, status)
	sameMeta := sameRollupSummary(n, sum, parent)
	if !flips && sameMeta && total == n.TotalTasks && completed == n.CompletedTasks && status == n.Status {
		return false
	}
	e := s.Edit(id)
	e.TotalTasks, e.CompletedTasks, e.Status = total, completed, status
	if !sameMeta {
		var meta map[string]any
		if parent {
			meta = rollupMeta(sum)
		}
		setRollupMeta(e, meta)
	}
	if flips {
		markPhaseCompletion(s, e)
	}
	return true
}

// phaseCompletionFlips reports whether n is a phase that becomes completed or
// stops being completed when its status moves to status.
func phaseCompletionFlips(n *Node, status Status) bool {
	return n.Type == TypePhase && (status == StatusCompleted) != (n.Status == StatusCompleted)
}

// setRollupMeta stores meta as e's internal summary, or removes the summary
// when meta is nil (a leaf).
func setRollupMeta(e *Node, meta map[string]any) {
	if meta == nil {
		e.DeleteMeta(RollupMetaKey)
		return
	}
	e.SetMeta(RollupMetaKey, meta)
}

// markPhaseCompletion sets completed_at (now) and needs_journaling on phase e
// whose status just became completed, and removes both when it just stopped
// being completed.
func markPhaseCompletion(s *Spec, e *Node) {
	if e.Status == StatusCompleted {
		e.SetMeta("completed_at", s.nowString())
		e.SetMeta("needs_journaling", true)
		return
	}
	e.DeleteMeta("completed_at", "needs_journaling")
}

// rebuildSummaries sets the internal summary of every node in the view's
// overlay from its children's stored fields (one pass, counts and statuses
// untouched): what an imported document gets instead of its own summaries.
// It edits the overlay in place and must run outside a mutation.
func rebuildSummaries(s *Spec) {
	for _, n := range s.overlay {
		if n.IsLeaf() {
			delete(n.Metadata, RollupMetaKey)
			continue
		}
		n.SetMeta(RollupMetaKey, rollupMeta(fullSum(s, n)))
	}
}

// RecomputeAncestors recomputes the rollups of id and of every ancestor up to
// the root, then the header's computed fields. Only nodes whose counts or
// status change are edited. id may be a node that was just changed (a leaf
// whose status moved) or the parent of a removed or moved node. A missing id
// only recomputes the header. Within a mutation each node is rolled up from
// its summary and the changed nodes (O(depth) reads for a leaf change).
func RecomputeAncestors(s *Spec, id string) {
	for guard := 0; id != "" && guard < 10000; guard++ {
		n := s.Node(id)
		if n == nil {
			break
		}
		rollupNode(s, id, false)
		id = n.Parent
	}
	RecomputeHeader(s)
}

// RecomputeAll recomputes every node reachable from the root (post-order),
// rebuilding every internal summary from the children, and the header.
// Nodes not reachable from the root are left alone (Validate reports them as
// orphans).
func RecomputeAll(s *Spec) {
	if s.Root() == nil {
		RecomputeHeader(s)
		return
	}
	type frame struct {
		id   string
		next int
	}
	visited := map[string]bool{RootID: true}
	stack := []frame{{id: RootID}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		n := s.Node(top.id)
		if n != nil && top.next < n.Children.Len() {
			cid := n.Children.At(top.next)
			top.next++
			if !visited[cid] && s.Has(cid) {
				visited[cid] = true
				stack = append(stack, frame{id: cid})
			}
			continue
		}
		rollupNode(s, top.id, true)
		stack = stack[:len(stack)-1]
	}
	RecomputeHeader(s)
}

// RecomputeHeader sets the header's computed fields from the root and its
// phases: counts, progress_percentage = floor(completed/total·100), status
// (the root's), current_phase = first in-progress phase, else first pending.
func RecomputeHeader(s *Spec) {
	r := s.Root()
	h := &s.Header
	if r == nil {
		h.TotalTasks, h.CompletedTasks, h.ProgressPercentage, h.CurrentPhase = 0, 0, 0, ""
		if h.Lifecycle == LifecycleArchived {
			h.Status = StatusArchived
		} else {
			h.Status = StatusPending
		}
		return
	}
	h.TotalTasks, h.CompletedTasks, h.Status = r.TotalTasks, r.CompletedTasks, r.Status
	h.ProgressPercentage = progress(r.CompletedTasks, r.TotalTasks)
	h.CurrentPhase = currentPhase(s, r)
}

func progress(completed, total int) int {
	if total <= 0 {
		return 0
	}
	return completed * 100 / total
}

func currentPhase(s *Spec, r *Node) string {
	firstPending := ""
	for _, cid := range r.Children.All() {
		c := s.Node(cid)
		if c == nil || c.Type != TypePhase {
			continue
		}
		if c.Status == StatusInProgress {
			return cid
		}
		if c.Status == StatusPending && firstPending == "" {
			firstPending = cid
		}
	}
	return firstPending
}
