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
func (d *Deps) taskAdd(ctx context.Context, r *mcptool.Request, a taskAddArgs) mcptool.Result {
	in := specs.TaskInput{
		Type: specs.NodeType(a.TaskType), Title: a.Title, Description: a.Description,
		TaskCategory: a.TaskCategory, FilePath: a.FilePath, AcceptanceCriteria: orEmpty(a.AcceptanceCriteria),
		Complexity: a.Complexity, VerificationType: a.VerificationType, Command: a.Command,
		Expected: a.Expected, BlockingMode: a.BlockingMode, ResearchType: a.ResearchType,
		Query: a.Query, Metadata: a.Metadata, EstimatedHours: a.EstimatedHours, Position: a.Position,
	}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskAddAnswer, error) {
		v, err := specs.AddTaskView(sp, a.Parent, in)
		return TaskAddAnswer{AddedTask: v}, err
	})
}

// taskRemove removes a node, with cascade its children (specs.RemoveTaskView).
func (d *Deps) taskRemove(ctx context.Context, r *mcptool.Request, a taskRemoveArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRemoveAnswer, error) {
		v, err := specs.RemoveTaskView(sp, a.TaskID, a.Cascade)
		return TaskRemoveAnswer{RemovedTasks: v}, err
	})
}

// taskMove moves a node to parent/position (specs.MoveTaskView).
func (d *Deps) taskMove(ctx context.Context, r *mcptool.Request, a taskMoveArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMoveAnswer, error) {
		v, err := specs.MoveTaskView(sp, a.TaskID, a.Parent, a.Position)
		return TaskMoveAnswer{MovedTask: v}, err
	})
}

// taskDependency is add-dependency / remove-dependency: both halves of the
// edge in one mutation (specs.EditDependency).
func (d *Deps) taskDependency(do specs.DependencyEdit) func(context.Context, *mcptool.Request, taskDependencyArgs) mcptool.Result {
	return func(ctx context.Context, r *mcptool.Request, a taskDependencyArgs) mcptool.Result {
		return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskDependencyAnswer, error) {
			v, err := specs.EditDependency(sp, do, a.TaskID, a.TargetID, a.DependencyType)
			return TaskDependencyAnswer{DependencyView: v}, err
		})
	}
}

// taskAddRequirement appends a requirement (specs.AddRequirementView).
func (d *Deps) taskAddRequirement(ctx context.Context, r *mcptool.Request, a taskRequirementArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskRequirementAnswer, error) {
		v, err := specs.AddRequirementView(sp, a.TaskID, a.RequirementType, a.Text)
		return TaskRequirementAnswer{AddedRequirement: v}, err
	})
}

// taskUpdateEstimate sets estimated_hours and/or complexity
// (specs.UpdateEstimateView).
func (d *Deps) taskUpdateEstimate(ctx context.Context, r *mcptool.Request, a taskEstimateArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskEstimateAnswer, error) {
		v, err := specs.UpdateEstimateView(sp, a.TaskID, a.EstimatedHours, a.Complexity)
		return TaskEstimateAnswer{Estimate: v}, err
	})
}

// taskUpdateMetadata sets the metadata object's keys (and foundry's
// custom_metadata's) and the direct fields (specs.MetadataFields;
// specs.UpdateMetadataView).
func (d *Deps) taskUpdateMetadata(ctx context.Context, r *mcptool.Request, a taskMetadataArgs) mcptool.Result {
	updates := a.updates()
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataAnswer, error) {
		v, err := specs.UpdateMetadataView(sp, a.TaskID, updates)
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
func (d *Deps) taskMetadataBatch(ctx context.Context, r *mcptool.Request, a taskMetadataBatchArgs) mcptool.Result {
	f := a.filters()
	tf, err := f.Filter()
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, ""))
	}
	updates := a.updates()
	if len(updates) == 0 {
		return mcptool.Fail(core.NewErrorOf(errcode.MissingRequired, "updates (or update_metadata, or a direct field) must set at least one metadata key.",
			fieldsDetail{core.FieldDetail{Field: "updates", Action: "metadata-batch"}, specs.BatchMetadataFields}))
	}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (TaskMetadataBatchAnswer, error) {
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

// orEmpty is l, or an empty list when l is nil (absent).
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
