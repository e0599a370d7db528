package specs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Batches for parallel agents as answers: prepare-batch picks independent
// tasks (SelectBatch over Actionable, the rule next applies), start-batch
// claims them together, complete-batch reports their outcomes, reset-batch
// frees claims that went stale (ResetStale).

// BatchTask is one task prepare-batch offers, with what an agent needs to
// start it.
type BatchTask struct {
	TaskListItem
	Description        *string  `json:"description"`
	AcceptanceCriteria []string `json:"acceptance_criteria"`
	PhaseID            string   `json:"phase_id,omitempty"`
}

// BatchTaskOf is n as prepare-batch offers it.
func BatchTaskOf(s *Spec, n *Node) BatchTask {
	t := BatchTask{TaskListItem: ListItemOf(n), Description: nullable(n.Description()), AcceptanceCriteria: orEmpty(n.MetaStrings("acceptance_criteria"))}
	if p := PhaseOf(s, n); p != nil {
		t.PhaseID = p.ID
	}
	return t
}

// Batch is prepare-batch's selection: the tasks agents can work on at
// the same time, the candidates skipped and why the selection stopped. An
// empty batch also says why (next's view of the spec): whether the spec
// is complete, the failed tasks (each retried by RetryStep) and a hint.
type Batch struct {
	Tasks        []BatchTask
	Skipped      []BatchSkip
	StoppedBy    string
	SpecComplete bool
	Failed       []FailedTask
	Hint         string
}

// PrepareBatch selects up to o.MaxTasks tasks agents can work on at the
// same time (SelectBatch). Without o.Tokens a task's tokens are its
// BatchTask's JSON size / 4, so o.TokenBudget bounds the answer's tasks.
// Read-only: start-batch starts them.
func PrepareBatch(s *Spec, o BatchOptions) Batch {
	if o.Tokens == nil {
		o.Tokens = func(n *Node) int {
			b, _ := json.Marshal(BatchTaskOf(s, n))
			return len(b) / 4
		}
	}
	sel := SelectBatch(s, o)
	b := Batch{Tasks: make([]BatchTask, len(sel.Selected)), Skipped: orEmpty(sel.Skipped), StoppedBy: sel.StoppedBy}
	for i, n := range sel.Selected {
		b.Tasks[i] = BatchTaskOf(s, n)
	}
	if len(b.Tasks) == 0 {
		nr := NextTask(s)
		b.SpecComplete, b.Failed, b.Hint = nr.SpecComplete, nr.Failed, nr.Hint
	}
	return b
}

// StartedBatch lists the tasks start-batch started.
type StartedBatch struct {
	Started []StartedTask `json:"started"`
	Count   int           `json:"count"`
}

// StartedTask is one task start-batch started.
type StartedTask struct {
	TaskID    string `json:"task_id"`
	From      Status `json:"from"`
	Status    Status `json:"status"`
	StartedAt string `json:"started_at"`
	StartedBy string `json:"started_by"`
}

// CheckBatchIDs checks start-batch's task_ids before any read: at least
// one (MISSING_REQUIRED), none twice (INVALID_FORMAT naming the repeated
// id).
func CheckBatchIDs(ids []string) error {
	if len(ids) == 0 {
		return core.NewError(errcode.MissingRequired, "task_ids must name at least one task.", map[string]any{"field": "task_ids", "action": "start-batch"})
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return core.NewError(errcode.InvalidFormat, fmt.Sprintf("task_ids lists %s twice.", id), map[string]any{"field": "task_ids", "received": id, "constraint": "distinct task ids"})
		}
		seen[id] = true
	}
	return nil
}

// StartBatch starts every task of ids (StartAll), appending their journal
// entries to j: if any cannot start the error is that task's
// (details.failed_task_id) and the caller's transaction stores nothing.
func StartBatch(s *Spec, j JournalWriter, ids []string, o TransitionOptions) (StartedBatch, error) {
	trs, err := StartAll(s, ids, o)
	if err != nil {
		return StartedBatch{}, err
	}
	a := StartedBatch{Started: make([]StartedTask, len(trs)), Count: len(trs)}
	for i, tr := range trs {
		if tr.Entry != nil {
			j.Append(*tr.Entry)
		}
		n := s.Node(tr.TaskID)
		a.Started[i] = StartedTask{TaskID: tr.TaskID, From: tr.From, Status: n.Status, StartedAt: n.MetaString("started_at"), StartedBy: n.StartedBy()}
	}
	return a, nil
}

// CompletedBatch reports each completion of complete-batch.
type CompletedBatch struct {
	Results        []CompletionResult `json:"results"`
	CompletedCount int                `json:"completed_count"`
	FailedCount    int                `json:"failed_count"`
	ErrorCount     int                `json:"error_count"`
	Progress       ProgressBrief      `json:"progress"`
}

// CompletionResult is one completion's outcome: ok with the move made, or
// not ok with its error.
type CompletionResult struct {
	TaskID     string `json:"task_id"`
	Success    bool   `json:"success"`
	OK         bool   `json:"ok"`
	ErrorCode  string `json:"error_code,omitempty"`
	Error      string `json:"error,omitempty"`
	From       Status `json:"from,omitempty"`
	Status     Status `json:"status,omitempty"`
	RetryCount *int   `json:"retry_count,omitempty"` // failures: the task's retry_count
}

// CompleteBatch applies each completion (CompleteAll) and appends the
// journal entries of those that moved to j: success → completed, failure
// → failed (retry_count + 1). An item that cannot move is reported with
// ok:false and its error code and message; the others are still applied.
func CompleteBatch(s *Spec, j JournalWriter, items []Completion, o TransitionOptions) CompletedBatch {
	a := CompletedBatch{Results: make([]CompletionResult, len(items))}
	for i, oc := range CompleteAll(s, items, o) {
		a.Results[i] = a.record(s, j, items[i], oc)
	}
	a.Progress = ProgressOf(s)
	return a
}

// record journals one completion's transition and reports it, counted in a.
func (a *CompletedBatch) record(s *Spec, j JournalWriter, c Completion, oc CompletionOutcome) CompletionResult {
	res := CompletionResult{TaskID: c.TaskID, Success: c.Success}
	if oc.Err != nil {
		res.ErrorCode = errcode.Internal
		if de := (*core.Error)(nil); errors.As(oc.Err, &de) {
			res.ErrorCode, res.Error = de.Code, de.Message
		}
		a.ErrorCount++
		return res
	}
	if oc.Result.Entry != nil {
		j.Append(*oc.Result.Entry)
	}
	n := s.Node(c.TaskID)
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

// ResetBatch lists the stale tasks reset-batch moved back to pending.
type ResetBatch struct {
	Reset          []StaleTask `json:"reset"`
	Count          int         `json:"count"`
	ThresholdHours float64     `json:"threshold_hours"`
}

// ResetStaleBatch reopens every work leaf in progress for at least
// thresholdHours at now (ResetStale), appending the journal entries to j.
func ResetStaleBatch(s *Spec, j JournalWriter, now time.Time, thresholdHours float64, o TransitionOptions) (ResetBatch, error) {
	reset, entries, err := ResetStale(s, now, thresholdHours, o)
	if err != nil {
		return ResetBatch{}, err
	}
	for _, e := range entries {
		j.Append(e)
	}
	return ResetBatch{Reset: reset, Count: len(reset), ThresholdHours: thresholdHours}, nil
}
