package specs

import (
	"iter"
	"strings"
)

// ExecutionOrder yields id's subtree depth-first in children order
// (pre-order, id first): the execution order used by task lists (Walk over
// s).
func ExecutionOrder(s *Spec, id string) iter.Seq[*Node] { return Walk(s.Node, id) }

// BlockedTask is a task that cannot start, with what it waits on.
type BlockedTask struct {
	TaskID    string   `json:"task_id"`
	WaitingOn []string `json:"waiting_on"`
	Reason    string   `json:"reason,omitempty"` // the blocker description of a blocked-status task
}

// FailedTask is a task whose last attempt failed (complete-batch failure).
// It is not actionable until someone decides to retry it: reopening it
// (back to pending, retry_count kept) makes next and prepare-batch offer it
// again.
type FailedTask struct {
	TaskID     string `json:"task_id"`
	RetryCount int    `json:"retry_count"`
	Reason     string `json:"failure_reason,omitempty"`
}

// NextResult is the answer of NextTask. When Found, Node is the task (a
// shared node: do not mutate). Otherwise SpecComplete, Blocked, Failed,
// InProgress and Hint describe why nothing is actionable.
type NextResult struct {
	Found        bool          `json:"found"`
	TaskID       string        `json:"task_id,omitempty"`
	Node         *Node         `json:"-"`
	PhaseID      string        `json:"phase_id,omitempty"`
	SpecComplete bool          `json:"spec_complete"`
	Blocked      []BlockedTask `json:"blocked"`
	Failed       []FailedTask  `json:"failed"`
	InProgress   []string      `json:"in_progress"`
	// Unplaced are the pending, unblocked work leaves directly under
	// spec-root, outside every phase (a hand-written spec; see
	// [UnplacedTasks]): next never offers them, so the hint and the next
	// step name the first one and the phase to move it into.
	Unplaced []string `json:"-"`
	// IntoPhase is the phase to move Unplaced[0] into: the first phase next
	// walks ("" when there is none, or Unplaced[0] is a subtask, which task
	// move may not put under a phase: then spec fix places it).
	IntoPhase string `json:"-"`
	Hint      string `json:"hint,omitempty"`
}

// Actionable yields, in next-task order, every work leaf an agent may
// start now, with the id of its phase. It is the one definition of
// "actionable" that task next (the first one) and prepare-batch (the first
// many) share:
//
//   - phases are taken in root order, in-progress ones first, then pending
//     (or failed) ones; completed and blocked phases and phases with
//     unfinished prerequisites are skipped;
//   - within a phase, pending task/subtask/verify leaves in execution order
//     whose own prerequisites and those of their ancestors below the phase
//     are finished;
//   - a verify leaf only once no other (non-verify) work leaf of its phase
//     is unfinished;
//   - failed leaves are not actionable: a failure needs a decision (task
//     reopen to retry it, or a plan change), so an agent loop never
//     re-runs a failing task on its own. NextTask lists them with the
//     retry call.
func Actionable(s *Spec) iter.Seq2[string, *Node] {
	return func(yield func(string, *Node) bool) { eachActionable(s, yield) }
}

// eachActionable calls yield for each task of [Actionable] until it
// returns false. NextTask calls it directly, so that finding the first
// task costs no iterator closures.
func eachActionable(s *Spec, yield func(phaseID string, n *Node) bool) {
	root := s.Root()
	if root == nil {
		return
	}
	var inProgress, pending []*Node
	for _, cid := range root.Children.All() {
		p := s.Node(cid)
		if p == nil {
			continue
		}
		switch p.Status {
		case StatusInProgress:
			inProgress = append(inProgress, p)
		case StatusPending, StatusFailed:
			pending = append(pending, p)
		}
	}
	for _, p := range append(inProgress, pending...) {
		if len(Blockers(s, p.ID)) > 0 {
			continue
		}
		if !eachActionableInPhase(s, p, func(n *Node) bool { return yield(p.ID, n) }) {
			return
		}
	}
}

// NextTask finds the next task to work on: the first of [Actionable]. When
// nothing qualifies, Found is false and the result lists the blocked tasks
// (pending tasks with unfinished prerequisites, and blocked-status tasks),
// the failed tasks (with retry_count and failure_reason), the tasks in progress,
// SpecComplete (every counted node completed, and at least one exists) and
// a recovery hint. Finding nothing is not an error.
func NextTask(s *Spec) NextResult {
	res := NextResult{Blocked: []BlockedTask{}, Failed: []FailedTask{}, InProgress: []string{}}
	root := s.Root()
	if root == nil {
		res.Hint = "the spec has no root node: run spec fix"
		return res
	}
	eachActionable(s, func(phaseID string, n *Node) bool {
		res.Found, res.TaskID, res.Node, res.PhaseID = true, n.ID, n, phaseID
		return false
	})
	if res.Found {
		return res
	}
	// Nothing actionable: explain.
	collectStuck(s, &res)
	res.SpecComplete = root.TotalTasks > 0 && root.CompletedTasks == root.TotalTasks
	if res.Unplaced = UnplacedTasks(s); len(res.Unplaced) > 0 && allowedUnder(&Node{Type: TypePhase}, s.Node(res.Unplaced[0]).Type) {
		res.IntoPhase = firstWalkedPhase(s) // a subtask task move may not put into a phase: spec fix places it
	}
	res.Hint = stuckHint(root, res)
	return res
}

// UnplacedTasks are the pending work leaves directly under spec-root (a
// placement validation warns about, INVALID_PARENT_TYPE) whose
// prerequisites are finished, in root order. Start accepts them and task
// info says they can start, but [Actionable] walks phases only, so next
// names them instead of offering them: moving one into a phase (task move,
// or spec fix, which never leaves a work node under the root) makes it
// actionable.
func UnplacedTasks(s *Spec) []string {
	root := s.Root()
	if root == nil {
		return nil
	}
	var out []string
	for _, cid := range root.Children.All() {
		n := s.Node(cid)
		if n == nil || n.Parent != RootID || !n.IsWorkLeaf() || n.Status != StatusPending || len(Blockers(s, cid)) > 0 {
			continue
		}
		out = append(out, cid)
	}
	return out
}

// firstWalkedPhase is the first phase next walks (in progress first, then
// pending or failed; not blocked by an unfinished prerequisite), or "".
func firstWalkedPhase(s *Spec) string {
	first := ""
	for _, cid := range s.Root().Children.All() {
		p := s.Node(cid)
		if p == nil || p.Type != TypePhase || len(Blockers(s, cid)) > 0 {
			continue
		}
		switch p.Status {
		case StatusInProgress:
			return cid
		case StatusPending, StatusFailed:
			if first == "" {
				first = cid
			}
		}
	}
	return first
}

// collectStuck lists in res, in execution order, the work leaves that are
// in progress, blocked (blocked status, or pending with unfinished
// prerequisites) or failed.
func collectStuck(s *Spec, res *NextResult) {
	for n := range ExecutionOrder(s, RootID) {
		if !n.IsWorkLeaf() {
			continue
		}
		switch n.Status {
		case StatusInProgress:
			res.InProgress = append(res.InProgress, n.ID)
		case StatusBlocked:
			waiting := Blockers(s, n.ID)
			if waiting == nil {
				waiting = []string{}
			}
			res.Blocked = append(res.Blocked, BlockedTask{TaskID: n.ID, WaitingOn: waiting, Reason: n.MetaString("blocker_description")})
		case StatusFailed:
			retries, _ := n.MetaInt("retry_count")
			res.Failed = append(res.Failed, FailedTask{TaskID: n.ID, RetryCount: retries, Reason: n.MetaString("failure_reason")})
		case StatusPending:
			if b := Blockers(s, n.ID); len(b) > 0 {
				res.Blocked = append(res.Blocked, BlockedTask{TaskID: n.ID, WaitingOn: b})
			}
		}
	}
}

// stuckHint is NextTask's hint when nothing is actionable, from the most
// to the least decisive reason.
func stuckHint(root *Node, res NextResult) string {
	switch {
	case res.SpecComplete:
		return "every task is completed: move the spec with lifecycle complete"
	case len(res.Unplaced) > 0 && res.IntoPhase != "":
		return "task " + res.Unplaced[0] + " can start but sits under spec-root, outside every phase, where next does not look: " +
			"move it into phase " + res.IntoPhase + " with task move (next_call), then next offers it"
	case len(res.Unplaced) > 0:
		return "task " + res.Unplaced[0] + " can start but sits under spec-root, and no open phase may take it with task move: " +
			"spec fix (next_call) moves it into a phase, then next offers it"
	case root.TotalTasks == 0:
		return "the spec has no tasks yet: add a phase with authoring phase-add"
	case len(res.Failed) > 0:
		ids := make([]string, len(res.Failed))
		for i, f := range res.Failed {
			ids[i] = f.TaskID
		}
		return "failed tasks wait for a decision: " + strings.Join(ids, ", ") +
			"; retry one with task reopen (back to pending, then task next offers it)"
	case len(res.InProgress) > 0:
		return "finish the tasks in progress, or run task check-deps on a blocked task"
	case len(res.Blocked) > 0:
		return "every remaining task is blocked: run task check-deps on one, or task unblock"
	}
	return "no pending task is actionable: run task check-deps or task list-blocked"
}

// eachActionableInPhase calls yield for each actionable leaf of a phase
// (see [Actionable]) in execution order; it returns false when yield did.
func eachActionableInPhase(s *Spec, phase *Node, yield func(*Node) bool) bool {
	var verify verifyGate
	phaseBlockers := map[string]bool{}
	for n := range openLeaves(s, phase) {
		if n.Status != StatusPending || (n.Type == TypeVerify && verify.waits(s, phase)) {
			continue
		}
		if unblockedBelow(s, n, phase.ID, phaseBlockers) && !yield(n) {
			return false
		}
	}
	return true
}

// verifyGate remembers whether the verify leaves of a phase wait: another
// (non-verify) work leaf of it is unfinished. It looks once, when first
// asked.
type verifyGate struct{ asked, shut bool }

func (g *verifyGate) waits(s *Spec, phase *Node) bool {
	if !g.asked {
		g.asked, g.shut = true, hasOpenNonVerify(s, phase)
	}
	return g.shut
}

// hasOpenNonVerify reports whether phase has an unfinished work leaf that
// is not a verify leaf (its verify leaves wait for those).
func hasOpenNonVerify(s *Spec, phase *Node) bool {
	for m := range openLeaves(s, phase) {
		if m.Type != TypeVerify {
			return true
		}
	}
	return false
}

// openLeaves yields the unfinished work leaves (task/subtask/verify leaves
// not completed) below top, in execution order. It never descends into a
// finished subtree (total_tasks == completed_tasks: no unfinished work
// leaf), and starts each node's children at its rollup summary's first_open
// hint (see rollup.go), so the finished prefix of a half-done phase is not
// read. A hint that does not point at an open child is ignored (full scan).
func openLeaves(s *Spec, top *Node) iter.Seq[*Node] {
	return func(yield func(*Node) bool) {
		type frame struct {
			n    *Node
			next int
		}
		seen := map[string]bool{top.ID: true}
		stack := []frame{{top, childStart(s, top)}}
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next >= f.n.Children.Len() {
				stack = stack[:len(stack)-1]
				continue
			}
			cid := f.n.Children.At(f.next)
			f.next++
			if seen[cid] {
				continue
			}
			seen[cid] = true
			c := s.Node(cid)
			if !openNode(c) {
				continue
			}
			if c.IsLeaf() {
				if c.IsWorkLeaf() && !yield(c) {
					return
				}
				continue
			}
			stack = append(stack, frame{c, childStart(s, c)})
		}
	}
}

// childStart is where a scan of n's children for unfinished work may start:
// the first_open hint of n's rollup summary when the child there is open
// (or, at the end, when n itself is finished), else 0.
func childStart(s *Spec, n *Node) int {
	_, fo, ok := rollupCounters(n)
	switch {
	case !ok || fo > n.Children.Len():
		return 0
	case fo == n.Children.Len():
		if openNode(n) {
			return 0
		}
		return fo
	case openNode(s.Node(n.Children.At(fo))):
		return fo
	}
	return 0
}

// unblockedBelow checks the prerequisites of n and of its ancestors strictly
// below the phase (the phase's own were checked by the caller). memo maps an
// ancestor id to whether it or one of its ancestors below the phase has an
// unfinished prerequisite.
func unblockedBelow(s *Spec, n *Node, phaseID string, memo map[string]bool) bool {
	return !hasOpenBlocker(s, n) && !chainBlocked(s, n.Parent, phaseID, memo, 0)
}

// hasOpenBlocker reports whether one of n's blocked_by targets blocks now.
func hasOpenBlocker(s *Spec, n *Node) bool {
	for _, b := range n.Dependencies.BlockedBy {
		if blocksNow(s.Node(b)) {
			return true
		}
	}
	return false
}

// chainBlocked reports whether id or one of its ancestors strictly below
// the phase has a prerequisite that blocks now, memoized per ancestor.
func chainBlocked(s *Spec, id, phaseID string, memo map[string]bool, depth int) bool {
	if id == "" || id == phaseID || depth > 10000 {
		return false
	}
	if v, ok := memo[id]; ok {
		return v
	}
	a := s.Node(id)
	if a == nil {
		return false
	}
	blocked := hasOpenBlocker(s, a) || chainBlocked(s, a.Parent, phaseID, memo, depth+1)
	memo[id] = blocked
	return blocked
}
