package tools

import (
	"context"
	"strings"
	"unicode/utf8"

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

// taskUpdateStatus moves task_id to status through the matching
// transition (specs.UpdateStatus).
func (d *Deps) taskUpdateStatus(ctx context.Context, r *Request) Result {
	to := specs.Status(r.Args.String("status"))
	return d.transition(ctx, r, func(sp *specs.Spec, id string, o specs.TransitionOptions) (specs.TransitionResult, error) {
		return specs.UpdateStatus(sp, id, to, o)
	})
}

// TransitionAnswer is the answer of a status change.
type TransitionAnswer struct {
	Mutation
	TaskID   string        `json:"task_id"`
	From     specs.Status  `json:"from"`
	To       specs.Status  `json:"to"`
	Status   specs.Status  `json:"status"`
	Task     TaskNode      `json:"task"`
	Progress ProgressBrief `json:"progress"`
	Phase    *PhaseBrief   `json:"phase,omitempty"`
}

// transition runs one transition of task_id as one stored mutation: the
// domain's journal entry is appended in the same transaction, rollups are
// updated by the domain, and the domain's warnings (already completed,
// already started by this session, forced completion) become meta warnings.
func (d *Deps) transition(ctx context.Context, r *Request, do transitionFn) Result {
	id := r.Args.String("task_id")
	var warnings []string
	res := answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (TransitionAnswer, error) {
		tr, err := do(sp, id, d.transitionOptions(r))
		if err != nil {
			return TransitionAnswer{}, err
		}
		if tr.Entry != nil {
			j.Append(*tr.Entry)
		}
		warnings = tr.Warnings
		n := sp.Node(tr.TaskID)
		return TransitionAnswer{TaskID: tr.TaskID, From: tr.From, To: tr.To, Status: n.Status, Task: taskNode(n),
			Progress: specProgress(sp), Phase: phaseOf(sp, n)}, nil
	}))
	if res.Err == nil {
		for _, w := range warnings {
			res.Meta = append(res.Meta, warn("TASK_UNCHANGED", w, map[string]any{"task_id": id}))
		}
	}
	return res
}

// TaskNextAnswer is next's answer: the task found (NextTask), or why none
// is actionable (NothingActionable).
type TaskNextAnswer struct {
	Mutation
	Found        bool `json:"found"`
	SpecComplete bool `json:"spec_complete"`
	Claimed      bool `json:"claimed"`
	*NextTask
	*NothingActionable
}

// NextTask is the task next found.
type NextTask struct {
	TaskID   string         `json:"task_id"`
	Title    string         `json:"title"`
	Type     specs.NodeType `json:"type"`
	Status   specs.Status   `json:"status"`
	Parent   string         `json:"parent"`
	PhaseID  string         `json:"phase_id"`
	Metadata map[string]any `json:"metadata"`
}

// NothingActionable explains an empty next: blocked tasks with what they
// wait on, failed tasks with the call that retries each, tasks in progress
// with who started them, and the next call to make.
type NothingActionable struct {
	Blocked    []specs.BlockedTask `json:"blocked"`
	Failed     []FailedTaskItem    `json:"failed"`
	InProgress []InProgressTask    `json:"in_progress"`
	Hint       string              `json:"hint"`
	NextCall   *NextCall           `json:"next_call,omitempty"`
}

// FailedTaskItem is a failed task with retry: the call that retries it as
// given (task reopen with a reason: back to pending, retry_count kept, so
// that next and prepare-batch offer it again).
type FailedTaskItem struct {
	TaskID        string   `json:"task_id"`
	RetryCount    int      `json:"retry_count"`
	Retry         NextCall `json:"retry"`
	FailureReason string   `json:"failure_reason,omitempty"`
}

// InProgressTask is a task someone is working on.
type InProgressTask struct {
	TaskID    string `json:"task_id"`
	Title     string `json:"title"`
	StartedBy string `json:"started_by"`
	StartedAt string `json:"started_at"`
}

// taskNext answers the next actionable task (specs.NextTask). With claim it
// runs as a mutation that also starts the task in the same transaction, so
// concurrent claimers (other sessions, other processes) each get a
// different task. Nothing actionable is a success with found:false, the
// blocked and in-progress tasks, spec_complete and a hint; when work
// remains but none is actionable a NO_ACTIONABLE_TASK warning says so.
func (d *Deps) taskNext(ctx context.Context, r *Request) Result {
	var res Result
	if !r.Args.Bool("claim") {
		res = answer(readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (TaskNextAnswer, error) {
			a := nextAnswer(sp, specs.NextTask(sp))
			a.SpecID, a.Version = sp.Header.SpecID, sp.Header.Version
			return a, nil
		}))
	} else {
		res = answer(mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (TaskNextAnswer, error) {
			nr := specs.NextTask(sp)
			if !nr.Found {
				return nextAnswer(sp, nr), nil
			}
			tr, err := specs.Start(sp, nr.TaskID, d.transitionOptions(r))
			if err != nil {
				return TaskNextAnswer{}, err
			}
			if tr.Entry != nil {
				j.Append(*tr.Entry)
			}
			a := nextAnswer(sp, nr)
			a.Claimed = true
			return a, nil
		}))
	}
	if a, ok := res.Data.(TaskNextAnswer); ok && !a.Found && !a.SpecComplete {
		res.Meta = append(res.Meta, warn("NO_ACTIONABLE_TASK",
			"No task can start now: see data.failed (retry with its retry call), data.blocked and data.in_progress.", nil))
	}
	return res
}

// nextAnswer is next's answer for nr (not claimed).
func nextAnswer(sp *specs.Spec, nr specs.NextResult) TaskNextAnswer {
	if !nr.Found {
		return TaskNextAnswer{SpecComplete: nr.SpecComplete, NothingActionable: nothingActionable(sp, nr)}
	}
	n := sp.Node(nr.TaskID)
	return TaskNextAnswer{Found: true, NextTask: &NextTask{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status,
		Parent: n.Parent, PhaseID: nr.PhaseID, Metadata: metadataOf(n)}}
}

// nothingActionable is why nr found nothing, with the next call to make (a
// failed task's retry comes first: it is the only work this agent can
// unlock by itself).
func nothingActionable(sp *specs.Spec, nr specs.NextResult) *NothingActionable {
	inProgress := make([]InProgressTask, 0, len(nr.InProgress))
	for _, id := range nr.InProgress {
		if n := sp.Node(id); n != nil {
			inProgress = append(inProgress, InProgressTask{TaskID: id, Title: n.Title, StartedBy: n.StartedBy(), StartedAt: n.MetaString("started_at")})
		}
	}
	specID := sp.Header.SpecID
	failed := failedItems(specID, nr.Failed)
	na := &NothingActionable{Blocked: nr.Blocked, Failed: failed, InProgress: inProgress, Hint: nr.Hint}
	switch {
	case nr.SpecComplete:
		na.NextCall = &NextCall{Tool: "lifecycle", Args: map[string]any{"action": "complete", "spec_id": specID}}
	case len(failed) > 0:
		na.NextCall = &failed[0].Retry
	case len(nr.Blocked) > 0:
		na.NextCall = &NextCall{Tool: "task", Args: map[string]any{"action": "check-deps", "spec_id": specID, "task_id": nr.Blocked[0].TaskID}}
	case len(nr.InProgress) > 0:
		na.NextCall = &NextCall{Tool: "task", Args: map[string]any{"action": "info", "spec_id": specID, "task_id": nr.InProgress[0]}}
	}
	return na
}

// failedItems lists failed tasks, each with the call that retries it.
func failedItems(specID string, failed []specs.FailedTask) []FailedTaskItem {
	out := make([]FailedTaskItem, 0, len(failed))
	for _, f := range failed {
		out = append(out, FailedTaskItem{TaskID: f.TaskID, RetryCount: f.RetryCount, FailureReason: f.Reason,
			Retry: NextCall{Tool: "task", Args: map[string]any{"action": "reopen", "spec_id": specID, "task_id": f.TaskID, "reason": "retry after failure"}}})
	}
	return out
}

// prepareExcerptChars bounds the previous sibling's journal excerpt.
const prepareExcerptChars = 500

// TaskPrepareAnswer is prepare's answer: the task's context bundle, or (no
// task_id and nothing actionable) why nothing is.
type TaskPrepareAnswer struct {
	SpecID       string `json:"spec_id"`
	Found        bool   `json:"found"`
	SpecComplete *bool  `json:"spec_complete,omitempty"`
	*PreparedTask
	*NothingActionable
}

// PreparedTask is the context bundle of one task.
type PreparedTask struct {
	TaskID       string         `json:"task_id"`
	Task         TaskNode       `json:"task"`
	Dependencies specs.DepCheck `json:"dependencies"`
	Context      TaskContext    `json:"context"`
	Hints        []string       `json:"hints"`
	Version      int64          `json:"version"`
}

// TaskContext is what surrounds a task: the previous sibling with its
// latest journal excerpt, the parent (a task or group), the phase, the
// task's last 3 journal entries and, for a research node, its linked
// digests.
type TaskContext struct {
	PreviousSibling *PreviousSibling     `json:"previous_sibling"`
	Parent          *TaskRef             `json:"parent"`
	Phase           *PhaseBrief          `json:"phase"`
	Journal         []specs.JournalEntry `json:"journal"`
	Digests         *[]LinkedDigest      `json:"digests,omitempty"`
}

// PreviousSibling is the task before, with its newest journal entry.
type PreviousSibling struct {
	TaskRef
	JournalExcerpt *JournalExcerpt `json:"journal_excerpt"`
}

// JournalExcerpt is a journal entry with its content cut to 500 characters.
type JournalExcerpt struct {
	Seq       uint64 `json:"seq"`
	Timestamp string `json:"timestamp"`
	EntryType string `json:"entry_type"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// taskPrepare assembles the context bundle for task_id (default: the next
// task, not claimed): the task, its dependency check, the previous sibling
// with its latest journal excerpt, the parent, the phase with its progress,
// the task's last 3 journal entries (read through the journal's task index)
// and hints.
func (d *Deps) taskPrepare(ctx context.Context, r *Request) Result {
	var digestIDs []string
	a, err := readAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalReader) (TaskPrepareAnswer, error) {
		a := TaskPrepareAnswer{SpecID: sp.Header.SpecID}
		id := r.Args.String("task_id")
		if id == "" {
			nr := specs.NextTask(sp)
			if !nr.Found {
				a.SpecComplete, a.NothingActionable = &nr.SpecComplete, nothingActionable(sp, nr)
				return a, nil
			}
			id = nr.TaskID
		}
		n := sp.Node(id)
		if n == nil || id == specs.RootID {
			return a, taskNodeNotFound(sp, r.Args.String("spec_id"), "task_id", id)
		}
		p, err := prepareTask(sp, j, n)
		if err != nil {
			return a, err
		}
		if n.Type == specs.TypeResearch {
			digestIDs = digestIDsOf(n.Metadata)
		}
		a.Found, a.PreparedTask = true, p
		return a, nil
	})
	if err != nil {
		return Fail(err)
	}
	// A research node's linked digests (summaries, key points, top evidence)
	// come from their own reads, after the spec's transaction has ended.
	if d.Research != nil && len(digestIDs) > 0 && a.PreparedTask != nil {
		digests := d.digestSummaries(ctx, digestIDs)
		a.Context.Digests = &digests
	}
	return OK(a)
}

// prepareTask renders n's surroundings (specs.Surroundings) as prepare's
// bundle.
func prepareTask(sp *specs.Spec, j specs.JournalReader, n *specs.Node) (*PreparedTask, error) {
	ts, err := specs.Surroundings(sp, j, n)
	if err != nil {
		return nil, err
	}
	c := TaskContext{Journal: ts.Journal}
	if ts.Phase != nil {
		b := phaseBrief(ts.Phase)
		c.Phase = &b
	}
	if ts.Parent != nil {
		ref := taskRef(ts.Parent)
		c.Parent = &ref
	}
	if ts.Previous != nil {
		c.PreviousSibling = &PreviousSibling{TaskRef: taskRef(ts.Previous)}
		if e := ts.PreviousEntry; e != nil {
			c.PreviousSibling.JournalExcerpt = &JournalExcerpt{Seq: e.Seq, Timestamp: e.Timestamp, EntryType: e.EntryType, Title: e.Title,
				Content: excerpt(e.Content, prepareExcerptChars)}
		}
	}
	return &PreparedTask{TaskID: n.ID, Task: taskNode(n), Dependencies: ts.Deps, Context: c,
		Hints: prepareHints(n, ts.Deps, ts.Previous), Version: sp.Header.Version}, nil
}

func prepareHints(n *specs.Node, deps specs.DepCheck, prev *specs.Node) []string {
	hints := []string{}
	if !deps.CanStart && n.Status != specs.StatusCompleted {
		hints = append(hints, "Unfinished prerequisites: "+strings.Join(deps.Unfinished, ", ")+"; finish them first (task check-deps lists them).")
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

// TaskInfoAnswer is one node with whether it can start.
type TaskInfoAnswer struct {
	SpecID   string   `json:"spec_id"`
	TaskID   string   `json:"task_id"`
	Task     TaskNode `json:"task"`
	CanStart bool     `json:"can_start"`
	Blockers []string `json:"blockers"`
	Version  int64    `json:"version"`
}

// taskInfo answers one node with whether it can start.
func (d *Deps) taskInfo(ctx context.Context, r *Request) Result {
	return answer(readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (TaskInfoAnswer, error) {
		n, err := taskArg(sp, r, "task_id")
		if err != nil {
			return TaskInfoAnswer{}, err
		}
		b := orEmpty(specs.Blockers(sp, n.ID))
		return TaskInfoAnswer{SpecID: sp.Header.SpecID, TaskID: n.ID, Task: taskNode(n), CanStart: len(b) == 0, Blockers: b, Version: sp.Header.Version}, nil
	}))
}

// TaskCheckDepsAnswer is a node's dependency check (specs.CheckDeps).
type TaskCheckDepsAnswer struct {
	SpecID string       `json:"spec_id"`
	TaskID string       `json:"task_id"`
	Status specs.Status `json:"status"`
	specs.DepCheck
}

// taskCheckDeps answers a node's prerequisites, inherited ones included.
func (d *Deps) taskCheckDeps(ctx context.Context, r *Request) Result {
	return answer(readAnswer(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (TaskCheckDepsAnswer, error) {
		n, err := taskArg(sp, r, "task_id")
		if err != nil {
			return TaskCheckDepsAnswer{}, err
		}
		return TaskCheckDepsAnswer{SpecID: sp.Header.SpecID, TaskID: n.ID, Status: n.Status, DepCheck: specs.CheckDeps(sp, n)}, nil
	}))
}

// taskArg is the node named by the call's field (never the root), or
// TASK_NOT_FOUND.
func taskArg(sp *specs.Spec, r *Request, field string) (*specs.Node, error) {
	id := r.Args.String(field)
	n := sp.Node(id)
	if n == nil || id == specs.RootID {
		return nil, taskNodeNotFound(sp, r.Args.String("spec_id"), field, id)
	}
	return n, nil
}
