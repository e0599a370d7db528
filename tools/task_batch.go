package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/specs"
)

// Batches for parallel agents: prepare-batch picks independent tasks
// (specs.SelectBatch), start-batch claims them together, complete-batch
// reports their outcomes, reset-batch frees claims that went stale
// (specs.ResetStale).

// BatchTask is one task prepare-batch offers, with what an agent needs to
// start it.
type BatchTask struct {
	TaskListItem
	Description        *string  `json:"description"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	PhaseID            string   `json:"phase_id,omitempty"`
}

func batchTask(sp *specs.Spec, n *specs.Node) BatchTask {
	t := BatchTask{TaskListItem: listItem(n), Description: nullable(n.Description()), AcceptanceCriteria: orEmpty(n.MetaStrings("acceptance_criteria"))}
	if p := specs.PhaseOf(sp, n); p != nil {
		t.PhaseID = p.ID
	}
	return t
}

// TaskPrepareBatchAnswer is prepare-batch's answer; an empty batch also says
// whether the spec is complete and which tasks failed.
type TaskPrepareBatchAnswer struct {
	SpecID       string            `json:"spec_id"`
	Tasks        []BatchTask       `json:"tasks"`
	Count        int               `json:"count"`
	TaskIDs      []string          `json:"task_ids"`
	Skipped      []specs.BatchSkip `json:"skipped"`
	StoppedBy    string            `json:"stopped_by"`
	Version      int64             `json:"version"`
	Hint         string            `json:"hint"`
	SpecComplete *bool             `json:"spec_complete,omitempty"`
	Failed       *[]FailedTaskItem `json:"failed,omitempty"`
}

// taskPrepareBatch selects up to max_tasks (default 3) tasks agents can
// work on at the same time (specs.SelectBatch, over specs.Actionable: the
// rule next applies). With token_budget, selection stops before the
// answer's tasks would exceed it. Read-only: start the batch with
// start-batch.
func (d *Deps) taskPrepareBatch(ctx context.Context, r *Request) Result {
	o := specs.BatchOptions{MaxTasks: r.Args.IntOr("max_tasks", 3), TokenBudget: r.Args.IntOr("token_budget", 0)}
	return answer(readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (TaskPrepareBatchAnswer, error) {
		o.Tokens = func(n *specs.Node) int {
			b, _ := json.Marshal(batchTask(sp, n))
			return len(b) / 4
		}
		sel := specs.SelectBatch(sp, o)
		a := TaskPrepareBatchAnswer{SpecID: sp.Header.SpecID, Tasks: make([]BatchTask, len(sel.Selected)), TaskIDs: make([]string, len(sel.Selected)),
			Skipped: orEmpty(sel.Skipped), StoppedBy: sel.StoppedBy, Version: sp.Header.Version,
			Hint: "Start them together with task start-batch(task_ids), one agent per task."}
		for i, n := range sel.Selected {
			a.Tasks[i], a.TaskIDs[i] = batchTask(sp, n), n.ID
		}
		a.Count = len(a.Tasks)
		if a.Count == 0 {
			nr := specs.NextTask(sp)
			failed := failedItems(sp.Header.SpecID, nr.Failed)
			a.SpecComplete, a.Failed, a.Hint = &nr.SpecComplete, &failed, nr.Hint
		}
		return a, nil
	}))
}

// TaskStartBatchAnswer lists the tasks start-batch started.
type TaskStartBatchAnswer struct {
	Mutation
	Started []StartedTask `json:"started"`
	Count   int           `json:"count"`
}

// StartedTask is one task start-batch started.
type StartedTask struct {
	TaskID    string       `json:"task_id"`
	From      specs.Status `json:"from"`
	Status    specs.Status `json:"status"`
	StartedAt string       `json:"started_at"`
	StartedBy string       `json:"started_by"`
}

// taskStartBatch starts every task of task_ids in one transaction: if any
// cannot start (unknown, blocked, started by another session, wrong
// status) the call fails with that task's error (details.failed_task_id)
// and nothing is stored.
func (d *Deps) taskStartBatch(ctx context.Context, r *Request) Result {
	ids := r.Args.Strings("task_ids")
	if len(ids) == 0 {
		return Fail(core.NewError(errcode.MissingRequired, "task_ids must name at least one task.", map[string]any{"field": "task_ids", "action": "start-batch"}))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			return Fail(core.NewError(errcode.InvalidFormat, fmt.Sprintf("task_ids lists %s twice.", id),
				map[string]any{"field": "task_ids", "received": id, "constraint": "distinct task ids"}))
		}
		seen[id] = true
	}
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (TaskStartBatchAnswer, error) {
		trs, err := specs.StartAll(sp, ids, d.transitionOptions(r))
		if err != nil {
			return TaskStartBatchAnswer{}, err
		}
		a := TaskStartBatchAnswer{Started: make([]StartedTask, len(trs)), Count: len(trs)}
		for i, tr := range trs {
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			n := sp.Node(tr.TaskID)
			a.Started[i] = StartedTask{TaskID: tr.TaskID, From: tr.From, Status: n.Status, StartedAt: n.MetaString("started_at"), StartedBy: n.StartedBy()}
		}
		return a, nil
	}))
}

// completionFields are the keys of one complete-batch item.
var completionFields = []string{"task_id", "success", "note", "actual_hours"}

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

// completionOf binds completions[i].
func completionOf(i int, raw any) (specs.Completion, *core.Error) {
	m, _ := raw.(map[string]any)
	at := func(k string) string { return fmt.Sprintf("completions[%d].%s", i, k) }
	var c specs.Completion
	for k := range m {
		if !slices.Contains(completionFields, k) {
			return c, core.NewError(errcode.UnknownParameter, fmt.Sprintf("%s is not a completion field.", at(k)),
				map[string]any{"field": at(k), "allowed": completionFields}).
				WithRecovery("server", map[string]any{"action": "schema", "tool_name": "task"}, fuzzy.Rank(k, completionFields, 5))
		}
	}
	var ok bool
	if c.TaskID, ok = m["task_id"].(string); !ok || c.TaskID == "" {
		return c, core.NewError(errcode.MissingRequired, at("task_id")+" is required (a string).", map[string]any{"field": at("task_id"), "received": m["task_id"]})
	}
	if err := specs.CheckID(at("task_id"), c.TaskID); err != nil {
		return c, core.AsError(err)
	}
	if c.Success, ok = m["success"].(bool); !ok {
		return c, core.NewError(errcode.MissingRequired, at("success")+" is required (true or false).", map[string]any{"field": at("success"), "received": m["success"]})
	}
	if v, has := m["note"]; has && v != nil {
		if c.Note, ok = v.(string); !ok {
			return c, core.NewError(errcode.InvalidFormat, at("note")+" must be a string.", map[string]any{"field": at("note"), "received": v})
		}
	}
	if v, has := m["actual_hours"]; has && v != nil {
		f, ok := v.(float64)
		if !ok || f < 0 {
			return c, core.NewError(errcode.InvalidFormat, at("actual_hours")+" must be a number ≥ 0.", map[string]any{"field": at("actual_hours"), "received": v})
		}
		c.ActualHours = &f
	}
	return c, nil
}

// TaskCompleteBatchAnswer reports each completion of complete-batch.
type TaskCompleteBatchAnswer struct {
	Mutation
	Results        []CompletionResult `json:"results"`
	CompletedCount int                `json:"completed_count"`
	FailedCount    int                `json:"failed_count"`
	ErrorCount     int                `json:"error_count"`
	Progress       ProgressBrief      `json:"progress"`
}

// CompletionResult is one completion's outcome: ok with the move made, or
// not ok with its error.
type CompletionResult struct {
	TaskID     string       `json:"task_id"`
	Success    bool         `json:"success"`
	OK         bool         `json:"ok"`
	ErrorCode  string       `json:"error_code,omitempty"`
	Error      string       `json:"error,omitempty"`
	From       specs.Status `json:"from,omitempty"`
	Status     specs.Status `json:"status,omitempty"`
	RetryCount *int         `json:"retry_count,omitempty"` // failures: the task's retry_count
}

// taskCompleteBatch applies each completion in one transaction: success →
// Complete (note as the completion note), failure → Fail (in_progress →
// failed, retry_count + 1, note as the failure reason). An item that cannot
// move (unknown task, wrong status, blocked, held by another session
// without force: CONFLICT) is reported in its result with ok:false and its
// error, and the others are still applied; then a PARTIAL_FAILURE warning
// is set. force takes over other sessions' tasks; it never skips
// prerequisites here.
func (d *Deps) taskCompleteBatch(ctx context.Context, r *Request) Result {
	items, berr := completionsOf(r.Args.List("completions"))
	if berr != nil {
		return Fail(berr)
	}
	if len(items) == 0 {
		return Fail(core.NewError(errcode.MissingRequired, "completions must hold at least one item.", map[string]any{"field": "completions", "action": "complete-batch"}))
	}
	res := answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (TaskCompleteBatchAnswer, error) {
		a := TaskCompleteBatchAnswer{Results: make([]CompletionResult, len(items))}
		for i, oc := range specs.CompleteAll(sp, items, d.transitionOptions(r)) {
			a.Results[i] = completionResult(sp, j, items[i], oc, &a)
		}
		a.Progress = specProgress(sp)
		return a, nil
	}))
	if a, ok := res.Data.(TaskCompleteBatchAnswer); ok && a.ErrorCount > 0 {
		res.Meta = append(res.Meta, core.WithWarning("PARTIAL_FAILURE", core.SeverityWarning,
			fmt.Sprintf("%d of %d completions could not be applied; see data.results.", a.ErrorCount, len(items)),
			map[string]any{"failed": a.ErrorCount, "total": len(items)}))
	}
	return res
}

// completionResult journals one completion's transition and reports it,
// counted in a.
func completionResult(sp *specs.Spec, j specs.JournalWriter, c specs.Completion, oc specs.CompletionOutcome, a *TaskCompleteBatchAnswer) CompletionResult {
	res := CompletionResult{TaskID: c.TaskID, Success: c.Success}
	if oc.Err != nil {
		e := core.AsError(specError(oc.Err, sp.Header.SpecID))
		res.ErrorCode, res.Error = e.Code, e.Message
		a.ErrorCount++
		return res
	}
	if oc.Result.Entry != nil {
		j.Append(*oc.Result.Entry)
	}
	n := sp.Node(c.TaskID)
	res.OK, res.From, res.Status = true, oc.Result.From, n.Status
	if c.Success {
		a.CompletedCount++
	} else {
		a.FailedCount++
		rc, _ := n.MetaInt("retry_count")
		res.RetryCount = &rc
	}
	return res
}

// TaskResetBatchAnswer lists the stale tasks reset-batch moved back to
// pending.
type TaskResetBatchAnswer struct {
	Mutation
	Reset          []specs.StaleTask `json:"reset"`
	Count          int               `json:"count"`
	ThresholdHours float64           `json:"threshold_hours"`
}

// taskResetBatch reopens every work leaf in progress for at least
// threshold_hours (default 24; specs.ResetStale), in one transaction.
func (d *Deps) taskResetBatch(ctx context.Context, r *Request) Result {
	threshold, ok := r.Args.Float("threshold_hours")
	if !ok {
		threshold = 24
	}
	return answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (TaskResetBatchAnswer, error) {
		reset, entries, err := specs.ResetStale(sp, d.clock()().UTC(), threshold, d.transitionOptions(r))
		if err != nil {
			return TaskResetBatchAnswer{}, err
		}
		for _, e := range entries {
			j.Append(e)
		}
		return TaskResetBatchAnswer{Reset: reset, Count: len(reset), ThresholdHours: threshold}, nil
	}))
}
