package tools

import (
	"context"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// Batches for parallel agents: prepare-batch, start-batch, complete-batch
// and reset-batch. The selection, the claims and the outcomes are the
// domain's (specs/batchops.go); the handlers bind the arguments (strictly:
// complete-batch items name completions[i].field) and wrap.

// TaskPrepareBatchAnswer is prepare-batch's answer; an empty batch also
// says whether the spec is complete and which tasks failed (the same items
// next reports, each with its retry call).
type TaskPrepareBatchAnswer struct {
	SpecID       string            `json:"spec_id"`
	Tasks        []specs.BatchTask `json:"tasks"`
	Count        int               `json:"count"`
	TaskIDs      []string          `json:"task_ids"`
	Skipped      []specs.BatchSkip `json:"skipped"`
	StoppedBy    string            `json:"stopped_by"`
	Version      int64             `json:"version"`
	Hint         string            `json:"hint"`
	SpecComplete *bool             `json:"spec_complete,omitempty"`
	Failed       *[]FailedTaskItem `json:"failed,omitempty"`
}

// prepareBatchAnswer is the selection b of spec sp as the answer shows it.
func prepareBatchAnswer(sp *specs.Spec, b specs.Batch) TaskPrepareBatchAnswer {
	a := TaskPrepareBatchAnswer{SpecID: sp.Header.SpecID, Tasks: b.Tasks, Count: len(b.Tasks), TaskIDs: make([]string, len(b.Tasks)),
		Skipped: b.Skipped, StoppedBy: b.StoppedBy, Version: sp.Header.Version,
		Hint: "Start them together with task start-batch(task_ids), one agent per task."}
	for i, t := range b.Tasks {
		a.TaskIDs[i] = t.TaskID
	}
	if a.Count == 0 {
		failed := failedItems(sp.Header.SpecID, b.Failed)
		a.SpecComplete, a.Failed, a.Hint = &b.SpecComplete, &failed, b.Hint
	}
	return a
}

// TaskStartBatchAnswer lists the tasks start-batch started.
type TaskStartBatchAnswer struct {
	Mutation
	specs.StartedBatch
}

// TaskCompleteBatchAnswer reports each completion of complete-batch.
type TaskCompleteBatchAnswer struct {
	Mutation
	specs.CompletedBatch
}

// TaskResetBatchAnswer lists the stale tasks reset-batch moved back to
// pending.
type TaskResetBatchAnswer struct {
	Mutation
	specs.ResetBatch
}

// taskPrepareBatch selects up to max_tasks (default 3) tasks agents can
// work on at the same time, within token_budget (specs.PrepareBatch).
func (d *Deps) taskPrepareBatch(ctx context.Context, _ *mcptool.Request, a taskPrepareBatchArgs) mcptool.Result {
	o := specs.BatchOptions{MaxTasks: intOr(a.MaxTasks, 3), TokenBudget: a.TokenBudget}
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (TaskPrepareBatchAnswer, error) {
		return prepareBatchAnswer(sp, specs.PrepareBatch(sp, o)), nil
	})
}

// taskStartBatch starts every task of task_ids in one transaction
// (specs.StartBatch): if any cannot start (unknown, blocked, started by
// another session, wrong status) the call fails with that task's error
// (details.failed_task_id) and nothing is stored.
func (d *Deps) taskStartBatch(ctx context.Context, r *mcptool.Request, a taskStartBatchArgs) mcptool.Result {
	ids := a.TaskIDs
	if err := specs.CheckBatchIDs(ids); err != nil {
		return mcptool.Fail(withSpecNextCall(err, ""))
	}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (TaskStartBatchAnswer, error) {
		b, err := specs.StartBatch(sp, j, ids, d.transitionOptions(r, transition{Force: a.Force}))
		return TaskStartBatchAnswer{StartedBatch: b}, err
	})
}

// completionFields are the keys of one complete-batch item.
var completionFields = []string{"task_id", "success", "note", "completion_note", "actual_hours"}

// completionsOf binds complete-batch's items strictly: unknown keys and
// wrong types name completions[i].field.
func completionsOf(list []any) ([]specs.Completion, *core.Error) {
	out := make([]specs.Completion, 0, len(list))
	for i, raw := range list {
		c, err := completionOf(i, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// completionOf binds completions[i] (objectArg): task_id (an id) and
// success are required.
func completionOf(i int, raw any) (specs.Completion, *core.Error) {
	m, _ := raw.(map[string]any)
	o := mcptool.BindObject(m, fmt.Sprintf("completions[%d]", i), "task", completionFields)
	var c specs.Completion
	var ok bool
	if c.TaskID, _ = m["task_id"].(string); c.TaskID == "" {
		o.Required("task_id", "a string")
	}
	if o.Err == nil {
		if err := specs.CheckID(o.At("task_id"), c.TaskID); err != nil {
			return c, core.AsError(err)
		}
	}
	if c.Success, ok = m["success"].(bool); !ok {
		o.Required("success", "true or false")
	}
	c.Note, c.ActualHours = o.Str("note"), o.Hours("actual_hours")
	if c.Note == "" { // foundry's name for the note
		c.Note = o.Str("completion_note")
	}
	return c, o.Err
}

// taskCompleteBatch applies each completion in one transaction
// (specs.CompleteBatch): success → completed (note as the completion
// note), failure → failed (retry_count + 1, note as the failure reason).
// An item that cannot move (unknown task, wrong status, blocked, held by
// another session without force: CONFLICT) is reported in its result with
// ok:false and its error, and the others are still applied; then a
// PARTIAL_FAILURE warning is set. force takes over other sessions' tasks;
// it never skips prerequisites here.
func (d *Deps) taskCompleteBatch(ctx context.Context, r *mcptool.Request, a taskCompleteBatchArgs) mcptool.Result {
	items, berr := completionsOf(a.Completions)
	if berr != nil {
		return mcptool.Fail(berr)
	}
	if len(items) == 0 {
		return mcptool.Fail(core.FieldError(errcode.MissingRequired, "completions must hold at least one item.",
			core.FieldDetail{Field: "completions", Action: "complete-batch"}))
	}
	res := mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (TaskCompleteBatchAnswer, error) {
		return TaskCompleteBatchAnswer{CompletedBatch: specs.CompleteBatch(sp, j, items, d.transitionOptions(r, transition{Force: a.Force}))}, nil
	})
	if a, ok := res.Data.(TaskCompleteBatchAnswer); ok && a.ErrorCount > 0 {
		res.Meta = append(res.Meta, core.WithWarning("PARTIAL_FAILURE", core.SeverityWarning,
			fmt.Sprintf("%d of %d completions could not be applied; see data.results.", a.ErrorCount, len(items)),
			core.DetailsOf(batchFailureContext{Failed: a.ErrorCount, Total: len(items)})))
	}
	return res
}

// taskResetBatch reopens the tasks of task_ids (foundry's: whatever their
// age), or else every work leaf in progress for at least threshold_hours
// (default 24), in one transaction (specs.ResetBatchOf).
func (d *Deps) taskResetBatch(ctx context.Context, r *mcptool.Request, a taskResetBatchArgs) mcptool.Result {
	threshold := 24.0
	if a.ThresholdHours != nil {
		threshold = *a.ThresholdHours
	}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (TaskResetBatchAnswer, error) {
		b, err := specs.ResetBatchOf(sp, j, d.clock()().UTC(), a.TaskIDs, threshold, d.transitionOptions(r, transition{}))
		return TaskResetBatchAnswer{ResetBatch: b}, err
	})
}
