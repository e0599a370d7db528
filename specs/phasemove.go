package specs

// PhaseMove is a phase after MovePhaseLinked: the move, and the blocked_by
// edges between phases it added (Linked) and removed (Unlinked).
type PhaseMove struct {
	MovedPhase
	LinkPrevious bool   `json:"link_previous"`
	Linked       []Link `json:"linked,omitempty"`
	Unlinked     []Link `json:"unlinked,omitempty"`
}

// MovePhaseLinked moves a phase (MovePhase). With linkPrevious (foundry-mcp's
// phase-move meaning) the phases' sequential chain follows the move: the
// phase leaves the chain where it was (its old neighbours, when both were
// chained through it, are chained to each other) and joins it where it
// lands: blocked by the phase before it, blocking the phase after it (which
// is no longer blocked by the one before). An edge that would close a
// dependency cycle is not added. Without linkPrevious dependencies are not
// changed. Moving a phase to where it is changes nothing.
//
// Errors: those of MovePhase.
func MovePhaseLinked(s *Spec, phaseID string, position int, linkPrevious bool) (res PhaseMove, err error) {
	defer s.mutate(&err)()
	res.LinkPrevious = linkPrevious
	oldPrev, oldNext, oldAt := phaseNeighbours(s, phaseID)
	res.MovedPhase, err = MovePhaseView(s, phaseID, position)
	if err != nil || !linkPrevious {
		return res, err
	}
	newPrev, newNext, newAt := phaseNeighbours(s, phaseID)
	if newAt == oldAt {
		return res, nil
	}
	l := &linkLedger{s: s, net: map[Link]int{}}
	l.leaveChain(phaseID, oldPrev, oldNext)
	l.joinChain(phaseID, newPrev, newNext)
	res.Linked, res.Unlinked = l.report()
	RecomputeAncestors(s, RootID)
	s.touch()
	return res, nil
}

// phaseNeighbours are the phases before and after phase id among the
// root's children ("" at either end) and its index there (-1 when absent;
// the last place when it is listed twice).
func phaseNeighbours(s *Spec, id string) (prev, next string, at int) {
	root := s.Root()
	if root == nil {
		return "", "", -1
	}
	at = lastIndexOf(root.Children.Slice(), id)
	if at < 0 {
		return "", "", -1
	}
	return nearestPhase(s, root.Children, at-1, -1), nearestPhase(s, root.Children, at+1, +1), at
}

// lastIndexOf is the index of the last s in list, or -1.
func lastIndexOf(list []string, s string) int {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == s {
			return i
		}
	}
	return -1
}

// linkLedger edits blocked_by edges and keeps their net change, so an
// edge removed and added again is reported as neither.
type linkLedger struct {
	s   *Spec
	net map[Link]int
	ord []Link
}

func (l *linkLedger) blockedBy(waiter, prereq string) bool {
	n := l.s.Node(waiter)
	return n != nil && containsString(n.Dependencies.BlockedBy, prereq)
}

// chained reports whether waiter and prereq are both set and waiter is
// blocked by prereq.
func (l *linkLedger) chained(waiter, prereq string) bool {
	return waiter != "" && prereq != "" && l.blockedBy(waiter, prereq)
}

// leaveChain takes phase id out of the chain between its neighbours prev
// and next (either "" when absent): the edges that chained them through id
// are removed and, when both were there, next is chained to prev.
func (l *linkLedger) leaveChain(id, prev, next string) {
	chainedPrev, chainedNext := l.chained(id, prev), l.chained(next, id)
	if chainedPrev {
		l.unlink(id, prev)
	}
	if chainedNext {
		l.unlink(next, id)
	}
	if chainedPrev && chainedNext {
		l.link(next, prev)
	}
}

// joinChain puts phase id into the chain between its new neighbours prev
// and next (either "" when absent): id is blocked by prev, next (no longer
// blocked by prev) by id.
func (l *linkLedger) joinChain(id, prev, next string) {
	if prev != "" {
		if l.chained(next, prev) {
			l.unlink(next, prev)
		}
		l.link(id, prev)
	}
	if next != "" {
		l.link(next, id)
	}
}

func (l *linkLedger) note(k Link, d int) {
	if _, seen := l.net[k]; !seen {
		l.ord = append(l.ord, k)
	}
	l.net[k] += d
}

func (l *linkLedger) unlink(waiter, prereq string) {
	unlinkBlocked(l.s, waiter, prereq)
	l.note(Link{Blocker: prereq, Blocked: waiter}, -1)
}

// link adds waiter blocked_by prereq unless it is there or would close a
// cycle.
func (l *linkLedger) link(waiter, prereq string) {
	if l.blockedBy(waiter, prereq) || wouldCycle(l.s, waiter, prereq) != nil {
		return
	}
	linkBlocked(l.s, waiter, prereq)
	l.note(Link{Blocker: prereq, Blocked: waiter}, +1)
}

func (l *linkLedger) report() (linked, unlinked []Link) {
	for _, k := range l.ord {
		switch {
		case l.net[k] > 0:
			linked = append(linked, k)
		case l.net[k] < 0:
			unlinked = append(unlinked, k)
		}
	}
	return linked, unlinked
}
