package specs

// The rows and pages of the task listings (list, query, hierarchy,
// list-blocked) and progress. Every row names its node task_id: a list row,
// a query row, a hierarchy node and a blocked row of the same node carry
// the same key and value.

// RowPage is one page of a task listing's rows (T: TaskListItem for list
// and query, BlockedItem for list-blocked) at the spec's version.
type RowPage[T any] struct {
	SpecID  string `json:"spec_id"`
	Tasks   []T    `json:"tasks"`
	Count   int    `json:"count"`
	Version int64  `json:"version"`
}

// TaskPage is a page of task list (and, with Filters, of query).
type TaskPage = RowPage[TaskListItem]

// PageOf is the page of items over s.
func PageOf[T any](s *Spec, items []T) RowPage[T] {
	return RowPage[T]{SpecID: s.Header.SpecID, Tasks: items, Count: len(items), Version: s.Header.Version}
}

// QueryFilters echoes task query's filters.
type QueryFilters struct {
	Status   string `json:"status"`
	Parent   string `json:"parent"`
	NodeType string `json:"node_type"`
}

// QueryPage is a page of task query.
type QueryPage struct {
	TaskPage
	Filters QueryFilters `json:"filters"`
}

// Listing is the walk query pages: the direct children of Parent (the
// whole spec without one) that pass the status and node type filters, and
// false when Parent does not exist (QueryListing).
func (f QueryFilters) Listing(s *Spec) (Listing, bool) {
	return QueryListing(s, f.Parent, TaskFilter{Status: f.Status, NodeType: f.NodeType})
}

// TaskListing is the walk list pages: every task, subtask, verify and
// research node in execution order.
func TaskListing() Listing { return Listing{Keep: func(n *Node, _ int) bool { return IsTaskNode(n) }} }

// BlockedItem is one task of list-blocked: its blocker and the unfinished
// prerequisites it waits on.
type BlockedItem struct {
	TaskListItem
	BlockerType        string   `json:"blocker_type"`
	BlockerDescription string   `json:"blocker_description"`
	BlockerTicket      *string  `json:"blocker_ticket"`
	BlockedAt          string   `json:"blocked_at"`
	WaitingOn          []string `json:"waiting_on"`
}

// BlockedItemOf is n as a list-blocked row.
func BlockedItemOf(s *Spec, n *Node) BlockedItem {
	return BlockedItem{TaskListItem: ListItemOf(n), BlockerType: n.MetaString("blocker_type"), BlockerDescription: n.MetaString("blocker_description"),
		BlockerTicket: nullable(n.MetaString("blocker_ticket")), BlockedAt: n.MetaString("blocked_at"), WaitingOn: orEmpty(Blockers(s, n.ID))}
}

// BlockedPage is a page of list-blocked.
type BlockedPage = RowPage[BlockedItem]

// HierarchyNode is one node of hierarchy, with its real depth; children are
// summarised by child_count (they are the next nodes of the walk).
type HierarchyNode struct {
	TaskID         string   `json:"task_id"`
	Type           NodeType `json:"type"`
	Title          string   `json:"title"`
	Status         Status   `json:"status"`
	Parent         string   `json:"parent"`
	Depth          int      `json:"depth"`
	ChildCount     int      `json:"child_count"`
	TotalTasks     int      `json:"total_tasks"`
	CompletedTasks int      `json:"completed_tasks"`
	*NodeDetail
}

// NodeDetail is what include_metadata adds to a hierarchy node.
type NodeDetail struct {
	Metadata     map[string]any `json:"metadata"`
	Dependencies TaskDeps       `json:"dependencies"`
}

// HierarchyNodeOf is n at depth as a hierarchy node, with its metadata and
// dependencies when withMeta.
func HierarchyNodeOf(n *Node, depth int, withMeta bool) HierarchyNode {
	h := HierarchyNode{TaskID: n.ID, Type: n.Type, Title: n.Title, Status: n.Status, Parent: n.Parent, Depth: depth,
		ChildCount: n.Children.Len(), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks}
	if withMeta {
		h.NodeDetail = &NodeDetail{Metadata: MetadataOf(n), Dependencies: DepsOf(n)}
	}
	return h
}

// HierarchyPage is a page of hierarchy.
type HierarchyPage struct {
	SpecID         string          `json:"spec_id"`
	Nodes          []HierarchyNode `json:"nodes"`
	Count          int             `json:"count"`
	Version        int64           `json:"version"`
	MaxDepth       int             `json:"max_depth"`
	TotalTasks     int             `json:"total_tasks"`
	CompletedTasks int             `json:"completed_tasks"`
}

// HierarchyPageOf is the page of nodes over s, walked to maxDepth.
func HierarchyPageOf(s *Spec, nodes []HierarchyNode, maxDepth int) HierarchyPage {
	return HierarchyPage{SpecID: s.Header.SpecID, Nodes: nodes, Count: len(nodes), Version: s.Header.Version,
		MaxDepth: maxDepth, TotalTasks: s.Header.TotalTasks, CompletedTasks: s.Header.CompletedTasks}
}

// NodeProgress is progress: the counts of a node and of every phase.
type NodeProgress struct {
	SpecID         string   `json:"spec_id"`
	NodeID         string   `json:"node_id"`
	Type           NodeType `json:"type"`
	Title          string   `json:"title"`
	Status         Status   `json:"status"`
	CompletedTasks int      `json:"completed_tasks"`
	TotalTasks     int      `json:"total_tasks"`
	Percentage     int      `json:"percentage"`
	RemainingTasks int      `json:"remaining_tasks"`
	CurrentPhase   *string  `json:"current_phase"`
	Version        int64    `json:"version"`
	// Phases is left out when the phases are not asked for.
	Phases *[]PhaseBrief `json:"phases,omitempty"`
}

// ProgressOfNode is n's counts and, when withPhases, every phase's.
func ProgressOfNode(s *Spec, n *Node, withPhases bool) NodeProgress {
	p := NodeProgress{SpecID: s.Header.SpecID, NodeID: n.ID, Type: n.Type, Title: n.Title, Status: n.Status,
		CompletedTasks: n.CompletedTasks, TotalTasks: n.TotalTasks, Percentage: Percent(n.CompletedTasks, n.TotalTasks),
		RemainingTasks: n.TotalTasks - n.CompletedTasks, CurrentPhase: nullable(s.Header.CurrentPhase), Version: s.Header.Version}
	if withPhases {
		phases := PhaseBriefs(s)
		p.Phases = &phases
	}
	return p
}
