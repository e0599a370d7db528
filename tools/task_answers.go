package tools

import (
	"context"

	"github.com/specd/specd/specs"
)

// Typed answers of the task tool, and the two helpers that run a handler's
// domain call in one store transaction and hand back its typed answer.

// Written is what every stored mutation's answer carries: the spec, the
// version written (or that would be), and for a dry run the changes.
type Written struct {
	SpecID  string              `json:"spec_id"`
	Version int64               `json:"version"`
	DryRun  bool                `json:"dry_run,omitempty"`
	Changes *[]specs.RepoChange `json:"changes,omitempty"`
}

func (w *Written) written() *Written { return w }

// writeAnswer is a typed mutation answer: a struct embedding Written.
type writeAnswer[T any] interface {
	*T
	written() *Written
}

// mutateAnswer runs fn as one stored mutation of the call's spec (see
// mutate) and fills the answer's Written part. fn's errors keep their
// domain codes.
func mutateAnswer[T any, P writeAnswer[T]](ctx context.Context, d *Deps, r *Request, fn func(sp *specs.Spec, j specs.JournalWriter) (T, error)) (T, error) {
	specID := r.Args.String("spec_id")
	var out T
	res, err := d.Specs.MutateSpec(ctx, specID, d.writeOptions(r, r.Call.Action), func(sp *specs.Spec, j specs.JournalWriter) error {
		sp.Clock = d.clock()
		var err error
		out, err = fn(sp, j)
		return err
	})
	if err != nil {
		return out, specError(err, specID)
	}
	w := P(&out).written()
	w.SpecID, w.Version = specID, res.Version
	if res.DryRun {
		changes := res.Changes
		w.DryRun, w.Changes = true, &changes
	}
	return out, nil
}

// readAnswer runs fn over the call's spec in one read transaction.
func readAnswer[T any](ctx context.Context, d *Deps, r *Request, fn func(sp *specs.Spec, j specs.JournalReader) (T, error)) (T, error) {
	specID := r.Args.String("spec_id")
	var out T
	err := d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, j specs.JournalReader) error {
		var err error
		out, err = fn(sp, j)
		return err
	})
	if err != nil {
		return out, specError(err, specID)
	}
	return out, nil
}

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
