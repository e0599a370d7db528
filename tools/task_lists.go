package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// Listings: list, query, hierarchy, list-blocked (paged in execution order,
// contract §5) and progress.

// TaskListItem is one task of list, query and prepare-batch.
type TaskListItem struct {
	TaskID   string         `json:"task_id"`
	Title    string         `json:"title"`
	Type     specs.NodeType `json:"type"`
	Status   specs.Status   `json:"status"`
	Parent   string         `json:"parent"`
	FilePath *string        `json:"file_path"`
}

func listItem(n *specs.Node) TaskListItem {
	return TaskListItem{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status, Parent: n.Parent, FilePath: nullable(n.FilePath())}
}

// TaskListAnswer is a page of task list.
type TaskListAnswer struct {
	SpecID  string         `json:"spec_id"`
	Tasks   []TaskListItem `json:"tasks"`
	Count   int            `json:"count"`
	Version int64          `json:"version"`
}

// TaskQueryFilters echoes task query's filters.
type TaskQueryFilters struct {
	Status   string `json:"status"`
	Parent   string `json:"parent"`
	NodeType string `json:"node_type"`
}

// TaskQueryAnswer is a page of task query.
type TaskQueryAnswer struct {
	TaskListAnswer
	Filters TaskQueryFilters `json:"filters"`
}

// BlockedTaskItem is one task of list-blocked: its blocker and the
// unfinished prerequisites it waits on.
type BlockedTaskItem struct {
	TaskListItem
	BlockerType        string   `json:"blocker_type"`
	BlockerDescription string   `json:"blocker_description"`
	BlockerTicket      *string  `json:"blocker_ticket"`
	BlockedAt          string   `json:"blocked_at"`
	WaitingOn          []string `json:"waiting_on"`
}

// TaskBlockedAnswer is a page of list-blocked.
type TaskBlockedAnswer struct {
	SpecID  string            `json:"spec_id"`
	Tasks   []BlockedTaskItem `json:"tasks"`
	Count   int               `json:"count"`
	Version int64             `json:"version"`
}

// HierarchyNode is one node of hierarchy, with its real depth; children are
// summarised by child_count (they are the next nodes of the walk).
type HierarchyNode struct {
	TaskID         string         `json:"task_id"`
	Type           specs.NodeType `json:"type"`
	Title          string         `json:"title"`
	Status         specs.Status   `json:"status"`
	Parent         string         `json:"parent"`
	Depth          int            `json:"depth"`
	ChildCount     int            `json:"child_count"`
	TotalTasks     int            `json:"total_tasks"`
	CompletedTasks int            `json:"completed_tasks"`
	*NodeDetail
}

// NodeDetail is what include_metadata adds to a hierarchy node.
type NodeDetail struct {
	Metadata     map[string]any `json:"metadata"`
	Dependencies TaskDeps       `json:"dependencies"`
}

// TaskHierarchyAnswer is a page of hierarchy.
type TaskHierarchyAnswer struct {
	SpecID         string          `json:"spec_id"`
	Nodes          []HierarchyNode `json:"nodes"`
	Count          int             `json:"count"`
	Version        int64           `json:"version"`
	MaxDepth       int             `json:"max_depth"`
	TotalTasks     int             `json:"total_tasks"`
	CompletedTasks int             `json:"completed_tasks"`
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

// pagedTasks answers one page of l over the call's spec: OpenPage binds the
// cursor and limit, specs.Listing walks the page, the next cursor resumes
// after its last node. Over the token budget the page ends earlier
// (ListAnswer): the last nodes go and the cursor resumes after the last
// node kept.
func pagedTasks[I, A any](ctx context.Context, d *Deps, r *Request, l taskListing[I, A]) Result {
	p, err := OpenPage(r, "task", l.action, r.Args.String("spec_id"), core.PageTasks, l.restart, l.filters...)
	if err != nil {
		return Fail(err)
	}
	var items []I
	var page specs.NodePage
	ans, err := readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (A, error) {
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
		return Fail(err)
	}
	res := OK(ans, p.Meta(p.Cursor(page.Last(), page.More)))
	res.Degrade = DegradeFunc(func(f Fit) (any, []core.MetaOption, bool, error) {
		la := &ListAnswer[I]{Data: structMap(ans), Key: l.key, Items: items, CountKey: "count", PageSize: p.Limit,
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

func wholeSpec(*specs.Spec) (specs.Listing, error) { return specs.Listing{Keep: keepTasks}, nil }

func keepTasks(n *specs.Node, _ int) bool { return specs.IsTaskNode(n) }

func listItemAt(_ *specs.Spec, n *specs.Node, _ int) TaskListItem { return listItem(n) }

func listAnswer(sp *specs.Spec, items []TaskListItem) TaskListAnswer {
	return TaskListAnswer{SpecID: sp.Header.SpecID, Tasks: items, Count: len(items), Version: sp.Header.Version}
}

// taskList pages every task, subtask, verify and research node in
// execution order.
func (d *Deps) taskList(ctx context.Context, r *Request) Result {
	return pagedTasks(ctx, d, r, taskListing[TaskListItem, TaskListAnswer]{action: "list", key: "tasks",
		restart: map[string]any{"action": "list", "spec_id": r.Args.String("spec_id")},
		listing: wholeSpec, item: listItemAt, wrap: listAnswer})
}

// taskQuery pages task nodes filtered by status, node_type and parent (its
// direct children, see specs.QueryListing).
func (d *Deps) taskQuery(ctx context.Context, r *Request) Result {
	a := r.Args
	specID := a.String("spec_id")
	f := TaskQueryFilters{Status: a.String("status"), Parent: a.String("parent"), NodeType: a.String("node_type")}
	return pagedTasks(ctx, d, r, taskListing[TaskListItem, TaskQueryAnswer]{action: "query", key: "tasks",
		restart: map[string]any{"action": "query", "spec_id": specID, "status": taskNullable(f.Status), "parent": taskNullable(f.Parent), "node_type": taskNullable(f.NodeType)},
		filters: []string{f.Status, f.Parent, f.NodeType},
		listing: func(sp *specs.Spec) (specs.Listing, error) {
			l, ok := specs.QueryListing(sp, f.Parent, specs.TaskFilter{Status: f.Status, NodeType: f.NodeType})
			if !ok {
				return l, taskNodeNotFound(sp, specID, "parent", f.Parent)
			}
			return l, nil
		},
		item: listItemAt,
		wrap: func(sp *specs.Spec, items []TaskListItem) TaskQueryAnswer {
			return TaskQueryAnswer{TaskListAnswer: listAnswer(sp, items), Filters: f}
		}})
}

// taskHierarchy pages the tree (root excluded) down to max_depth, by real
// tree depth, in execution order.
func (d *Deps) taskHierarchy(ctx context.Context, r *Request) Result {
	maxDepth := r.Args.IntOr("max_depth", 2)
	withMeta := r.Args.Bool("include_metadata")
	return pagedTasks(ctx, d, r, taskListing[HierarchyNode, TaskHierarchyAnswer]{action: "hierarchy", key: "nodes",
		restart: map[string]any{"action": "hierarchy", "spec_id": r.Args.String("spec_id"), "max_depth": maxDepth},
		filters: []string{strconv.Itoa(maxDepth), strconv.FormatBool(withMeta)},
		listing: func(*specs.Spec) (specs.Listing, error) { return specs.Listing{MaxDepth: maxDepth}, nil },
		item: func(_ *specs.Spec, n *specs.Node, depth int) HierarchyNode {
			h := HierarchyNode{TaskID: n.ID, Type: n.Type, Title: n.Title, Status: n.Status, Parent: n.Parent, Depth: depth,
				ChildCount: len(n.Children), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks}
			if withMeta {
				h.NodeDetail = &NodeDetail{Metadata: metadataOf(n), Dependencies: taskDeps(n)}
			}
			return h
		},
		wrap: func(sp *specs.Spec, items []HierarchyNode) TaskHierarchyAnswer {
			return TaskHierarchyAnswer{SpecID: sp.Header.SpecID, Nodes: items, Count: len(items), Version: sp.Header.Version,
				MaxDepth: maxDepth, TotalTasks: sp.Header.TotalTasks, CompletedTasks: sp.Header.CompletedTasks}
		}})
}

// taskListBlocked pages the blocked nodes (specs.BlockedListing) with their
// blocker and their unfinished prerequisites.
func (d *Deps) taskListBlocked(ctx context.Context, r *Request) Result {
	return pagedTasks(ctx, d, r, taskListing[BlockedTaskItem, TaskBlockedAnswer]{action: "list-blocked", key: "tasks",
		restart: map[string]any{"action": "list-blocked", "spec_id": r.Args.String("spec_id")},
		listing: func(*specs.Spec) (specs.Listing, error) { return specs.BlockedListing(), nil },
		item: func(sp *specs.Spec, n *specs.Node, _ int) BlockedTaskItem {
			return BlockedTaskItem{TaskListItem: listItem(n), BlockerType: n.MetaString("blocker_type"), BlockerDescription: n.MetaString("blocker_description"),
				BlockerTicket: nullable(n.MetaString("blocker_ticket")), BlockedAt: n.MetaString("blocked_at"), WaitingOn: orEmpty(specs.Blockers(sp, n.ID))}
		},
		wrap: func(sp *specs.Spec, items []BlockedTaskItem) TaskBlockedAnswer {
			return TaskBlockedAnswer{SpecID: sp.Header.SpecID, Tasks: items, Count: len(items), Version: sp.Header.Version}
		}})
}

// TaskProgressAnswer is progress: the counts of a node and of every phase.
type TaskProgressAnswer struct {
	SpecID         string         `json:"spec_id"`
	NodeID         string         `json:"node_id"`
	Type           specs.NodeType `json:"type"`
	Title          string         `json:"title"`
	Status         specs.Status   `json:"status"`
	CompletedTasks int            `json:"completed_tasks"`
	TotalTasks     int            `json:"total_tasks"`
	Percentage     int            `json:"percentage"`
	RemainingTasks int            `json:"remaining_tasks"`
	CurrentPhase   *string        `json:"current_phase"`
	Version        int64          `json:"version"`
	// Phases is left out when include_phases is false.
	Phases *[]PhaseBrief `json:"phases,omitempty"`
}

// taskProgress answers the counts of node_id (default the whole spec) and,
// unless include_phases is false, of every phase.
func (d *Deps) taskProgress(ctx context.Context, r *Request) Result {
	id := r.Args.String("node_id")
	if id == "" {
		id = specs.RootID
	}
	withPhases := !r.Args.Has("include_phases") || r.Args.Bool("include_phases")
	return answer(readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (TaskProgressAnswer, error) {
		n := sp.Node(id)
		if n == nil {
			return TaskProgressAnswer{}, taskNodeNotFound(sp, r.Args.String("spec_id"), "node_id", id)
		}
		a := TaskProgressAnswer{SpecID: sp.Header.SpecID, NodeID: id, Type: n.Type, Title: n.Title, Status: n.Status,
			CompletedTasks: n.CompletedTasks, TotalTasks: n.TotalTasks, Percentage: percent(n.CompletedTasks, n.TotalTasks),
			RemainingTasks: n.TotalTasks - n.CompletedTasks, CurrentPhase: nullable(sp.Header.CurrentPhase), Version: sp.Header.Version}
		if withPhases {
			phases := []PhaseBrief{}
			for _, p := range specs.Phases(sp) {
				phases = append(phases, phaseBrief(p))
			}
			a.Phases = &phases
		}
		return a, nil
	}))
}
