package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/specs"
)

// Batches for parallel agents: prepare-batch picks independent tasks,
// start-batch claims them together, complete-batch reports their outcomes,
// reset-batch frees claims that went stale.

// prepareBatchScan bounds how many actionable candidates prepare-batch
// examines, so a huge phase costs at most this many dependency checks.
const prepareBatchScan = 500

// batchCandidates returns up to limit actionable work leaves in next-task
// order: specs.Actionable, the same rule task next applies (next takes the
// first).
func batchCandidates(sp *specs.Spec, limit int) []*specs.Node {
	var out []*specs.Node
	for _, n := range specs.Actionable(sp) {
		out = append(out, n)
		if len(out) == limit {
			break
		}
	}
	return out
}

// pathsOverlap reports whether two repo-relative paths name the same file
// or one contains the other.
func pathsOverlap(a, b string) bool {
	a, b = path.Clean(strings.ReplaceAll(a, "\\", "/")), path.Clean(strings.ReplaceAll(b, "\\", "/"))
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// directlyLinked reports whether a and b have an edge of any kind between
// them, in either direction.
func directlyLinked(a, b *specs.Node) bool {
	for _, list := range [][]string{a.Dependencies.Blocks, a.Dependencies.BlockedBy, a.Dependencies.Depends} {
		if taskIndex(list, b.ID) >= 0 {
			return true
		}
	}
	for _, list := range [][]string{b.Dependencies.Blocks, b.Dependencies.BlockedBy, b.Dependencies.Depends} {
		if taskIndex(list, a.ID) >= 0 {
			return true
		}
	}
	return false
}

// taskPrepareBatch selects up to max_tasks (default 3) actionable tasks that
// agents can work on at the same time: the first candidate always; then
// each candidate that has no direct dependency edge with a selected one and
// whose file_path does not overlap a selected one's. A task without
// file_path runs alone: as the first candidate it is the whole batch,
// later it is skipped. With token_budget, selection stops before the
// answer's tasks would exceed it. Read-only: start the batch with
// start-batch.
func (d *Deps) taskPrepareBatch(ctx context.Context, r *Request) Result {
	maxTasks := r.Args.IntOr("max_tasks", 3)
	budget := r.Args.IntOr("token_budget", 0)
	return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		cands := batchCandidates(sp, prepareBatchScan)
		var selected []*specs.Node
		tasks := []map[string]any{}
		skipped := []map[string]any{}
		skip := func(n *specs.Node, reason string) {
			if len(skipped) < 20 {
				skipped = append(skipped, map[string]any{"task_id": n.ID, "reason": reason})
			}
		}
		stop, tokens := "candidates_exhausted", 0
	scan:
		for _, c := range cands {
			if len(selected) == maxTasks {
				stop = "max_tasks"
				break
			}
			fp := c.FilePath()
			if len(selected) > 0 {
				if fp == "" {
					skip(c, "no file_path: it runs alone")
					continue
				}
				for _, s := range selected {
					switch {
					case directlyLinked(c, s):
						skip(c, "has a dependency with "+s.ID)
						continue scan
					case pathsOverlap(fp, s.FilePath()):
						skip(c, "file_path overlaps "+s.ID)
						continue scan
					}
				}
			}
			item := batchItem(sp, c)
			if budget > 0 {
				b, _ := json.Marshal(item)
				if tokens+len(b)/4 > budget && len(selected) > 0 {
					stop = "token_budget"
					break
				}
				tokens += len(b) / 4
			}
			selected = append(selected, c)
			tasks = append(tasks, item)
			if fp == "" {
				stop = "runs_alone"
				break
			}
		}
		ids := make([]string, len(selected))
		for i, s := range selected {
			ids[i] = s.ID
		}
		data := map[string]any{"tasks": tasks, "count": len(tasks), "task_ids": ids, "skipped": skipped, "stopped_by": stop,
			"version": sp.Header.Version}
		if len(tasks) == 0 {
			nr := specs.NextTask(sp)
			data["spec_complete"] = nr.SpecComplete
			data["failed"] = failedData(sp.Header.SpecID, nr.Failed)
			data["hint"] = nr.Hint
		} else {
			data["hint"] = "Start them together with task start-batch(task_ids), one agent per task."
		}
		return data, nil, nil
	})
}

func batchItem(sp *specs.Spec, n *specs.Node) map[string]any {
	m := listItem(n, 0)
	m["description"] = taskNullable(n.Description())
	m["acceptance_criteria"] = taskStrings(n.MetaStrings("acceptance_criteria"))
	if p := taskPhase(sp, n); p != nil {
		m["phase_id"] = p.ID
	}
	return m
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
	return d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
		started := make([]map[string]any, 0, len(ids))
		opts := d.transitionOptions(r)
		for _, id := range ids {
			tr, err := specs.Start(sp, id, opts)
			if err != nil {
				if de, ok := err.(*specs.Error); ok {
					de.Details = withDetail(de.Details, "failed_task_id", id)
					if de.Code == errcode.TaskNotFound {
						de.Details["field"] = "task_ids"
					}
				}
				return nil, err
			}
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			n := sp.Node(id)
			started = append(started, map[string]any{"task_id": id, "from": tr.From, "status": n.Status,
				"started_at": n.MetaString("started_at"), "started_by": n.StartedBy()})
		}
		return map[string]any{"started": started, "count": len(started)}, nil
	})
}

// completionFields are the keys of one complete-batch item.
var completionFields = []string{"task_id", "success", "note", "actual_hours"}

type completion struct {
	TaskID      string
	Success     bool
	Note        string
	ActualHours *float64
}

// completionsOf binds complete-batch's items strictly: unknown keys and
// wrong types name completions[i].field.
func completionsOf(list []any) ([]completion, *core.Error) {
	out := make([]completion, 0, len(list))
	for i, raw := range list {
		m, _ := raw.(map[string]any)
		at := func(k string) string { return fmt.Sprintf("completions[%d].%s", i, k) }
		for k := range m {
			if taskIndex(completionFields, k) < 0 {
				return nil, core.NewError(errcode.UnknownParameter, fmt.Sprintf("%s is not a completion field.", at(k)),
					map[string]any{"field": at(k), "allowed": completionFields}).
					WithRecovery("server", map[string]any{"action": "schema", "tool_name": "task"}, fuzzy.Rank(k, completionFields, 5))
			}
		}
		var c completion
		var ok bool
		if c.TaskID, ok = m["task_id"].(string); !ok || c.TaskID == "" {
			return nil, core.NewError(errcode.MissingRequired, at("task_id")+" is required (a string).", map[string]any{"field": at("task_id"), "received": m["task_id"]})
		}
		if err := specs.CheckID(at("task_id"), c.TaskID); err != nil {
			return nil, core.AsError(err)
		}
		if c.Success, ok = m["success"].(bool); !ok {
			return nil, core.NewError(errcode.MissingRequired, at("success")+" is required (true or false).", map[string]any{"field": at("success"), "received": m["success"]})
		}
		if v, has := m["note"]; has && v != nil {
			if c.Note, ok = v.(string); !ok {
				return nil, core.NewError(errcode.InvalidFormat, at("note")+" must be a string.", map[string]any{"field": at("note"), "received": v})
			}
		}
		if v, has := m["actual_hours"]; has && v != nil {
			f, ok := v.(float64)
			if !ok || f < 0 {
				return nil, core.NewError(errcode.InvalidFormat, at("actual_hours")+" must be a number ≥ 0.", map[string]any{"field": at("actual_hours"), "received": v})
			}
			c.ActualHours = &f
		}
		out = append(out, c)
	}
	return out, nil
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
	failedItems := 0
	res := d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
		results := make([]map[string]any, 0, len(items))
		completed, failed := 0, 0
		failedItems = 0
		for _, c := range items {
			o := d.transitionOptions(r)
			o.ActualHours, o.Force = c.ActualHours, false // force here only takes over other sessions' tasks
			var tr specs.TransitionResult
			var err error
			if c.Success {
				o.Note = c.Note
				tr, err = specs.Complete(sp, c.TaskID, o)
			} else {
				o.Reason = c.Note
				tr, err = specs.Fail(sp, c.TaskID, o)
			}
			item := map[string]any{"task_id": c.TaskID, "success": c.Success}
			if err != nil {
				e := core.AsError(specError(err, sp.Header.SpecID))
				item["ok"], item["error_code"], item["error"] = false, e.Code, e.Message
				failedItems++
				results = append(results, item)
				continue
			}
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			n := sp.Node(c.TaskID)
			item["ok"], item["from"], item["status"] = true, tr.From, n.Status
			if c.Success {
				completed++
			} else {
				failed++
				item["retry_count"], _ = n.MetaInt("retry_count")
			}
			results = append(results, item)
		}
		return map[string]any{"results": results, "completed_count": completed, "failed_count": failed, "error_count": failedItems,
			"progress": map[string]any{"completed_tasks": sp.Header.CompletedTasks, "total_tasks": sp.Header.TotalTasks, "percentage": sp.Header.ProgressPercentage}}, nil
	})
	if res.Err == nil && failedItems > 0 {
		res.Meta = append(res.Meta, core.WithWarning("PARTIAL_FAILURE", core.SeverityWarning,
			fmt.Sprintf("%d of %d completions could not be applied; see data.results.", failedItems, len(items)),
			map[string]any{"failed": failedItems, "total": len(items)}))
	}
	return res
}

// taskResetBatch reopens every work leaf in progress for at least
// threshold_hours (default 24; a task without a readable started_at counts
// as stale), with a reason naming the threshold, in one transaction.
func (d *Deps) taskResetBatch(ctx context.Context, r *Request) Result {
	threshold, ok := r.Args.Float("threshold_hours")
	if !ok {
		threshold = 24
	}
	return d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
		now := d.clock()().UTC()
		seq, _ := taskWalk(sp, specs.RootID, "", 0)
		var stale []*specs.Node
		for n := range seq {
			if n.IsWorkLeaf() && n.Status == specs.StatusInProgress {
				stale = append(stale, n)
			}
		}
		reset := []map[string]any{}
		for _, n := range stale {
			hours := -1.0
			if t, ok := specs.ParseTime(n.MetaString("started_at")); ok {
				hours = now.Sub(t).Hours()
				if hours < threshold {
					continue
				}
			}
			entry := map[string]any{"task_id": n.ID, "started_at": n.MetaString("started_at"), "started_by": n.StartedBy(), "hours_in_progress": nil}
			if hours >= 0 {
				entry["hours_in_progress"] = float64(int(hours*100)) / 100
			}
			o := d.transitionOptions(r)
			o.Reason = fmt.Sprintf("reset-batch: in progress at least %g h without completion", threshold)
			o.TakeOver = true // freeing other sessions' stale claims is the point
			tr, err := specs.Reopen(sp, n.ID, o)
			if err != nil {
				return nil, err
			}
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			reset = append(reset, entry)
		}
		return map[string]any{"reset": reset, "count": len(reset), "threshold_hours": threshold}, nil
	})
}
