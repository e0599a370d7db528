package specs

import "github.com/specd/specd/core/errcode"

// UnjournaledPage is one page of the completed tasks still waiting for a
// journal entry, in execution order.
type UnjournaledPage struct {
	Tasks []UnjournaledTask
	Nodes []*Node // the tasks' nodes, same order
	More  bool    // more follow the last one
	Total int     // every task still waiting, on all pages
}

// UnjournaledAfter pages UnjournaledTasks: the waiting tasks after node
// after in execution order ("" from the start), at most limit (0: all). The
// position is the node's place in the execution order, so a page stays right
// when tasks before it were journaled since the previous page. Errors:
// INVALID_CURSOR when after is no longer a node of the spec.
func UnjournaledAfter(s *Spec, after string, limit int) (UnjournaledPage, error) {
	if after != "" && s.Node(after) == nil {
		return UnjournaledPage{}, newErr(errcode.InvalidCursor, "cursor", "The cursor continues after %s, which is no longer in the spec.", after)
	}
	p := UnjournaledPage{Tasks: []UnjournaledTask{}, Nodes: []*Node{}}
	passed := after == ""
	for n := range ExecutionOrder(s, RootID) {
		if !waitsForJournal(n) {
			passed = passed || n.ID == after
			continue
		}
		p.Total++
		if passed {
			p.add(n, limit)
		} else {
			passed = n.ID == after
		}
	}
	return p, nil
}

// waitsForJournal reports whether n is completed and still waits for a
// journal entry.
func waitsForJournal(n *Node) bool { return n.Status == StatusCompleted && n.NeedsJournaling() }

// add lists waiting task n on the page, or marks that more follow when the
// page already holds limit tasks (limit 0: no limit).
func (p *UnjournaledPage) add(n *Node, limit int) {
	if limit > 0 && len(p.Tasks) == limit {
		p.More = true
		return
	}
	p.Nodes = append(p.Nodes, n)
	p.Tasks = append(p.Tasks, UnjournaledTask{TaskID: n.ID, Title: n.Title, Type: n.Type, CompletedAt: n.MetaString("completed_at")})
}
