package tools

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// The work loop: next, prepare, info, check-deps and the status transitions.

// transitionOptions binds the transition parameters of a call. The session
// id is what start records as started_by and what decides CONFLICT: a
// transition of a task another session holds is refused unless force
// (TakeOver); for complete, force also ignores unfinished prerequisites.
func (d *Deps) transitionOptions(r *Request) specs.TransitionOptions {
	o := specs.TransitionOptions{
		SessionID: r.Session.ID, Author: author(r), Force: r.Args.Bool("force"), TakeOver: r.Args.Bool("force"), Strict: d.StrictComplete,
		Note: r.Args.String("completion_note"), Reason: r.Args.String("reason"), BlockerType: r.Args.String("blocker_type"),
		Ticket: r.Args.String("ticket"), Resolution: r.Args.String("resolution"),
	}
	if h, ok := r.Args.Float("actual_hours"); ok {
		o.ActualHours = &h
	}
	return o
}

// transitionFn is a domain transition (specs.Start, specs.Complete, …).
type transitionFn func(sp *specs.Spec, id string, o specs.TransitionOptions) (specs.TransitionResult, error)

// taskTransition is the handler of a transition action over task_id.
func (d *Deps) taskTransition(do transitionFn) Handler {
	return func(ctx context.Context, r *Request) Result { return d.transition(ctx, r, do) }
}

// transition runs one transition of task_id as one stored mutation: the
// domain's journal entry is appended in the same transaction, rollups are
// updated by the domain, and the domain's warnings (already completed,
// already started by this session, forced completion) become meta warnings.
// The answer is {task_id, from, to, status, task, progress}.
func (d *Deps) transition(ctx context.Context, r *Request, do transitionFn) Result {
	id := r.Args.String("task_id")
	var warnings []string
	res := d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
		tr, err := do(sp, id, d.transitionOptions(r))
		if err != nil {
			return nil, err
		}
		if tr.Entry != nil {
			j.Append(*tr.Entry)
		}
		warnings = tr.Warnings
		return transitionData(sp, tr), nil
	})
	if res.Err == nil {
		for _, w := range warnings {
			res.Meta = append(res.Meta, warn("TASK_UNCHANGED", w, map[string]any{"task_id": id}))
		}
	}
	return res
}

func transitionData(sp *specs.Spec, tr specs.TransitionResult) map[string]any {
	n := sp.Node(tr.TaskID)
	data := map[string]any{"task_id": tr.TaskID, "from": tr.From, "to": tr.To, "status": n.Status, "task": taskFull(n),
		"progress": map[string]any{"completed_tasks": sp.Header.CompletedTasks, "total_tasks": sp.Header.TotalTasks,
			"percentage": sp.Header.ProgressPercentage}}
	if p := taskPhase(sp, n); p != nil {
		data["phase"] = taskPhaseBrief(p)
	}
	return data
}

// taskNext answers the next actionable task (specs.NextTask). With claim it
// runs as a mutation that also starts the task in the same transaction, so
// concurrent claimers (other sessions, other processes) each get a
// different task. Nothing actionable is a success with found:false, the
// blocked and in-progress tasks, spec_complete and a hint; when work
// remains but none is actionable a NO_ACTIONABLE_TASK warning says so.
func (d *Deps) taskNext(ctx context.Context, r *Request) Result {
	var found, complete bool
	answer := func(sp *specs.Spec, nr specs.NextResult) map[string]any {
		found, complete = nr.Found, nr.SpecComplete
		if !nr.Found {
			return notFoundData(sp, nr)
		}
		n := sp.Node(nr.TaskID)
		md := n.Metadata
		if md == nil {
			md = map[string]any{}
		}
		return map[string]any{"found": true, "task_id": n.ID, "title": n.Title, "type": n.Type, "status": n.Status,
			"parent": n.Parent, "phase_id": nr.PhaseID, "metadata": md, "spec_complete": false}
	}
	var res Result
	if !r.Args.Bool("claim") {
		res = d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
			data := answer(sp, specs.NextTask(sp))
			data["claimed"] = false
			data["version"] = sp.Header.Version
			return data, nil, nil
		})
	} else {
		res = d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
			nr := specs.NextTask(sp)
			if !nr.Found {
				data := answer(sp, nr)
				data["claimed"] = false
				return data, nil
			}
			tr, err := specs.Start(sp, nr.TaskID, d.transitionOptions(r))
			if err != nil {
				return nil, err
			}
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			data := answer(sp, nr)
			data["claimed"] = true
			return data, nil
		})
	}
	if res.Err == nil && !found && !complete {
		res.Meta = append(res.Meta, warn("NO_ACTIONABLE_TASK",
			"No task can start now: see data.failed (retry with its retry call), data.blocked and data.in_progress.", nil))
	}
	return res
}

// notFoundData is next's answer when nothing is actionable: blocked tasks
// with what they wait on, failed tasks with the call that retries each,
// tasks in progress with who started them, and the next call to make (a
// failed task's retry comes first: it is the only work this agent can
// unlock by itself).
func notFoundData(sp *specs.Spec, nr specs.NextResult) map[string]any {
	inProgress := make([]map[string]any, 0, len(nr.InProgress))
	for _, id := range nr.InProgress {
		if n := sp.Node(id); n != nil {
			inProgress = append(inProgress, map[string]any{"task_id": id, "title": n.Title, "started_by": n.StartedBy(), "started_at": n.MetaString("started_at")})
		}
	}
	specID := sp.Header.SpecID
	failed := failedData(specID, nr.Failed)
	data := map[string]any{"found": false, "spec_complete": nr.SpecComplete, "blocked": nr.Blocked, "failed": failed, "in_progress": inProgress, "hint": nr.Hint}
	switch {
	case nr.SpecComplete:
		data["next_call"] = map[string]any{"tool": "lifecycle", "args": map[string]any{"action": "complete", "spec_id": specID}}
	case len(failed) > 0:
		data["next_call"] = failed[0]["retry"]
	case len(nr.Blocked) > 0:
		data["next_call"] = map[string]any{"tool": "task", "args": map[string]any{"action": "check-deps", "spec_id": specID, "task_id": nr.Blocked[0].TaskID}}
	case len(nr.InProgress) > 0:
		data["next_call"] = map[string]any{"tool": "task", "args": map[string]any{"action": "info", "spec_id": specID, "task_id": nr.InProgress[0]}}
	}
	return data
}

// failedData lists failed tasks, each with retry: the call that retries it
// as given (task reopen with a reason: back to pending, retry_count kept,
// so that next and prepare-batch offer it again).
func failedData(specID string, failed []specs.FailedTask) []map[string]any {
	out := make([]map[string]any, 0, len(failed))
	for _, f := range failed {
		m := map[string]any{"task_id": f.TaskID, "retry_count": f.RetryCount,
			"retry": map[string]any{"tool": "task", "args": map[string]any{"action": "reopen", "spec_id": specID, "task_id": f.TaskID, "reason": "retry after failure"}}}
		if f.Reason != "" {
			m["failure_reason"] = f.Reason
		}
		out = append(out, m)
	}
	return out
}

// prepareExcerptChars bounds the previous sibling's journal excerpt.
const prepareExcerptChars = 500

// taskPrepare assembles the context bundle for task_id (default: the next
// task, not claimed): the task, its dependency check, the previous sibling
// with its latest journal excerpt, the parent, the phase with its progress,
// the task's last 3 journal entries (read through the journal's task index)
// and hints.
func (d *Deps) taskPrepare(ctx context.Context, r *Request) Result {
	var digestIDs []string
	res := d.read(ctx, r, func(sp *specs.Spec, j specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		id := r.Args.String("task_id")
		if id == "" {
			nr := specs.NextTask(sp)
			if !nr.Found {
				return notFoundData(sp, nr), nil, nil
			}
			id = nr.TaskID
		}
		n := sp.Node(id)
		if n == nil || id == specs.RootID {
			return nil, nil, taskNodeNotFound(sp, r.Args.String("spec_id"), "task_id", id)
		}
		deps := checkDeps(sp, n)
		var prev, parent *specs.Node
		if p := sp.Node(n.Parent); p != nil {
			parent = p
			if i := taskIndex(p.Children, id); i > 0 {
				prev = sp.Node(p.Children[i-1])
			}
		}
		// The task's newest entries and the previous sibling's newest one,
		// through the journal's task index.
		own, _, err := j.TaskEntries(id, 0, 3, nil)
		if err != nil {
			return nil, nil, err
		}
		var prevEntry *specs.JournalEntry
		if prev != nil {
			last, _, err := j.TaskEntries(prev.ID, 0, 1, nil)
			if err != nil {
				return nil, nil, err
			}
			if len(last) == 1 {
				prevEntry = &last[0]
			}
		}
		bundle := map[string]any{"previous_sibling": nil, "parent": nil, "phase": nil, "journal": own}
		if prev != nil {
			ps := taskBrief(prev)
			ps["journal_excerpt"] = nil
			if prevEntry != nil {
				ps["journal_excerpt"] = map[string]any{"seq": prevEntry.Seq, "timestamp": prevEntry.Timestamp, "entry_type": prevEntry.EntryType,
					"title": prevEntry.Title, "content": excerpt(prevEntry.Content, prepareExcerptChars)}
			}
			bundle["previous_sibling"] = ps
		}
		if parent != nil && (parent.Type == specs.TypeTask || parent.Type == specs.TypeSubtask || parent.Type == specs.TypeGroup) {
			bundle["parent"] = taskBrief(parent)
		}
		if ph := taskPhase(sp, n); ph != nil {
			bundle["phase"] = taskPhaseBrief(ph)
		}
		if n.Type == specs.TypeResearch {
			digestIDs = digestIDsOf(n.Metadata)
		}
		data := map[string]any{"found": true, "task_id": id, "task": taskFull(n), "dependencies": deps, "context": bundle,
			"hints": prepareHints(n, deps, prev), "version": sp.Header.Version}
		return data, nil, nil
	})
	// A research node's linked digests (summaries, key points, top evidence)
	// come from their own reads, after the spec's transaction has ended.
	if res.Err == nil && d.Research != nil && len(digestIDs) > 0 {
		if data, ok := res.Data.(map[string]any); ok {
			if bundle, ok := data["context"].(map[string]any); ok {
				bundle["digests"] = d.digestSummaries(ctx, digestIDs)
			}
		}
	}
	return res
}

func prepareHints(n *specs.Node, deps map[string]any, prev *specs.Node) []string {
	hints := []string{}
	if can, _ := deps["can_start"].(bool); !can && n.Status != specs.StatusCompleted {
		hints = append(hints, "Unfinished prerequisites: "+strings.Join(deps["unfinished"].([]string), ", ")+"; finish them first (task check-deps lists them).")
	}
	switch n.Status {
	case specs.StatusPending, specs.StatusFailed:
		hints = append(hints, "Start it before working: task start (or task next with claim:true).")
	case specs.StatusBlocked:
		hints = append(hints, "It is blocked ("+n.MetaString("blocker_description")+"): task unblock once resolved.")
	case specs.StatusCompleted:
		hints = append(hints, "It is already completed: task reopen with a reason to redo it.")
	}
	if n.Type == specs.TypeVerify {
		hints = append(hints, "A verify step: run its command (verification execute) or record your result with verification add, then task complete.")
	} else if n.Type == specs.TypeTask || n.Type == specs.TypeSubtask {
		if n.FilePath() == "" {
			hints = append(hints, "No file_path: set one (task update-metadata) so prepare-batch can run it in parallel with others.")
		}
		if len(n.MetaStrings("acceptance_criteria")) == 0 && len(n.Requirements()) == 0 {
			hints = append(hints, "No acceptance criteria: add some (task add-requirement) so done is checkable.")
		}
	}
	if prev != nil && prev.Status == specs.StatusCompleted && prev.NeedsJournaling() {
		hints = append(hints, "The previous sibling "+prev.ID+" still needs a journal entry: journal add with its task_id.")
	}
	return hints
}

// excerpt cuts s to at most n characters.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// taskInfo answers one node with whether it can start.
func (d *Deps) taskInfo(ctx context.Context, r *Request) Result {
	return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		id := r.Args.String("task_id")
		n := sp.Node(id)
		if n == nil || id == specs.RootID {
			return nil, nil, taskNodeNotFound(sp, r.Args.String("spec_id"), "task_id", id)
		}
		b := taskStrings(specs.Blockers(sp, id))
		return map[string]any{"task_id": id, "task": taskFull(n), "can_start": len(b) == 0, "blockers": b, "version": sp.Header.Version}, nil, nil
	})
}

// taskCheckDeps answers a node's prerequisites, inherited ones included.
func (d *Deps) taskCheckDeps(ctx context.Context, r *Request) Result {
	return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
		id := r.Args.String("task_id")
		n := sp.Node(id)
		if n == nil || id == specs.RootID {
			return nil, nil, taskNodeNotFound(sp, r.Args.String("spec_id"), "task_id", id)
		}
		data := checkDeps(sp, n)
		data["task_id"], data["status"] = id, n.Status
		return data, nil, nil
	})
}

// checkDeps lists a node's prerequisites: its own blocked_by targets and
// those inherited from its ancestors (inherited_from names the ancestor),
// each with its status and whether it still blocks; what the node blocks;
// its informational depends; can_start and the unfinished ids.
func checkDeps(sp *specs.Spec, n *specs.Node) map[string]any {
	unfinished := taskStrings(specs.Blockers(sp, n.ID))
	open := map[string]bool{}
	for _, b := range unfinished {
		open[b] = true
	}
	ref := func(id string) map[string]any {
		t := sp.Node(id)
		if t == nil {
			return map[string]any{"task_id": id, "missing": true}
		}
		return map[string]any{"task_id": id, "title": t.Title, "type": t.Type, "status": t.Status}
	}
	blockedBy := []map[string]any{}
	seen := map[string]bool{}
	for a, guard := n, 0; a != nil && guard < 10_000; a, guard = sp.Node(a.Parent), guard+1 {
		for _, b := range a.Dependencies.BlockedBy {
			if seen[b] {
				continue
			}
			seen[b] = true
			e := ref(b)
			e["blocking"] = open[b]
			if a.ID != n.ID {
				e["inherited_from"] = a.ID
			}
			blockedBy = append(blockedBy, e)
		}
	}
	blocks := make([]map[string]any, 0, len(n.Dependencies.Blocks))
	for _, b := range n.Dependencies.Blocks {
		blocks = append(blocks, ref(b))
	}
	depends := make([]map[string]any, 0, len(n.Dependencies.Depends))
	for _, b := range n.Dependencies.Depends {
		depends = append(depends, ref(b))
	}
	return map[string]any{"can_start": len(unfinished) == 0, "unfinished": unfinished, "blocked_by": blockedBy, "blocks": blocks, "depends": depends}
}
