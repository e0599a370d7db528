package tools

import (
	"github.com/specd/specd/specs"
)

// Typed answers of the task tool.

// answer wraps a typed answer or its error.
func answer[T any](v T, err error) Result {
	if err != nil {
		return Fail(err)
	}
	return OK(v)
}

// nullable is s, or JSON null when s is empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orEmpty is s, or an empty (non-null) list.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// TaskRef is the short form of a node in task answers.
type TaskRef struct {
	TaskID string         `json:"task_id"`
	Title  string         `json:"title"`
	Type   specs.NodeType `json:"type"`
	Status specs.Status   `json:"status"`
	Parent *string        `json:"parent"`
}

func taskRef(n *specs.Node) TaskRef {
	return TaskRef{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status, Parent: nullable(n.Parent)}
}

// TaskDeps are a node's dependency lists.
type TaskDeps struct {
	Blocks    []string `json:"blocks"`
	BlockedBy []string `json:"blocked_by"`
	Depends   []string `json:"depends"`
}

func taskDeps(n *specs.Node) TaskDeps {
	return TaskDeps{Blocks: orEmpty(n.Dependencies.Blocks), BlockedBy: orEmpty(n.Dependencies.BlockedBy), Depends: orEmpty(n.Dependencies.Depends)}
}

// TaskNode is the whole node with its id (the document's node object plus
// task_id).
type TaskNode struct {
	TaskID         string         `json:"task_id"`
	Type           specs.NodeType `json:"type"`
	Title          string         `json:"title"`
	Status         specs.Status   `json:"status"`
	Parent         *string        `json:"parent"`
	Children       []string       `json:"children"`
	TotalTasks     int            `json:"total_tasks"`
	CompletedTasks int            `json:"completed_tasks"`
	Metadata       map[string]any `json:"metadata"`
	Dependencies   TaskDeps       `json:"dependencies"`
}

func taskNode(n *specs.Node) TaskNode {
	return TaskNode{TaskID: n.ID, Type: n.Type, Title: n.Title, Status: n.Status, Parent: nullable(n.Parent),
		Children: orEmpty(n.Children), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks,
		Metadata: metadataOf(n), Dependencies: taskDeps(n)}
}

// metadataOf is n's metadata, never null.
func metadataOf(n *specs.Node) map[string]any {
	if n.Metadata == nil {
		return map[string]any{}
	}
	return n.Metadata
}

// percent is floor(completed/total·100), 0 for an empty node.
func percent(completed, total int) int {
	if total <= 0 {
		return 0
	}
	return completed * 100 / total
}

// PhaseBrief is a phase with its progress.
type PhaseBrief struct {
	PhaseID        string       `json:"phase_id"`
	Title          string       `json:"title"`
	Status         specs.Status `json:"status"`
	CompletedTasks int          `json:"completed_tasks"`
	TotalTasks     int          `json:"total_tasks"`
	Percentage     int          `json:"percentage"`
}

func phaseBrief(p *specs.Node) PhaseBrief {
	return PhaseBrief{PhaseID: p.ID, Title: p.Title, Status: p.Status, CompletedTasks: p.CompletedTasks,
		TotalTasks: p.TotalTasks, Percentage: percent(p.CompletedTasks, p.TotalTasks)}
}

// phaseOf is the brief of the phase n sits in, or nil.
func phaseOf(sp *specs.Spec, n *specs.Node) *PhaseBrief {
	if p := specs.PhaseOf(sp, n); p != nil {
		b := phaseBrief(p)
		return &b
	}
	return nil
}

// ProgressBrief is the spec's overall progress as task answers report it (spec list rows carry SpecProgress).
type ProgressBrief struct {
	CompletedTasks int `json:"completed_tasks"`
	TotalTasks     int `json:"total_tasks"`
	Percentage     int `json:"percentage"`
}

func specProgress(sp *specs.Spec) ProgressBrief {
	return ProgressBrief{CompletedTasks: sp.Header.CompletedTasks, TotalTasks: sp.Header.TotalTasks, Percentage: sp.Header.ProgressPercentage}
}

// NextCall is a call an answer suggests, runnable as given.
type NextCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

// taskNullable is s as an argument value: nil (JSON null) when empty.
func taskNullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
