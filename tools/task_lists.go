package tools

import (
	"context"
	"maps"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// Listings: list, query, hierarchy, list-blocked (paged in execution order,
// contract §5) and progress.

// pagedRead runs a paged listing over the call's spec. scope is the subtree
// walked, maxDepth prunes it (0: no limit); the cursor resumes after the
// last node of the previous page (see taskWalk), bound by fp to the same
// listing and filters. Items go under key; meta.pagination carries the next
// cursor.
func (d *Deps) pagedRead(ctx context.Context, r *Request, fp, key string, restart map[string]any,
	scope func(sp *specs.Spec) (string, int, error), keep func(*specs.Node, int) bool, render func(*specs.Node, int) map[string]any,
	extra func(sp *specs.Spec, data map[string]any)) Result {
	after, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
	if cerr != nil {
		return Fail(cerr.WithRecovery("task", restart, nil))
	}
	limit := r.Args.IntOr("limit", core.PageTasks.Default)
	var next string
	var ids []string
	var items []map[string]any
	res := d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		root, maxDepth, err := scope(sp)
		if err != nil {
			return nil, nil, err
		}
		seq, ok := taskWalk(sp, root, after, maxDepth)
		if !ok {
			return nil, nil, taskStaleCursor(restart)
		}
		var cur string
		items, cur = taskPage(seq, limit, fp, keep, func(n *specs.Node, depth int) map[string]any {
			ids = append(ids, n.ID)
			return render(n, depth)
		})
		next = cur
		data := map[string]any{key: items, "count": len(items), "version": sp.Header.Version}
		if extra != nil {
			extra(sp, data)
		}
		return data, nil, nil
	})
	if res.Err == nil {
		res.Meta = append(res.Meta, core.WithPagination(next, limit, nil))
		// Over the token budget, the page ends earlier: the last nodes go
		// and the cursor resumes after the last node kept.
		if data, ok := res.Data.(map[string]any); ok {
			res.Degrade = &ListAnswer[map[string]any]{Data: data, Key: key, Items: items, CountKey: "count", PageSize: limit,
				ID:   func(i int) string { return "node:" + ids[i] },
				Next: func(kept int) string { return core.EncodeCursor(ids[kept-1], fp) },
				Continue: func(c string) (string, map[string]any) {
					args := maps.Clone(restart)
					for k, v := range r.Args {
						args[k] = v
					}
					args["cursor"] = c
					return "task", args
				}}
		}
	}
	return res
}

func wholeSpec(*specs.Spec) (string, int, error) { return specs.RootID, 0, nil }

func listItem(n *specs.Node, _ int) map[string]any {
	return map[string]any{"task_id": n.ID, "title": n.Title, "type": n.Type, "status": n.Status, "parent": n.Parent,
		"file_path": taskNullable(n.FilePath())}
}

func keepTasks(n *specs.Node, _ int) bool { return isTaskNode(n) }

// taskList pages every task, subtask, verify and research node in
// execution order.
func (d *Deps) taskList(ctx context.Context, r *Request) Result {
	specID := r.Args.String("spec_id")
	return d.pagedRead(ctx, r, core.Fingerprint("task", "list", specID), "tasks",
		map[string]any{"action": "list", "spec_id": specID}, wholeSpec, keepTasks, listItem, nil)
}

// taskQuery pages task nodes filtered by status, node_type and parent (its
// direct children: the walk is limited to the parent's depth + 1).
func (d *Deps) taskQuery(ctx context.Context, r *Request) Result {
	a := r.Args
	specID, status, parent, nodeType := a.String("spec_id"), a.String("status"), a.String("parent"), a.String("node_type")
	scope := wholeSpec
	if parent != "" {
		scope = func(sp *specs.Spec) (string, int, error) {
			depth, ok := taskDepth(sp, parent)
			if !ok {
				return "", 0, taskNodeNotFound(sp, specID, "parent", parent)
			}
			return parent, depth + 1, nil
		}
	}
	keep := func(n *specs.Node, _ int) bool {
		if nodeType != "" {
			if string(n.Type) != nodeType {
				return false
			}
		} else if parent == "" && !isTaskNode(n) {
			return false
		}
		return status == "" || string(n.Status) == status
	}
	return d.pagedRead(ctx, r, core.Fingerprint("task", "query", specID, status, parent, nodeType), "tasks",
		map[string]any{"action": "query", "spec_id": specID, "status": taskNullable(status), "parent": taskNullable(parent), "node_type": taskNullable(nodeType)},
		scope, keep, listItem, func(_ *specs.Spec, data map[string]any) {
			data["filters"] = map[string]any{"status": status, "parent": parent, "node_type": nodeType}
		})
}

// taskHierarchy pages the tree (root excluded) down to max_depth, by real
// tree depth, in execution order. Children are summarised by child_count
// (their ids are the next nodes of the walk, each with its parent).
func (d *Deps) taskHierarchy(ctx context.Context, r *Request) Result {
	specID := r.Args.String("spec_id")
	maxDepth := r.Args.IntOr("max_depth", 2)
	withMeta := r.Args.Bool("include_metadata")
	render := func(n *specs.Node, depth int) map[string]any {
		m := map[string]any{"node_id": n.ID, "type": n.Type, "title": n.Title, "status": n.Status, "parent": n.Parent, "depth": depth,
			"child_count": len(n.Children), "total_tasks": n.TotalTasks, "completed_tasks": n.CompletedTasks}
		if withMeta {
			md := n.Metadata
			if md == nil {
				md = map[string]any{}
			}
			m["metadata"], m["dependencies"] = md, taskDeps(n)
		}
		return m
	}
	return d.pagedRead(ctx, r, core.Fingerprint("task", "hierarchy", specID, strconv.Itoa(maxDepth), strconv.FormatBool(withMeta)), "nodes",
		map[string]any{"action": "hierarchy", "spec_id": specID, "max_depth": maxDepth},
		func(*specs.Spec) (string, int, error) { return specs.RootID, maxDepth, nil }, nil, render,
		func(sp *specs.Spec, data map[string]any) {
			data["max_depth"] = maxDepth
			data["total_tasks"], data["completed_tasks"] = sp.Header.TotalTasks, sp.Header.CompletedTasks
		})
}

// taskListBlocked pages the nodes whose status is blocked, with their
// blocker and their unfinished prerequisites. It walks the whole spec (no
// status index): cost O(spec) per page.
func (d *Deps) taskListBlocked(ctx context.Context, r *Request) Result {
	specID := r.Args.String("spec_id")
	var sp *specs.Spec
	render := func(n *specs.Node, _ int) map[string]any {
		m := listItem(n, 0)
		m["blocker_type"], m["blocker_description"] = n.MetaString("blocker_type"), n.MetaString("blocker_description")
		m["blocker_ticket"], m["blocked_at"] = taskNullable(n.MetaString("blocker_ticket")), n.MetaString("blocked_at")
		m["waiting_on"] = taskStrings(specs.Blockers(sp, n.ID))
		return m
	}
	return d.pagedRead(ctx, r, core.Fingerprint("task", "list-blocked", specID), "tasks",
		map[string]any{"action": "list-blocked", "spec_id": specID},
		func(s *specs.Spec) (string, int, error) { sp = s; return specs.RootID, 0, nil },
		func(n *specs.Node, _ int) bool { return n.Status == specs.StatusBlocked && n.ID != specs.RootID },
		render, nil)
}

// taskProgress answers the counts of node_id (default the whole spec) and,
// unless include_phases is false, of every phase.
func (d *Deps) taskProgress(ctx context.Context, r *Request) Result {
	return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		id := r.Args.String("node_id")
		if id == "" {
			id = specs.RootID
		}
		n := sp.Node(id)
		if n == nil {
			return nil, nil, taskNodeNotFound(sp, r.Args.String("spec_id"), "node_id", id)
		}
		data := map[string]any{"node_id": id, "type": n.Type, "title": n.Title, "status": n.Status,
			"completed_tasks": n.CompletedTasks, "total_tasks": n.TotalTasks, "percentage": taskPercent(n.CompletedTasks, n.TotalTasks),
			"remaining_tasks": n.TotalTasks - n.CompletedTasks, "current_phase": taskNullable(sp.Header.CurrentPhase),
			"version": sp.Header.Version}
		if !r.Args.Has("include_phases") || r.Args.Bool("include_phases") {
			phases := []map[string]any{}
			if root := sp.Root(); root != nil {
				for _, pid := range root.Children {
					if p := sp.Node(pid); p != nil {
						phases = append(phases, taskPhaseBrief(p))
					}
				}
			}
			data["phases"] = phases
		}
		return data, nil, nil
	})
}
