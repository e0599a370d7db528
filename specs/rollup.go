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

// computedRollup returns what n's counts and status should be, reading its
// children from the view.
func computedRollup(s *Spec, n *Node) (total, completed int, status Status) {
	if n.IsLeaf() {
		if n.Type.Counted() {
			total = 1
			if n.Status == StatusCompleted {
				completed = 1
			}
			return total, completed, n.Status
		}
		if n.Type == TypeResearch {
			return 0, 0, n.Status
		}
	}
	anyInProgress := false
	for _, cid := range n.Children {
		c := s.Node(cid)
		if c == nil {
			continue
		}
		total += c.TotalTasks
		completed += c.CompletedTasks
		if c.Type != TypeResearch && c.Status == StatusInProgress {
			anyInProgress = true
		}
	}
	switch {
	case n.ID == RootID && s.Header.Lifecycle == LifecycleArchived:
		status = StatusArchived
	case n.ID != RootID && n.Status == StatusBlocked:
		status = StatusBlocked
	case anyInProgress:
		status = StatusInProgress
	case total == 0 || completed == 0:
		status = StatusPending
	case completed == total:
		status = StatusCompleted
	default:
		status = StatusInProgress
	}
	return total, completed, status
}

// rollupNode recomputes one node from its children, editing it only when
// something changes. It reports whether the node changed.
func rollupNode(s *Spec, id string) bool {
	n := s.Node(id)
	if n == nil {
		return false
	}
	total, completed, status := computedRollup(s, n)
	phaseDone := n.Type == TypePhase && status == StatusCompleted && n.Status != StatusCompleted
	phaseUndone := n.Type == TypePhase && status != StatusCompleted && n.Status == StatusCompleted
	if total == n.TotalTasks && completed == n.CompletedTasks && status == n.Status && !phaseDone && !phaseUndone {
		return false
	}
	e := s.Edit(id)
	e.TotalTasks, e.CompletedTasks, e.Status = total, completed, status
	if phaseDone {
		e.SetMeta("completed_at", s.nowString())
		e.SetMeta("needs_journaling", true)
	}
	if phaseUndone {
		e.DeleteMeta("completed_at", "needs_journaling")
	}
	return true
}

// RecomputeAncestors recomputes the rollups of id and of every ancestor up to
// the root, then the header's computed fields. Only nodes whose counts or
// status change are edited. id may be a node that was just changed (a leaf
// whose status moved) or the parent of a removed or moved node. A missing id
// only recomputes the header.
func RecomputeAncestors(s *Spec, id string) {
	for guard := 0; id != "" && guard < 10000; guard++ {
		n := s.Node(id)
		if n == nil {
			break
		}
		rollupNode(s, id)
		id = n.Parent
	}
	RecomputeHeader(s)
}

// RecomputeAll recomputes every node reachable from the root (post-order) and
// the header. Nodes not reachable from the root are left alone (Validate
// reports them as orphans).
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
		if n != nil && top.next < len(n.Children) {
			cid := n.Children[top.next]
			top.next++
			if !visited[cid] && s.Has(cid) {
				visited[cid] = true
				stack = append(stack, frame{id: cid})
			}
			continue
		}
		rollupNode(s, top.id)
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
	for _, cid := range r.Children {
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
