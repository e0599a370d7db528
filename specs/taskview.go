package specs

// The shapes in which task answers show nodes, phases and progress. They
// are domain results: the tools layer embeds them in its answers as they
// are, so one struct says what every answer carrying a node looks like.
// Every node shape names its id task_id (phases: phase_id), in list, query,
// hierarchy, prepare-batch and every single-node answer alike.

// TaskRef is the short form of a node.
type TaskRef struct {
	TaskID string   `json:"task_id"`
	Title  string   `json:"title"`
	Type   NodeType `json:"type"`
	Status Status   `json:"status"`
	Parent *string  `json:"parent"`
}

// RefOf is n's short form.
func RefOf(n *Node) TaskRef {
	return TaskRef{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status, Parent: nullable(n.Parent)}
}

// TaskDeps are a node's dependency lists, never null.
type TaskDeps struct {
	Blocks    []string `json:"blocks"`
	BlockedBy []string `json:"blocked_by"`
	Depends   []string `json:"depends"`
}

// DepsOf is n's dependency lists.
func DepsOf(n *Node) TaskDeps {
	return TaskDeps{Blocks: orEmpty(n.Dependencies.Blocks), BlockedBy: orEmpty(n.Dependencies.BlockedBy), Depends: orEmpty(n.Dependencies.Depends)}
}

// TaskNode is the whole node with its id (the document's node object plus
// task_id).
type TaskNode struct {
	TaskID         string         `json:"task_id"`
	Type           NodeType       `json:"type"`
	Title          string         `json:"title"`
	Status         Status         `json:"status"`
	Parent         *string        `json:"parent"`
	Children       []string       `json:"children"`
	TotalTasks     int            `json:"total_tasks"`
	CompletedTasks int            `json:"completed_tasks"`
	Metadata       map[string]any `json:"metadata"`
	Dependencies   TaskDeps       `json:"dependencies"`
}

// NodeOf is the whole of n.
func NodeOf(n *Node) TaskNode {
	return TaskNode{TaskID: n.ID, Type: n.Type, Title: n.Title, Status: n.Status, Parent: nullable(n.Parent),
		Children: n.Children.Slice(), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks,
		Metadata: MetadataOf(n), Dependencies: DepsOf(n)}
}

// TaskListItem is one task of list, query and prepare-batch.
type TaskListItem struct {
	TaskID   string   `json:"task_id"`
	Title    string   `json:"title"`
	Type     NodeType `json:"type"`
	Status   Status   `json:"status"`
	Parent   string   `json:"parent"`
	FilePath *string  `json:"file_path"`
}

// ListItemOf is n as a list row.
func ListItemOf(n *Node) TaskListItem {
	return TaskListItem{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status, Parent: n.Parent, FilePath: nullable(n.FilePath())}
}

// MetadataOf is n's metadata, never nil.
func MetadataOf(n *Node) map[string]any {
	if n.Metadata == nil {
		return map[string]any{}
	}
	return n.Metadata
}

// Percent is floor(completed/total·100), 0 for an empty node.
func Percent(completed, total int) int {
	if total <= 0 {
		return 0
	}
	return completed * 100 / total
}

// PhaseBrief is a phase with its progress.
type PhaseBrief struct {
	PhaseID        string `json:"phase_id"`
	Title          string `json:"title"`
	Status         Status `json:"status"`
	CompletedTasks int    `json:"completed_tasks"`
	TotalTasks     int    `json:"total_tasks"`
	Percentage     int    `json:"percentage"`
}

// BriefOf is phase p's brief.
func BriefOf(p *Node) PhaseBrief {
	return PhaseBrief{PhaseID: p.ID, Title: p.Title, Status: p.Status, CompletedTasks: p.CompletedTasks,
		TotalTasks: p.TotalTasks, Percentage: Percent(p.CompletedTasks, p.TotalTasks)}
}

// PhaseBriefOf is the brief of the phase n sits in, or nil.
func PhaseBriefOf(s *Spec, n *Node) *PhaseBrief {
	if p := PhaseOf(s, n); p != nil {
		b := BriefOf(p)
		return &b
	}
	return nil
}

// PhaseBriefs are the briefs of every phase, in order (never nil).
func PhaseBriefs(s *Spec) []PhaseBrief {
	out := []PhaseBrief{}
	for _, p := range Phases(s) {
		out = append(out, BriefOf(p))
	}
	return out
}

// ProgressBrief is the spec's overall progress as task answers report it.
type ProgressBrief struct {
	CompletedTasks int `json:"completed_tasks"`
	TotalTasks     int `json:"total_tasks"`
	Percentage     int `json:"percentage"`
}

// ProgressOf is s's overall progress.
func ProgressOf(s *Spec) ProgressBrief {
	return ProgressBrief{CompletedTasks: s.Header.CompletedTasks, TotalTasks: s.Header.TotalTasks, Percentage: s.Header.ProgressPercentage}
}

// StepKind is what a next step does.
type StepKind string

// The steps an answer can suggest.
const (
	StepCompleteSpec StepKind = "complete-spec" // every task is done: complete the spec
	StepRetry        StepKind = "retry"         // reopen the failed task TaskID, to work on it again
	StepCheckDeps    StepKind = "check-deps"    // see what the blocked task TaskID waits on
	StepTaskInfo     StepKind = "task-info"     // read the task TaskID someone is working on
	StepIntoPhase    StepKind = "into-phase"    // move the task TaskID, outside every phase, into the phase Parent
	StepFixSpec      StepKind = "fix-spec"      // apply the spec's automatic fixes (a task outside every phase, and no open phase)
)

// NextStep is a step an answer suggests, as a domain fact: what to do on
// which spec and task. The domain names no tools; the MCP face turns a step
// into the call that takes it.
type NextStep struct {
	Kind   StepKind
	SpecID string
	TaskID string
	Parent string // StepIntoPhase: the phase to move TaskID into
}

// nullable is s, or nil (JSON null) when s is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orEmpty is s, or an empty (non-nil) list.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
