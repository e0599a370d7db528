package tools

import (
	"context"
	"fmt"
	"regexp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// Plan edits: add, remove, move, dependencies, requirements, estimates and
// metadata. Each is one stored mutation through a domain function.

// TaskAddAnswer is the node add created.
type TaskAddAnswer struct {
	Mutation
	TaskID   string         `json:"task_id"`
	Parent   string         `json:"parent"`
	Type     specs.NodeType `json:"type"`
	Title    string         `json:"title"`
	Position int            `json:"position"`
	Task     TaskNode       `json:"task"`
}

func (d *Deps) taskAdd(ctx context.Context, r *Request) Result {
	a := r.Args
	in := specs.TaskInput{
		Type: specs.NodeType(a.String("task_type")), Title: a.String("title"), Description: a.String("description"),
		TaskCategory: a.String("task_category"), FilePath: a.String("file_path"), AcceptanceCriteria: a.Strings("acceptance_criteria"),
		Complexity: a.String("complexity"), VerificationType: a.String("verification_type"), Command: a.String("command"),
		Expected: a.String("expected"), BlockingMode: a.String("blocking_mode"), Metadata: a.Object("metadata"),
	}
	if h, ok := a.Float("estimated_hours"); ok {
		in.EstimatedHours = &h
	}
	if p, ok := a.Int("position"); ok {
		in.Position = p
	}
	parent := a.String("parent")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskAddAnswer, error) {
		id, err := specs.AddTask(sp, parent, in)
		if err != nil {
			return TaskAddAnswer{}, err
		}
		n := sp.Node(id)
		return TaskAddAnswer{TaskID: id, Parent: parent, Type: n.Type, Title: n.Title, Position: specs.Position(sp, id), Task: taskNode(n)}, nil
	}))
}

// TaskRemoveAnswer lists the nodes remove removed.
type TaskRemoveAnswer struct {
	Mutation
	TaskID       string   `json:"task_id"`
	Removed      []string `json:"removed"`
	RemovedCount int      `json:"removed_count"`
}

func (d *Deps) taskRemove(ctx context.Context, r *Request) Result {
	id := r.Args.String("task_id")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRemoveAnswer, error) {
		removed, err := specs.RemoveTask(sp, id, r.Args.Bool("cascade"))
		return TaskRemoveAnswer{TaskID: id, Removed: removed, RemovedCount: len(removed)}, err
	}))
}

// TaskMoveAnswer is where move put the node.
type TaskMoveAnswer struct {
	Mutation
	TaskID   string `json:"task_id"`
	Parent   string `json:"parent"`
	Position int    `json:"position"`
}

func (d *Deps) taskMove(ctx context.Context, r *Request) Result {
	id := r.Args.String("task_id")
	pos, _ := r.Args.Int("position")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMoveAnswer, error) {
		if err := specs.MoveTask(sp, id, r.Args.String("parent"), pos); err != nil {
			return TaskMoveAnswer{}, err
		}
		return TaskMoveAnswer{TaskID: id, Parent: sp.Node(id).Parent, Position: specs.Position(sp, id)}, nil
	}))
}

// TaskDependencyAnswer is an edge after add-dependency / remove-dependency,
// with both ends' dependency lists.
type TaskDependencyAnswer struct {
	Mutation
	TaskID             string    `json:"task_id"`
	TargetID           string    `json:"target_id"`
	DependencyType     string    `json:"dependency_type"`
	TaskDependencies   TaskDeps  `json:"task_dependencies"`
	TargetDependencies *TaskDeps `json:"target_dependencies,omitempty"`
}

// taskDependency is add-dependency / remove-dependency: both halves of the
// edge change in one transaction (the domain keeps them in sync).
func (d *Deps) taskDependency(do func(s *specs.Spec, taskID, targetID, depType string) error) Handler {
	return func(ctx context.Context, r *Request) Result {
		id, target := r.Args.String("task_id"), r.Args.String("target_id")
		depType := r.Args.String("dependency_type")
		if depType == "" {
			depType = "blocks"
		}
		return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskDependencyAnswer, error) {
			if err := do(sp, id, target, depType); err != nil {
				return TaskDependencyAnswer{}, err
			}
			a := TaskDependencyAnswer{TaskID: id, TargetID: target, DependencyType: depType, TaskDependencies: taskDeps(sp.Node(id))}
			if t := sp.Node(target); t != nil {
				td := taskDeps(t)
				a.TargetDependencies = &td
			}
			return a, nil
		}))
	}
}

// TaskRequirementAnswer is the requirement add-requirement appended.
type TaskRequirementAnswer struct {
	Mutation
	TaskID      string            `json:"task_id"`
	Requirement specs.Requirement `json:"requirement"`
	Count       int               `json:"count"`
}

func (d *Deps) taskAddRequirement(ctx context.Context, r *Request) Result {
	id := r.Args.String("task_id")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRequirementAnswer, error) {
		req, err := specs.AddRequirement(sp, id, r.Args.String("requirement_type"), r.Args.String("text"))
		if err != nil {
			return TaskRequirementAnswer{}, err
		}
		return TaskRequirementAnswer{TaskID: id, Requirement: req, Count: len(sp.Node(id).Requirements())}, nil
	}))
}

// TaskEstimateAnswer is a node's estimate after update-estimate.
type TaskEstimateAnswer struct {
	Mutation
	TaskID         string  `json:"task_id"`
	EstimatedHours any     `json:"estimated_hours"`
	Complexity     *string `json:"complexity"`
}

func (d *Deps) taskUpdateEstimate(ctx context.Context, r *Request) Result {
	var hours *float64
	if h, ok := r.Args.Float("estimated_hours"); ok {
		hours = &h
	}
	id := r.Args.String("task_id")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskEstimateAnswer, error) {
		if err := specs.UpdateEstimate(sp, id, hours, r.Args.String("complexity")); err != nil {
			return TaskEstimateAnswer{}, err
		}
		n := sp.Node(id)
		eh, _ := n.Meta("estimated_hours")
		return TaskEstimateAnswer{TaskID: id, EstimatedHours: eh, Complexity: nullable(n.MetaString("complexity"))}, nil
	}))
}

// metadataFields are update-metadata's direct parameters; each sets the
// metadata key of the same name ("title" sets the node's title).
var metadataFields = []string{"title", "description", "file_path", "task_category", "acceptance_criteria", "complexity",
	"estimated_hours", "status_note", "verification_type", "command", "expected"}

// TaskMetadataAnswer is a node after update-metadata, with the keys that
// changed.
type TaskMetadataAnswer struct {
	Mutation
	TaskID  string   `json:"task_id"`
	Changed []string `json:"changed"`
	Task    TaskNode `json:"task"`
}

func (d *Deps) taskUpdateMetadata(ctx context.Context, r *Request) Result {
	updates := map[string]any{}
	for k, v := range r.Args.Object("metadata") {
		updates[k] = v
	}
	for _, k := range metadataFields {
		if r.Args.Has(k) {
			updates[k] = r.Args[k]
		}
	}
	id := r.Args.String("task_id")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataAnswer, error) {
		changed, err := specs.UpdateMetadata(sp, id, updates)
		if err != nil {
			return TaskMetadataAnswer{}, err
		}
		return TaskMetadataAnswer{TaskID: id, Changed: changed, Task: taskNode(sp.Node(id))}, nil
	}))
}

// maxBatchMatches bounds metadata-batch: more matches is an error asking
// for narrower filters, so one call never rewrites a whole large spec.
const maxBatchMatches = 100

// MetadataBatchFilters echoes metadata-batch's filters.
type MetadataBatchFilters struct {
	Status   string `json:"status"`
	Parent   string `json:"parent"`
	Pattern  string `json:"pattern"`
	NodeType string `json:"node_type"`
}

// TaskMetadataBatchAnswer reports metadata-batch: every node matched, with
// the keys that changed on it.
type TaskMetadataBatchAnswer struct {
	Mutation
	MatchedCount int                    `json:"matched_count"`
	UpdatedCount int                    `json:"updated_count"`
	Nodes        []specs.MetadataChange `json:"nodes"`
	Updates      map[string]any         `json:"updates"`
	Filters      MetadataBatchFilters   `json:"filters"`
}

// taskMetadataBatch applies the same updates to every task, subtask, verify
// and research node that passes all given filters (status; parent: the
// node's subtree; pattern: RE2 over title and id; node_type), in one
// transaction: any invalid update rejects the whole call. At least one
// filter is required; more than maxBatchMatches matches is VALIDATION_ERROR.
func (d *Deps) taskMetadataBatch(ctx context.Context, r *Request) Result {
	a := r.Args
	f := MetadataBatchFilters{Status: a.String("status"), Parent: a.String("parent"), Pattern: a.String("pattern"), NodeType: a.String("node_type")}
	match, err := metadataBatchFilter(f)
	if err != nil {
		return Fail(err)
	}
	updates := a.Object("updates")
	if len(updates) == 0 {
		return Fail(core.NewError(errcode.MissingRequired, "updates must set at least one metadata key.",
			map[string]any{"field": "updates", "action": "metadata-batch"}))
	}
	specID := a.String("spec_id")
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataBatchAnswer, error) {
		scope := specs.RootID
		if f.Parent != "" {
			if sp.Node(f.Parent) == nil {
				return TaskMetadataBatchAnswer{}, taskNodeNotFound(sp, specID, "parent", f.Parent)
			}
			scope = f.Parent
		}
		matched, tooMany := specs.MatchTasks(sp, scope, match, maxBatchMatches)
		if tooMany {
			return TaskMetadataBatchAnswer{}, core.NewError(errcode.Validation, fmt.Sprintf("The filters match more than %d nodes; narrow them.", maxBatchMatches),
				map[string]any{"field": "pattern", "limit": maxBatchMatches, "constraint": "at most 100 matches"})
		}
		changes, err := specs.UpdateMetadataAll(sp, matched, updates)
		if err != nil {
			return TaskMetadataBatchAnswer{}, err
		}
		ans := TaskMetadataBatchAnswer{MatchedCount: len(matched), Nodes: changes, Updates: updates, Filters: f}
		for _, c := range changes {
			if len(c.Changed) > 0 {
				ans.UpdatedCount++
			}
		}
		return ans, nil
	}))
}

// metadataBatchFilter binds metadata-batch's filters: at least one
// (MISSING_REQUIRED), pattern a valid RE2 expression (INVALID_REGEX).
func metadataBatchFilter(f MetadataBatchFilters) (specs.TaskFilter, error) {
	if f == (MetadataBatchFilters{}) {
		return specs.TaskFilter{}, core.NewError(errcode.MissingRequired, "metadata-batch needs at least one filter: status, parent, pattern or node_type.",
			map[string]any{"field": "pattern", "action": "metadata-batch", "filters": []string{"status", "parent", "pattern", "node_type"}})
	}
	tf := specs.TaskFilter{TasksOnly: true, Status: f.Status, NodeType: f.NodeType}
	if f.Pattern != "" {
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return tf, core.NewError(errcode.InvalidRegex, "pattern is not a valid RE2 regular expression.",
				map[string]any{"field": "pattern", "received": f.Pattern, "constraint": "RE2 syntax, at most 256 characters"})
		}
		tf.Match = func(n *specs.Node) bool { return re.MatchString(n.Title) || re.MatchString(n.ID) }
	}
	return tf, nil
}
