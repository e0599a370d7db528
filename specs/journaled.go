package specs

import (
	"fmt"
	"time"
)

// This file holds the spec services that change a spec and journal the
// change in the same mutation: lifecycle moves, journal entries and
// verification results, and the read-side listings beside them.

// LifecycleMove is what a lifecycle move did (Lifecycle is ToFolder, kept
// for foundry-mcp clients). Warnings are the move's warnings (moving to the
// current folder, completing with force below 100%).
type LifecycleMove struct {
	FromFolder         Lifecycle `json:"from_folder"`
	ToFolder           Lifecycle `json:"to_folder"`
	Lifecycle          Lifecycle `json:"lifecycle"`
	ProgressPercentage int       `json:"progress_percentage"`
	Warnings           []string  `json:"-"`
}

// MoveSpec moves the spec to folder to (MoveLifecycle) and, when the folder
// changes, journals the move as a status_change entry by author.
// Errors: those of MoveLifecycle.
func MoveSpec(s *Spec, j JournalWriter, to Lifecycle, force bool, author string) (LifecycleMove, error) {
	from := LifecycleOf(s)
	warnings, err := MoveLifecycle(s, to, force)
	if err != nil {
		return LifecycleMove{}, err
	}
	if from != to {
		j.Append(JournalEntry{Timestamp: s.nowString(), EntryType: "status_change",
			Title: "Lifecycle " + string(from) + " → " + string(to), Content: "Spec moved from " + string(from) + " to " + string(to) + ".",
			Author: author, Metadata: map[string]any{"from": string(from), "to": string(to), "force": force}})
	}
	return LifecycleMove{FromFolder: from, ToFolder: to, Lifecycle: to, ProgressPercentage: s.Header.ProgressPercentage, Warnings: warnings}, nil
}

// LifecycleState is a spec's folder, status, progress and the moves allowed
// from its folder.
type LifecycleState struct {
	SpecID             string      `json:"spec_id"`
	Lifecycle          Lifecycle   `json:"lifecycle"`
	Status             Status      `json:"status"`
	ProgressPercentage int         `json:"progress_percentage"`
	Version            int64       `json:"version"`
	Allowed            []Lifecycle `json:"allowed"`
	CanComplete        bool        `json:"can_complete"` // lifecycle complete without force succeeds
	// TotalTasks, CompletedTasks and CanArchive are foundry-mcp's keys of
	// lifecycle state: the root's task counts, and whether lifecycle archive
	// succeeds from here.
	TotalTasks     int  `json:"total_tasks"`
	CompletedTasks int  `json:"completed_tasks"`
	CanArchive     bool `json:"can_archive"`
}

// StateOf is the spec's lifecycle state. CanComplete and CanArchive are
// MoveLifecycle's own rule (lifecycleRefusal): whether lifecycle complete
// (without force) and lifecycle archive succeed from here.
func StateOf(s *Spec) LifecycleState {
	l, h := LifecycleOf(s), s.Header
	return LifecycleState{SpecID: h.SpecID, Lifecycle: l, Status: h.Status, ProgressPercentage: h.ProgressPercentage,
		Version: h.Version, Allowed: AllowedLifecycleMoves(l), CanComplete: lifecycleRefusal(s, LifecycleCompleted, false) == nil,
		TotalTasks: h.TotalTasks, CompletedTasks: h.CompletedTasks,
		CanArchive: lifecycleRefusal(s, LifecycleArchived, false) == nil}
}

// AddJournalEntry appends e (timestamp now, entry type note when empty) to
// the journal and, when e names a task, clears that task's
// needs_journaling. It returns the entry as queued.
// Errors: TASK_NOT_FOUND (field task_id).
func AddJournalEntry(s *Spec, j JournalWriter, e JournalEntry) (JournalEntry, error) {
	if e.TaskID != "" {
		if err := MarkJournaled(s, e.TaskID); err != nil {
			return JournalEntry{}, err
		}
	}
	if e.EntryType == "" {
		e.EntryType = "note"
	}
	e.Timestamp = s.nowString()
	j.Append(e)
	return e, nil
}

// UnjournaledTask is a completed task still waiting for a journal entry.
type UnjournaledTask struct {
	TaskID      string   `json:"task_id"`
	Title       string   `json:"title"`
	Type        NodeType `json:"type"`
	CompletedAt string   `json:"completed_at"`
}

// UnjournaledTasks lists the completed tasks that still need a journal
// entry, in execution order, with their nodes (same order).
func UnjournaledTasks(s *Spec) ([]UnjournaledTask, []*Node) {
	ids := Unjournaled(s)
	tasks, nodes := make([]UnjournaledTask, 0, len(ids)), make([]*Node, 0, len(ids))
	for _, id := range ids {
		n := s.Node(id)
		nodes = append(nodes, n)
		tasks = append(tasks, UnjournaledTask{TaskID: id, Title: n.Title, Type: n.Type, CompletedAt: n.MetaString("completed_at")})
	}
	return tasks, nodes
}

// VerificationRecorded is a result recorded on a verify node.
type VerificationRecorded struct {
	VerifyID     string         `json:"verify_id"`
	Result       string         `json:"result"`
	Recorded     bool           `json:"recorded"`
	Record       map[string]any `json:"record"`
	LastResult   string         `json:"last_result"`
	HistoryCount int            `json:"history_count"`
	Status       Status         `json:"status"`
}

// RecordVerificationNote records r on verify node id (RecordVerification)
// and journals it as a note by author about that node.
// Errors: those of RecordVerification.
func RecordVerificationNote(s *Spec, j JournalWriter, id string, r VerificationRecord, author string) (VerificationRecorded, error) {
	stored, err := RecordVerification(s, id, r)
	if err != nil {
		return VerificationRecorded{}, err
	}
	n := s.Node(id)
	result, _ := stored["result"].(string)
	j.Append(JournalEntry{Timestamp: s.nowString(), EntryType: "note",
		Title: "Verification " + result + ": " + n.Title, Content: r.Issues, Author: author, TaskID: id,
		Metadata: map[string]any{"result": stored["result"], "command": stored["command"]}})
	hist, _ := n.Metadata["verification_history"].([]any)
	return VerificationRecorded{VerifyID: id, Result: result, Recorded: true, Record: stored,
		LastResult: n.MetaString("last_result"), HistoryCount: len(hist), Status: n.Status}, nil
}

// CommandRun is what running a verify node's command did: ExitCode -1 when
// it did not exit normally (timeout, not started); Dropped when output was
// lost beyond the capture buffer.
type CommandRun struct {
	ExitCode   int
	TimedOut   bool
	Output     string
	Dropped    bool
	TotalBytes int64
	DurationMS float64
}

// ExecuteOutcome is what verification execute's command did.
type ExecuteOutcome struct {
	Executed        bool    `json:"executed"`
	Command         string  `json:"command"`
	ExitCode        *int    `json:"exit_code"` // null when it did not exit normally (timeout, not started)
	TimedOut        bool    `json:"timed_out"`
	DurationMS      float64 `json:"duration_ms"`
	TimeoutSeconds  int     `json:"timeout_seconds"`
	OutputBytes     int64   `json:"output_bytes"`
	Output          string  `json:"output"`
	OutputTruncated bool    `json:"output_truncated"`
}

// Outcome is what run of command did, and the record it makes: PASSED on
// exit 0, FAILED otherwise (a timeout included), the output truncated to
// MaxVerificationOutput keeping its end.
func (run CommandRun) Outcome(command string, timeout time.Duration) (ExecuteOutcome, VerificationRecord) {
	out := ExecuteOutcome{Executed: true, Command: command, TimedOut: run.TimedOut, DurationMS: run.DurationMS,
		TimeoutSeconds: int(timeout.Seconds()), OutputBytes: run.TotalBytes}
	rec := VerificationRecord{Result: "PASSED", Command: command, TimedOut: run.TimedOut, DurationMS: &run.DurationMS}
	if run.ExitCode >= 0 {
		code := run.ExitCode
		out.ExitCode, rec.ExitCode = &code, &code
	}
	switch {
	case run.TimedOut:
		rec.Result, rec.Issues = "FAILED", fmt.Sprintf("timed out after %s", timeout)
	case run.ExitCode != 0:
		rec.Result, rec.Issues = "FAILED", fmt.Sprintf("exit code %d", run.ExitCode)
	}
	output, truncated := TruncateTail(run.Output, MaxVerificationOutput)
	out.Output, out.OutputTruncated = output, truncated || run.Dropped
	rec.Output = output
	return out, rec
}

// ReadJournal pages the journal newest first below sequence before (0:
// from the newest), limit entries at a time: one task's entries when
// taskID is set (through the task index), of one entry type when
// entryType is set. more says whether older matching entries may follow.
func ReadJournal(j JournalReader, taskID, entryType string, before uint64, limit int) (entries []JournalEntry, more bool, err error) {
	keep := func(e *JournalEntry) bool { return entryType == "" || e.EntryType == entryType }
	if taskID != "" {
		return j.TaskEntries(taskID, before, limit, keep)
	}
	return j.Entries(before, limit, keep)
}
