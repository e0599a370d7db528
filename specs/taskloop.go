package specs

import (
	"strings"
	"unicode/utf8"
)

// The work loop as results: a transition's outcome, next (with or without
// a claim), prepare's context bundle, info and check-deps. The tools turn
// them into answers (and a next step into the call that takes it).

// Transition is one status change of the domain (Start, Complete, Block,
// Unblock, Reopen, or UpdateStatus bound to a target status).
type Transition func(s *Spec, id string, o TransitionOptions) (TransitionResult, error)

// To is the transition that moves a node to status to through the
// matching action (UpdateStatus).
func To(to Status) Transition {
	return func(s *Spec, id string, o TransitionOptions) (TransitionResult, error) {
		return UpdateStatus(s, id, to, o)
	}
}

// TransitionView is a node after a status change, with the spec's and its
// phase's progress. Warnings (already completed, already started by this
// session, forced completion) are not part of the answer's data: the tools
// layer reports them as meta warnings.
type TransitionView struct {
	TaskID   string        `json:"task_id"`
	From     Status        `json:"from"`
	To       Status        `json:"to"`
	Status   Status        `json:"status"`
	Task     *TaskNode     `json:"task,omitempty"`
	Progress ProgressBrief `json:"progress"`
	Phase    *PhaseBrief   `json:"phase,omitempty"`
	Warnings []string      `json:"-"`
}

// ApplyTransition runs do on id and appends its journal entry to j (the
// caller's transaction). Errors are do's.
func ApplyTransition(s *Spec, j JournalWriter, do Transition, id string, o TransitionOptions) (TransitionView, error) {
	tr, err := do(s, id, o)
	if err != nil {
		return TransitionView{}, err
	}
	if tr.Entry != nil {
		j.Append(*tr.Entry)
	}
	n := s.Node(tr.TaskID)
	node := NodeOf(n)
	return TransitionView{TaskID: tr.TaskID, From: tr.From, To: tr.To, Status: n.Status, Task: &node,
		Progress: ProgressOf(s), Phase: PhaseBriefOf(s, n), Warnings: tr.Warnings}, nil
}

// NextOutcome is next's result: the task found (Task, started when
// Claimed), or why none is actionable (Idle).
type NextOutcome struct {
	Found        bool
	SpecComplete bool
	Claimed      bool
	Task         *FoundTask
	Idle         *Idle
}

// FoundTask is the task next found.
type FoundTask struct {
	TaskID   string         `json:"task_id"`
	Title    string         `json:"title"`
	Type     NodeType       `json:"type"`
	Status   Status         `json:"status"`
	Parent   string         `json:"parent"`
	PhaseID  string         `json:"phase_id"`
	Metadata map[string]any `json:"metadata"`
}

// Idle is why nothing is actionable: blocked tasks with what they wait
// on, failed tasks (each retried by RetryStep), tasks in progress with who
// started them, a hint, and the next step to take (Next, nil: none).
type Idle struct {
	Blocked    []BlockedTask
	Failed     []FailedTask
	InProgress []InProgressTask
	Hint       string
	Next       *NextStep
}

// InProgressTask is a task someone is working on.
type InProgressTask struct {
	TaskID    string `json:"task_id"`
	Title     string `json:"title"`
	StartedBy string `json:"started_by"`
	StartedAt string `json:"started_at"`
}

// Next is next's result without a claim (NextTask).
func Next(s *Spec) NextOutcome { return nextOutcome(s, NextTask(s)) }

// ClaimNext is next with claim: the task found is also started (Start with
// o, its journal entry appended to j) in the caller's transaction, so
// concurrent claimers each get a different task. Errors are Start's.
func ClaimNext(s *Spec, j JournalWriter, o TransitionOptions) (NextOutcome, error) {
	nr := NextTask(s)
	if !nr.Found {
		return nextOutcome(s, nr), nil
	}
	if _, err := ApplyTransition(s, j, Start, nr.TaskID, o); err != nil {
		return NextOutcome{}, err
	}
	v := nextOutcome(s, nr)
	v.Claimed = true
	return v, nil
}

// nextOutcome is next's result for nr (not claimed).
func nextOutcome(s *Spec, nr NextResult) NextOutcome {
	if !nr.Found {
		return NextOutcome{SpecComplete: nr.SpecComplete, Idle: Nothing(s, nr)}
	}
	n := s.Node(nr.TaskID)
	return NextOutcome{Found: true, Task: &FoundTask{TaskID: n.ID, Title: n.Title, Type: n.Type, Status: n.Status,
		Parent: n.Parent, PhaseID: nr.PhaseID, Metadata: MetadataOf(n)}}
}

// Nothing is why nr (not found) found nothing, with the next step to take:
// a failed task's retry comes first (it is the only work an agent can
// unlock by itself), then the spec's completion, a blocked task's
// check-deps, an in-progress task's info.
func Nothing(s *Spec, nr NextResult) *Idle {
	inProgress := make([]InProgressTask, 0, len(nr.InProgress))
	for _, id := range nr.InProgress {
		if n := s.Node(id); n != nil {
			inProgress = append(inProgress, InProgressTask{TaskID: id, Title: n.Title, StartedBy: n.StartedBy(), StartedAt: n.MetaString("started_at")})
		}
	}
	specID := s.Header.SpecID
	idle := &Idle{Blocked: nr.Blocked, Failed: nr.Failed, InProgress: inProgress, Hint: nr.Hint}
	switch {
	case nr.SpecComplete:
		idle.Next = &NextStep{Kind: StepCompleteSpec, SpecID: specID}
	case len(nr.Unplaced) > 0 && nr.IntoPhase != "":
		idle.Next = &NextStep{Kind: StepIntoPhase, SpecID: specID, TaskID: nr.Unplaced[0], Parent: nr.IntoPhase}
	case len(nr.Unplaced) > 0:
		idle.Next = &NextStep{Kind: StepFixSpec, SpecID: specID}
	case len(nr.Failed) > 0:
		step := RetryStep(specID, nr.Failed[0])
		idle.Next = &step
	case len(nr.Blocked) > 0:
		idle.Next = &NextStep{Kind: StepCheckDeps, SpecID: specID, TaskID: nr.Blocked[0].TaskID}
	case len(nr.InProgress) > 0:
		idle.Next = &NextStep{Kind: StepTaskInfo, SpecID: specID, TaskID: nr.InProgress[0]}
	}
	return idle
}

// RetryStep is the step that retries the failed task f of spec specID:
// reopen it (back to pending, retry_count kept), so that next and
// prepare-batch offer it again.
func RetryStep(specID string, f FailedTask) NextStep {
	return NextStep{Kind: StepRetry, SpecID: specID, TaskID: f.TaskID}
}

// PrepareExcerptChars bounds the previous sibling's journal excerpt.
const PrepareExcerptChars = 500

// Prepared is prepare's result: the context bundle of one task (Task),
// or, with no task named and nothing actionable, why nothing is (Idle,
// and whether the spec is complete). D is the type of a research node's
// linked digests, which the caller reads outside the spec.
type Prepared[D any] struct {
	SpecID       string
	Task         *PreparedTask[D]
	SpecComplete bool
	Idle         *Idle
}

// PreparedTask is the context bundle of one task.
type PreparedTask[D any] struct {
	TaskID       string         `json:"task_id"`
	Task         TaskNode       `json:"task"`
	Dependencies DepCheck       `json:"dependencies"`
	Context      TaskContext[D] `json:"context"`
	Hints        []string       `json:"hints"`
	Version      int64          `json:"version"`
}

// TaskContext is what surrounds a task: the previous sibling with its
// latest journal excerpt, the parent (a task or group), the phase, the
// task's last 3 journal entries and, for a research node, its linked
// digests (filled by the caller, which reads them outside the spec).
type TaskContext[D any] struct {
	PreviousSibling *PreviousSibling `json:"previous_sibling"`
	Parent          *TaskRef         `json:"parent"`
	Phase           *PhaseBrief      `json:"phase"`
	Journal         []JournalEntry   `json:"journal"`
	Digests         *[]D             `json:"digests,omitempty"`
}

// PreviousSibling is the task before, with its newest journal entry.
type PreviousSibling struct {
	TaskRef
	JournalExcerpt *JournalExcerpt `json:"journal_excerpt"`
}

// JournalExcerpt is a journal entry with its content cut to
// PrepareExcerptChars characters.
type JournalExcerpt struct {
	Seq       uint64 `json:"seq"`
	Timestamp string `json:"timestamp"`
	EntryType string `json:"entry_type"`
	Title     string `json:"title"`
	Content   string `json:"content"`
}

// Prepare is prepare's bundle for n, or, for n nil, for the next task (not
// claimed); with nothing actionable the result says why (Nothing). The
// journal is read through its task index (Surroundings). Errors are the
// journal's.
func Prepare[D any](s *Spec, j JournalReader, n *Node) (Prepared[D], error) {
	v := Prepared[D]{SpecID: s.Header.SpecID}
	if n == nil {
		nr := NextTask(s)
		if !nr.Found {
			v.SpecComplete, v.Idle = nr.SpecComplete, Nothing(s, nr)
			return v, nil
		}
		n = s.Node(nr.TaskID)
	}
	ts, err := Surroundings(s, j, n)
	if err != nil {
		return v, err
	}
	v.Task = &PreparedTask[D]{TaskID: n.ID, Task: NodeOf(n), Dependencies: ts.Deps, Context: contextOf[D](ts),
		Hints: prepareHints(n, ts.Deps, ts.Previous), Version: s.Header.Version}
	return v, nil
}

// contextOf renders ts as prepare's context.
func contextOf[D any](ts TaskSurroundings) TaskContext[D] {
	c := TaskContext[D]{Journal: ts.Journal}
	if ts.Phase != nil {
		b := BriefOf(ts.Phase)
		c.Phase = &b
	}
	if ts.Parent != nil {
		ref := RefOf(ts.Parent)
		c.Parent = &ref
	}
	if ts.Previous != nil {
		c.PreviousSibling = &PreviousSibling{TaskRef: RefOf(ts.Previous)}
		if e := ts.PreviousEntry; e != nil {
			c.PreviousSibling.JournalExcerpt = &JournalExcerpt{Seq: e.Seq, Timestamp: e.Timestamp, EntryType: e.EntryType, Title: e.Title,
				Content: Excerpt(e.Content, PrepareExcerptChars)}
		}
	}
	return c
}

// prepareHints are prepare's next steps for n: what keeps it from starting,
// how to start or redo it, and what its plan lacks.
func prepareHints(n *Node, deps DepCheck, prev *Node) []string {
	hints := []string{}
	if !deps.CanStart && n.Status != StatusCompleted {
		hints = append(hints, "Unfinished prerequisites: "+strings.Join(deps.Unfinished, ", ")+"; finish them first (task check-deps lists them).")
	}
	if h := statusHint(n); h != "" {
		hints = append(hints, h)
	}
	hints = append(hints, planHints(n)...)
	if prev != nil && prev.Status == StatusCompleted && prev.NeedsJournaling() {
		hints = append(hints, "The previous sibling "+prev.ID+" still needs a journal entry: journal add with its task_id.")
	}
	return hints
}

// statusHint is how to start, unblock or redo n given its status ("" when
// it is in progress).
func statusHint(n *Node) string {
	switch n.Status {
	case StatusPending, StatusFailed:
		return "Start it before working: task start (or task next with claim:true)."
	case StatusBlocked:
		return "It is blocked (" + n.MetaString("blocker_description") + "): task unblock once resolved."
	case StatusCompleted:
		return "It is already completed: task reopen with a reason to redo it."
	}
	return ""
}

// planHints are what n's plan lacks: how to run a verify step; a missing
// file_path or acceptance criteria of a task or subtask.
func planHints(n *Node) []string {
	if n.Type == TypeVerify {
		return []string{"A verify step: run its command (verification execute) or record your result with verification add, then task complete."}
	}
	if n.Type != TypeTask && n.Type != TypeSubtask {
		return nil
	}
	var hints []string
	if n.FilePath() == "" {
		hints = append(hints, "No file_path: set one (task update-metadata) so prepare-batch can run it in parallel with others.")
	}
	if len(n.MetaStrings("acceptance_criteria")) == 0 && len(n.Requirements()) == 0 {
		hints = append(hints, "No acceptance criteria: add some (task add-requirement) so done is checkable.")
	}
	return hints
}

// Excerpt cuts s to at most n characters, the last one an ellipsis when
// it was cut.
func Excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// TaskInfo is one node with whether it can start (CanStart: task start of
// it, as given with no force, succeeds).
type TaskInfo struct {
	SpecID   string   `json:"spec_id"`
	TaskID   string   `json:"task_id"`
	Task     TaskNode `json:"task"`
	CanStart bool     `json:"can_start"`
	Blockers []string `json:"blockers"`
	Version  int64    `json:"version"`
}

// InfoOf is n with its unfinished prerequisites (Blockers) and whether a
// start of it by the session agent (TransitionOptions.Agent; "" for none)
// succeeds: CanStart is Start's own rule (startRefusal), so it is false for
// a completed task and for one another session holds.
func InfoOf(s *Spec, n *Node, agent string) TaskInfo {
	b := orEmpty(Blockers(s, n.ID))
	_, refused := startRefusal(s, n.ID, TransitionOptions{Agent: agent})
	return TaskInfo{SpecID: s.Header.SpecID, TaskID: n.ID, Task: NodeOf(n), CanStart: refused == nil, Blockers: b, Version: s.Header.Version}
}

// TaskDepsCheck is a node's dependency check (CheckDeps).
type TaskDepsCheck struct {
	SpecID string `json:"spec_id"`
	TaskID string `json:"task_id"`
	Status Status `json:"status"`
	DepCheck
}

// DepsCheckOf is n's prerequisites, inherited ones included.
func DepsCheckOf(s *Spec, n *Node) TaskDepsCheck {
	return TaskDepsCheck{SpecID: s.Header.SpecID, TaskID: n.ID, Status: n.Status, DepCheck: CheckDeps(s, n)}
}
