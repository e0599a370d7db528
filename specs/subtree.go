package specs

import "iter"

// Walk yields id's subtree depth-first in children order (pre-order, id
// first), reading each node through node. Missing nodes (node returns nil)
// are skipped with their descendants, and a node is yielded at most once,
// so a malformed hierarchy (a child listed twice, a cycle) still ends.
//
// It is the one subtree walk of specd: the execution order of task lists,
// the ids a removal takes, and the content of a subtree:<id> archive item
// (Subtree) all come from it.
func Walk(node func(id string) *Node, id string) iter.Seq[*Node] {
	return func(yield func(*Node) bool) {
		seen := map[string]bool{}
		stack := []string{id}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			n := node(x)
			if n == nil {
				continue
			}
			if !yield(n) {
				return
			}
			for i := n.Children.Len() - 1; i >= 0; i-- {
				stack = append(stack, n.Children.At(i))
			}
		}
	}
}

// Subtree returns id and its descendants as {id: node}, read through node
// (Walk). It is the content of the archive item subtree:<id>: the budgeted
// spec answer, research archive-get and archive-get's parts all build it
// here, so the hash of one item is the same wherever it is computed. Empty
// (not nil) when id is missing.
func Subtree(node func(id string) *Node, id string) map[string]*Node {
	out := map[string]*Node{}
	for n := range Walk(node, id) {
		out[n.ID] = n
	}
	return out
}

// NodeIn reads nodes from a hierarchy map (a Document's), for Walk and
// Subtree.
func NodeIn(h map[string]*Node) func(id string) *Node {
	return func(id string) *Node { return h[id] }
}
