package tools

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// Plan edits: add, remove, move, dependencies, requirements, estimates and
// metadata. Each is one stored mutation through one domain function
// (specs/taskedit.go) whose result is the answer with its Mutation.

// Answers of the plan edits.
type (
	// TaskAddAnswer is the node add created.
	TaskAddAnswer struct {
		Mutation
		specs.AddedTask
	}
	// TaskRemoveAnswer lists the nodes remove removed.
	TaskRemoveAnswer struct {
		Mutation
		specs.RemovedTasks
	}
	// TaskMoveAnswer is where move put the node.
	TaskMoveAnswer struct {
		Mutation
		specs.MovedTask
	}
	// TaskDependencyAnswer is an edge after add-dependency /
	// remove-dependency, with both ends' dependency lists.
	TaskDependencyAnswer struct {
		Mutation
		specs.DependencyView
	}
	// TaskRequirementAnswer is the requirement add-requirement appended.
	TaskRequirementAnswer struct {
		Mutation
		specs.AddedRequirement
	}
	// TaskEstimateAnswer is a node's estimate after update-estimate.
	TaskEstimateAnswer struct {
		Mutation
		specs.Estimate
	}
	// TaskMetadataAnswer is a node after update-metadata, with the keys
	// that changed.
	TaskMetadataAnswer struct {
		Mutation
		specs.MetadataUpdate
	}
	// TaskMetadataBatchAnswer reports metadata-batch: every node matched,
	// with the keys that changed on it.
	TaskMetadataBatchAnswer struct {
		Mutation
		specs.MetadataBatch
	}
)

// taskAdd adds a node under parent (specs.AddTaskView).
func (d *Deps) taskAdd(ctx context.Context, r *mcptool.Request) mcptool.Result {
	a := r.Args
	in := specs.TaskInput{
		Type: specs.NodeType(a.String("task_type")), Title: a.String("title"), Description: a.String("description"),
		TaskCategory: a.String("task_category"), FilePath: a.String("file_path"), AcceptanceCriteria: a.Strings("acceptance_criteria"),
		Complexity: a.String("complexity"), VerificationType: a.String("verification_type"), Command: a.String("command"),
		Expected: a.String("expected"), BlockingMode: a.String("blocking_mode"), ResearchType: a.String("research_type"),
		Query: a.String("query"), Metadata: a.Object("metadata"),
	}
	if h, ok := a.Float("estimated_hours"); ok {
		in.EstimatedHours = &h
	}
	if p, ok := a.Int("position"); ok {
		in.Position = &p
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskAddAnswer, error) {
		v, err := specs.AddTaskView(sp, a.String("parent"), in)
		return TaskAddAnswer{AddedTask: v}, err
	})
}

// taskRemove removes a node, with cascade its children (specs.RemoveTaskView).
func (d *Deps) taskRemove(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRemoveAnswer, error) {
		v, err := specs.RemoveTaskView(sp, r.Args.String("task_id"), r.Args.Bool("cascade"))
		return TaskRemoveAnswer{RemovedTasks: v}, err
	})
}

// taskMove moves a node to parent/position (specs.MoveTaskView).
func (d *Deps) taskMove(ctx context.Context, r *mcptool.Request) mcptool.Result {
	var pos *int
	if p, ok := r.Args.Int("position"); ok {
		pos = &p
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMoveAnswer, error) {
		v, err := specs.MoveTaskView(sp, r.Args.String("task_id"), r.Args.String("parent"), pos)
		return TaskMoveAnswer{MovedTask: v}, err
	})
}

// taskDependency is add-dependency / remove-dependency: both halves of the
// edge in one mutation (specs.EditDependency).
func (d *Deps) taskDependency(do specs.DependencyEdit) mcptool.Handler {
	return func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskDependencyAnswer, error) {
			v, err := specs.EditDependency(sp, do, r.Args.String("task_id"), r.Args.String("target_id"), r.Args.String("dependency_type"))
			return TaskDependencyAnswer{DependencyView: v}, err
		})
	}
}

// taskAddRequirement appends a requirement (specs.AddRequirementView).
func (d *Deps) taskAddRequirement(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRequirementAnswer, error) {
		v, err := specs.AddRequirementView(sp, r.Args.String("task_id"), r.Args.String("requirement_type"), r.Args.String("text"))
		return TaskRequirementAnswer{AddedRequirement: v}, err
	})
}

// taskUpdateEstimate sets estimated_hours and/or complexity
// (specs.UpdateEstimateView).
func (d *Deps) taskUpdateEstimate(ctx context.Context, r *mcptool.Request) mcptool.Result {
	var hours *float64
	if h, ok := r.Args.Float("estimated_hours"); ok {
		hours = &h
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskEstimateAnswer, error) {
		v, err := specs.UpdateEstimateView(sp, r.Args.String("task_id"), hours, r.Args.String("complexity"))
		return TaskEstimateAnswer{Estimate: v}, err
	})
}

// taskUpdateMetadata sets the metadata object's keys (and foundry's
// custom_metadata's) and the direct fields (specs.MetadataFields;
// specs.UpdateMetadataView).
func (d *Deps) taskUpdateMetadata(ctx context.Context, r *mcptool.Request) mcptool.Result {
	updates := objectUpdates(r.Args, specs.MetadataFields, "custom_metadata", "metadata")
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataAnswer, error) {
		v, err := specs.UpdateMetadataView(sp, r.Args.String("task_id"), updates)
		return TaskMetadataAnswer{MetadataUpdate: v}, err
	})
}

// taskMetadataBatch applies the same updates (updates, foundry's
// update_metadata and direct fields, specs.BatchMetadataFields) to every
// task, subtask, verify and research node that passes all given filters
// (status or foundry's status_filter; parent or parent_filter: the node's
// subtree; pattern: RE2 over title and id; node_type), in one
// transaction (specs.UpdateMetadataBatch): any invalid update rejects the
// whole call. At least one filter is required; more than
// specs.MaxBatchMatches matches is VALIDATION_ERROR.
func (d *Deps) taskMetadataBatch(ctx context.Context, r *mcptool.Request) mcptool.Result {
	a := r.Args
	f := specs.BatchFilters{Status: firstOf(a, "status", "status_filter"), Parent: firstOf(a, "parent", "parent_filter"),
		Pattern: a.String("pattern"), NodeType: a.String("node_type")}
	tf, err := f.Filter()
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, ""))
	}
	updates := objectUpdates(a, specs.BatchMetadataFields, "update_metadata", "updates")
	if len(updates) == 0 {
		return mcptool.Fail(core.NewError(errcode.MissingRequired, "updates (or update_metadata, or a direct field) must set at least one metadata key.",
			map[string]any{"field": "updates", "action": "metadata-batch", "fields": specs.BatchMetadataFields}))
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataBatchAnswer, error) {
		scope := specs.RootID
		if f.Parent != "" {
			if sp.Node(f.Parent) == nil {
				return TaskMetadataBatchAnswer{}, specs.NodeNotFound(sp, "parent", f.Parent)
			}
			scope = f.Parent
		}
		b, err := specs.UpdateMetadataBatch(sp, scope, f, tf, updates)
		return TaskMetadataBatchAnswer{MetadataBatch: b}, err
	})
}

// objectUpdates binds a metadata update: the keys of the objects named
// (later objects win), then the direct fields given.
func objectUpdates(a mcptool.Args, fields []string, objects ...string) map[string]any {
	updates := map[string]any{}
	for _, name := range objects {
		for k, v := range a.Object(name) {
			updates[k] = v
		}
	}
	for _, k := range fields {
		if a.Has(k) {
			updates[k] = a[k]
		}
	}
	return updates
}

// firstOf is the first of the named string arguments that is set: specd's
// name, then foundry's alias.
func firstOf(a mcptool.Args, names ...string) string {
	for _, n := range names {
		if v := a.String(n); v != "" {
			return v
		}
	}
	return ""
}
