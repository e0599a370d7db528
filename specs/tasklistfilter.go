package specs

// ListFilters are task list's filters, foundry-mcp's status_filter and
// include_completed: the zero value lists every task node.
type ListFilters struct {
	Status          string // only nodes with this status ("" = any)
	ExcludeComplete bool   // leave out completed nodes (include_completed: false)
}

// Listing is the walk task list pages: every task, subtask, verify and
// research node in execution order that passes the filters.
func (f ListFilters) Listing() Listing {
	return Listing{Keep: func(n *Node, _ int) bool {
		return IsTaskNode(n) && (f.Status == "" || string(n.Status) == f.Status) &&
			!(f.ExcludeComplete && n.Status == StatusCompleted)
	}}
}
