package tools

import (
	"fmt"
	"iter"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/specs"
)

// taskWalk yields the nodes of scope's subtree in execution order (depth-first,
// pre-order, children order; contract §5), scope itself excluded, each with
// its real tree depth (the root is 0, phases 1, …). With after != "" it
// resumes strictly after that node, at a cost proportional to the node's
// depth and the ids of its later siblings, never to the spec's size: that is
// what makes a cursor page O(page). maxDepth > 0 prunes nodes deeper than
// maxDepth. ok is false when after is not a node of scope's subtree (it was
// removed or moved away since the cursor was issued).
//
// A node is decoded only when it is yielded; missing children are skipped
// and no node is yielded twice, so a corrupt children list cannot loop.
func taskWalk(s *specs.Spec, scope, after string, maxDepth int) (seq iter.Seq2[*specs.Node, int], ok bool) {
	type frame struct {
		id    string
		depth int
	}
	scopeDepth, found := taskDepth(s, scope)
	if !found {
		return func(func(*specs.Node, int) bool) {}, false
	}
	var stack []frame
	pushAll := func(ids []string, depth int) {
		if maxDepth > 0 && depth > maxDepth {
			return
		}
		for i := len(ids) - 1; i >= 0; i-- {
			stack = append(stack, frame{ids[i], depth})
		}
	}
	if after == "" {
		if n := s.Node(scope); n != nil {
			pushAll(n.Children, scopeDepth+1)
		}
	} else {
		n := s.Node(after)
		if n == nil || after == scope {
			return func(func(*specs.Node, int) bool) {}, false
		}
		// The continuation after n: n's children, then n's later siblings,
		// then its parent's later siblings, … up to scope. Segments are
		// pushed last-first so that the stack pops them in order.
		type segment struct {
			ids   []string
			depth int
		}
		var segs []segment
		d, _ := taskDepth(s, after)
		segs = append(segs, segment{n.Children, d + 1})
		x := n
		for x.ID != scope {
			p := s.Node(x.Parent)
			if p == nil {
				return func(func(*specs.Node, int) bool) {}, false // not under scope
			}
			i := taskIndex(p.Children, x.ID)
			if i < 0 {
				return func(func(*specs.Node, int) bool) {}, false
			}
			segs = append(segs, segment{p.Children[i+1:], d})
			x, d = p, d-1
		}
		for i := len(segs) - 1; i >= 0; i-- {
			pushAll(segs[i].ids, segs[i].depth)
		}
	}
	return func(yield func(*specs.Node, int) bool) {
		seen := map[string]bool{}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[f.id] {
				continue
			}
			seen[f.id] = true
			n := s.Node(f.id)
			if n == nil {
				continue
			}
			if !yield(n, f.depth) {
				return
			}
			pushAll(n.Children, f.depth+1)
		}
	}, true
}

// taskDepth returns the real tree depth of id (the root is 0) and whether id
// exists and reaches the root.
func taskDepth(s *specs.Spec, id string) (int, bool) {
	d := 0
	for x := id; ; d++ {
		n := s.Node(x)
		if n == nil || d > 10_000 {
			return 0, false
		}
		if n.Parent == "" {
			return d, x == specs.RootID
		}
		x = n.Parent
	}
}

func taskIndex(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// isTaskNode reports whether n is what task lists show: a task, subtask,
// verify or research node.
func isTaskNode(n *specs.Node) bool {
	switch n.Type {
	case specs.TypeTask, specs.TypeSubtask, specs.TypeVerify, specs.TypeResearch:
		return true
	}
	return false
}

// taskPage collects up to limit nodes of seq that pass keep, rendered by
// render, and returns them with the cursor of the next page ("" when no
// further node passes keep). Cursor keys are node ids.
func taskPage(seq iter.Seq2[*specs.Node, int], limit int, fp string, keep func(*specs.Node, int) bool, render func(*specs.Node, int) map[string]any) ([]map[string]any, string) {
	out := []map[string]any{}
	last, more := "", false
	for n, d := range seq {
		if keep != nil && !keep(n, d) {
			continue
		}
		if len(out) == limit {
			more = true
			break
		}
		out = append(out, render(n, d))
		last = n.ID
	}
	if !more {
		return out, ""
	}
	return out, core.EncodeCursor(last, fp)
}

// taskStaleCursor is the INVALID_CURSOR answer for a cursor whose node no longer
// sits where the listing can resume from it.
func taskStaleCursor(restart map[string]any) *core.Error {
	return core.NewError(errcode.InvalidCursor, "The cursor's position no longer exists (the node was removed or moved); restart the listing.",
		map[string]any{"field": "cursor", "constraint": "a cursor whose last node still exists in the listing"}).
		WithRecovery("task", restart, nil)
}

// taskNodeNotFound is TASK_NOT_FOUND (PHASE_NOT_FOUND for phase-like ids) for
// an id given in field, with the closest existing ids and a recovery call
// that lists the tree. It reads every id: error paths only.
func taskNodeNotFound(s *specs.Spec, specID, field, id string) *core.Error {
	code := errcode.TaskNotFound
	what := "node"
	if strings.HasPrefix(id, "phase-") {
		code, what = errcode.PhaseNotFound, "phase"
	}
	ids := s.IDs()
	return core.NewError(code, fmt.Sprintf("No %s %q in spec %s.", what, id, specID),
		map[string]any{"field": field, "received": id}).
		WithRecovery("task", map[string]any{"action": "hierarchy", "spec_id": specID}, fuzzy.Rank(id, ids, 5))
}

// taskBrief is the short form of a node in task answers.
func taskBrief(n *specs.Node) map[string]any {
	return map[string]any{"task_id": n.ID, "title": n.Title, "type": n.Type, "status": n.Status, "parent": taskNullable(n.Parent)}
}

// taskFull is the whole node with its id (the document's node object plus
// task_id).
func taskFull(n *specs.Node) map[string]any {
	md := n.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return map[string]any{
		"task_id": n.ID, "type": n.Type, "title": n.Title, "status": n.Status, "parent": taskNullable(n.Parent),
		"children": taskStrings(n.Children), "total_tasks": n.TotalTasks, "completed_tasks": n.CompletedTasks,
		"metadata": md, "dependencies": taskDeps(n),
	}
}

func taskDeps(n *specs.Node) map[string]any {
	return map[string]any{"blocks": taskStrings(n.Dependencies.Blocks), "blocked_by": taskStrings(n.Dependencies.BlockedBy), "depends": taskStrings(n.Dependencies.Depends)}
}

func taskStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func taskNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// taskPercent is floor(completed/total·100), 0 for an empty node.
func taskPercent(completed, total int) int {
	if total <= 0 {
		return 0
	}
	return completed * 100 / total
}

// taskPhase returns the phase n sits in (n itself for a phase), or nil.
func taskPhase(s *specs.Spec, n *specs.Node) *specs.Node {
	for guard := 0; n != nil && guard < 10_000; guard++ {
		if n.Type == specs.TypePhase {
			return n
		}
		n = s.Node(n.Parent)
	}
	return nil
}

// taskPhaseBrief is a phase with its progress.
func taskPhaseBrief(p *specs.Node) map[string]any {
	return map[string]any{"phase_id": p.ID, "title": p.Title, "status": p.Status, "completed_tasks": p.CompletedTasks,
		"total_tasks": p.TotalTasks, "percentage": taskPercent(p.CompletedTasks, p.TotalTasks)}
}
