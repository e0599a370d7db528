package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// Listings: list, query, hierarchy, list-blocked (paged in execution order,
// depth-first over children) and progress. The rows and pages are the domain's
// (specs/tasklists.go); pagedTasks is the one pager over them.

// Answers of the listings.
type (
	TaskQueryAnswer     = specs.QueryPage
	TaskBlockedAnswer   = specs.BlockedPage
	TaskHierarchyAnswer = specs.HierarchyPage
	TaskProgressAnswer  = specs.NodeProgress
)

// TaskListAnswer is task list's answer: one page of tasks and, when the
// spec has no phase yet, the call that adds its first one.
type TaskListAnswer struct {
	specs.TaskPage
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

// taskListing is one paged task listing: which nodes (listing), how each is
// shown (item) and the answer around the page (wrap).
type taskListing[I, A any] struct {
	action  string
	restart map[string]any
	filters []string
	key     string // the answer's list field
	listing func(sp *specs.Spec) (specs.Listing, error)
	item    func(sp *specs.Spec, n *specs.Node, depth int) I
	wrap    func(sp *specs.Spec, items []I) A
}

// pagedTasks answers one page of l over spec specID: OpenPage binds the
// cursor and limit, specs.Listing walks the page, the next cursor resumes
// after its last node. Over the token budget the page ends earlier
// (ListAnswer): the last nodes go and the cursor resumes after the last
// node kept.
func pagedTasks[I, A any](ctx context.Context, d *Deps, r *mcptool.Request, specID string, l taskListing[I, A]) mcptool.Result {
	p, err := mcptool.OpenPage(r, "task", l.action, specID, core.PageTasks, l.restart, l.filters...)
	if err != nil {
		return mcptool.Fail(err)
	}
	var items []I
	var page specs.NodePage
	ans, err := readAnswer(ctx, d, specID, func(sp *specs.Spec, _ specs.JournalReader) (A, error) {
		var zero A
		q, err := l.listing(sp)
		if err != nil {
			return zero, err
		}
		q.After, q.Limit = p.After, p.Limit
		var ok bool
		if page, ok = q.Page(sp); !ok {
			return zero, taskStaleCursor(p)
		}
		items = make([]I, len(page.Nodes))
		for i, n := range page.Nodes {
			items[i] = l.item(sp, n, page.Depths[i])
		}
		return l.wrap(sp, items), nil
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	res := mcptool.OK(ans, p.Meta(p.Cursor(page.Last(), page.More)))
	res.Degrade = mcptool.DegradeFunc(func(f mcptool.Fit) (any, []core.MetaOption, bool, error) {
		la := &mcptool.ListAnswer[I]{Data: mcptool.StructMap(ans), Key: l.key, Items: items, CountKey: "count", PageSize: p.Limit,
			ID:   func(i int) string { return "node:" + page.Nodes[i].ID },
			Next: func(kept int) string { return p.Cursor(page.Nodes[kept-1].ID, true) },
			Continue: func(c string) (string, map[string]any) {
				tool, args := p.Restart()
				for k, v := range r.Args {
					args[k] = v
				}
				args["cursor"] = c
				return tool, args
			}}
		return la.Degrade(f)
	})
	return res
}

func listItemAt(_ *specs.Spec, n *specs.Node, _ int) specs.TaskListItem { return specs.ListItemOf(n) }

// taskList pages every task, subtask, verify and research node in
// execution order, filtered as foundry's list is by status_filter and
// include_completed (specs.ListFilters).
func (d *Deps) taskList(ctx context.Context, r *mcptool.Request, a taskListArgs) mcptool.Result {
	f := specs.ListFilters{Status: a.StatusFilter, ExcludeComplete: a.IncludeCompleted != nil && !*a.IncludeCompleted}
	restart := taskListArgs{specArgs: a.specArgs, StatusFilter: f.Status}
	if f.ExcludeComplete {
		restart.IncludeCompleted = new(bool)
	}
	return pagedTasks(ctx, d, r, a.SpecID, taskListing[specs.TaskListItem, TaskListAnswer]{action: "list", key: "tasks",
		restart: toTaskList.Args(restart), filters: []string{f.Status, strconv.FormatBool(f.ExcludeComplete)},
		listing: func(*specs.Spec) (specs.Listing, error) { return f.Listing(), nil },
		item:    listItemAt,
		wrap: func(sp *specs.Spec, items []specs.TaskListItem) TaskListAnswer {
			a := TaskListAnswer{TaskPage: specs.PageOf(sp, items)}
			if root := sp.Node(specs.RootID); len(items) == 0 && root != nil && root.Children.Len() == 0 {
				a.NextCalls = []core.NextCall{callFirstPhase.on(sp.Header.SpecID, "")}
			}
			return a
		}})
}

// taskQuery pages task nodes filtered by status, node_type and parent (its
// direct children, see specs.QueryListing).
func (d *Deps) taskQuery(ctx context.Context, r *mcptool.Request, a taskQueryArgs) mcptool.Result {
	specID := a.SpecID
	f := specs.QueryFilters{Status: a.Status, Parent: a.Parent, NodeType: a.NodeType}
	return pagedTasks(ctx, d, r, a.SpecID, taskListing[specs.TaskListItem, TaskQueryAnswer]{action: "query", key: "tasks",
		restart: map[string]any{"action": "query", "spec_id": specID, "status": taskNullable(f.Status), "parent": taskNullable(f.Parent), "node_type": taskNullable(f.NodeType)},
		filters: []string{f.Status, f.Parent, f.NodeType},
		listing: func(sp *specs.Spec) (specs.Listing, error) {
			l, ok := f.Listing(sp)
			if !ok {
				return l, specs.NodeNotFound(sp, "parent", f.Parent)
			}
			return l, nil
		},
		item: listItemAt,
		wrap: func(sp *specs.Spec, items []specs.TaskListItem) TaskQueryAnswer {
			return TaskQueryAnswer{TaskPage: specs.PageOf(sp, items), Filters: f}
		}})
}

// taskHierarchy pages the tree (root excluded) down to max_depth, by real
// tree depth, in execution order; max_depth 0 is the whole tree (foundry's
// meaning).
func (d *Deps) taskHierarchy(ctx context.Context, r *mcptool.Request, a taskHierarchyArgs) mcptool.Result {
	maxDepth := intOr(a.MaxDepth, 2)
	withMeta := a.IncludeMetadata
	return pagedTasks(ctx, d, r, a.SpecID, taskListing[specs.HierarchyNode, TaskHierarchyAnswer]{action: "hierarchy", key: "nodes",
		restart: toTaskHierarchy.Args(taskHierarchyArgs{specArgs: a.specArgs, MaxDepth: &maxDepth}),
		filters: []string{strconv.Itoa(maxDepth), strconv.FormatBool(withMeta)},
		listing: func(*specs.Spec) (specs.Listing, error) { return specs.Listing{MaxDepth: maxDepth}, nil },
		item: func(_ *specs.Spec, n *specs.Node, depth int) specs.HierarchyNode {
			return specs.HierarchyNodeOf(n, depth, withMeta)
		},
		wrap: func(sp *specs.Spec, nodes []specs.HierarchyNode) TaskHierarchyAnswer {
			return specs.HierarchyPageOf(sp, nodes, maxDepth)
		}})
}

// taskListBlocked pages the blocked nodes (specs.BlockedListing) with their
// blocker and their unfinished prerequisites.
func (d *Deps) taskListBlocked(ctx context.Context, r *mcptool.Request, a taskListBlockedArgs) mcptool.Result {
	return pagedTasks(ctx, d, r, a.SpecID, taskListing[specs.BlockedItem, TaskBlockedAnswer]{action: "list-blocked", key: "tasks",
		restart: toTaskListBlocked.Args(taskListBlockedArgs{specArgs: a.specArgs}),
		listing: func(*specs.Spec) (specs.Listing, error) { return specs.BlockedListing(), nil },
		item:    func(sp *specs.Spec, n *specs.Node, _ int) specs.BlockedItem { return specs.BlockedItemOf(sp, n) },
		wrap:    specs.PageOf[specs.BlockedItem]})
}

// taskProgress answers the counts of node_id (default the whole spec) and,
// unless include_phases is false, of every phase (specs.ProgressOfNode).
func (d *Deps) taskProgress(ctx context.Context, _ *mcptool.Request, a taskProgressArgs) mcptool.Result {
	id := orElse(a.NodeID, specs.RootID)
	withPhases := a.IncludePhases == nil || *a.IncludePhases
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (TaskProgressAnswer, error) {
		n := sp.Node(id)
		if n == nil {
			return TaskProgressAnswer{}, specs.NodeNotFound(sp, "node_id", id)
		}
		return specs.ProgressOfNode(sp, n, withPhases), nil
	})
}

// taskNullable is s as an argument value: nil (JSON null) when empty.
func taskNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// intOr is *p, or def when p is nil (not given).
func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
