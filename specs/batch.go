package specs

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// PrepareBatchScan bounds how many actionable candidates SelectBatch
// examines, so a huge phase costs at most this many dependency checks.
const PrepareBatchScan = 500

// MaxBatchSkips bounds the skipped candidates SelectBatch reports.
const MaxBatchSkips = 20

// BatchOptions are SelectBatch's limits.
type BatchOptions struct {
	MaxTasks int // at most this many tasks (≥ 1)
	// TokenBudget > 0 stops the selection before the selected tasks'
	// Tokens would exceed it (the first task is always selected).
	TokenBudget int
	Tokens      func(n *Node) int
}

// BatchSkip is a candidate SelectBatch passed over, and why.
type BatchSkip struct {
	TaskID string `json:"task_id"`
	Reason string `json:"reason"`
}

// Why SelectBatch stopped.
const (
	BatchStopExhausted   = "candidates_exhausted"
	BatchStopMaxTasks    = "max_tasks"
	BatchStopTokenBudget = "token_budget"
	BatchStopRunsAlone   = "runs_alone"
)

// BatchSelection is SelectBatch's answer.
type BatchSelection struct {
	Selected  []*Node
	Skipped   []BatchSkip // at most MaxBatchSkips
	StoppedBy string      // one of the BatchStop… values
}

// SelectBatch picks tasks agents can work on at the same time, among the
// first PrepareBatchScan actionable work leaves in next-task order
// (Actionable, the rule next applies: next takes the first): the first
// candidate always; then each candidate that has no direct dependency edge
// with a selected one and whose file_path does not overlap a selected
// one's. A task without file_path runs alone: as the first candidate it is
// the whole batch, later it is skipped. It changes nothing.
func SelectBatch(s *Spec, o BatchOptions) BatchSelection {
	b := batchBuilder{o: o, sel: BatchSelection{StoppedBy: BatchStopExhausted}}
	scanned := 0
	for _, c := range Actionable(s) {
		if scanned == PrepareBatchScan {
			break
		}
		scanned++
		if stop := b.consider(c); stop != "" {
			b.sel.StoppedBy = stop
			break
		}
	}
	return b.sel
}

// batchBuilder is SelectBatch's selection so far and the tokens it spent.
type batchBuilder struct {
	o      BatchOptions
	sel    BatchSelection
	tokens int
}

// consider selects or skips candidate c, or says why the selection stops
// before it (BatchStopMaxTasks, BatchStopTokenBudget) or after it
// (BatchStopRunsAlone); "" lets it go on.
func (b *batchBuilder) consider(c *Node) string {
	if len(b.sel.Selected) == b.o.MaxTasks {
		return BatchStopMaxTasks
	}
	if reason := conflictWith(c, b.sel.Selected); reason != "" {
		b.skip(c, reason)
		return ""
	}
	if !b.spend(c) {
		return BatchStopTokenBudget
	}
	b.sel.Selected = append(b.sel.Selected, c)
	if c.FilePath() == "" {
		return BatchStopRunsAlone
	}
	return ""
}

// skip notes c as passed over for reason (the first MaxBatchSkips only).
func (b *batchBuilder) skip(c *Node, reason string) {
	if len(b.sel.Skipped) < MaxBatchSkips {
		b.sel.Skipped = append(b.sel.Skipped, BatchSkip{TaskID: c.ID, Reason: reason})
	}
}

// spend counts c's tokens against the budget and reports whether c fits:
// always without a budget, and always as the first task.
func (b *batchBuilder) spend(c *Node) bool {
	if b.o.TokenBudget <= 0 || b.o.Tokens == nil {
		return true
	}
	t := b.o.Tokens(c)
	if b.tokens+t > b.o.TokenBudget && len(b.sel.Selected) > 0 {
		return false
	}
	b.tokens += t
	return true
}

// conflictWith says why candidate c cannot run next to the selected tasks
// ("" when it can).
func conflictWith(c *Node, selected []*Node) string {
	if len(selected) == 0 {
		return ""
	}
	fp := c.FilePath()
	if fp == "" {
		return "no file_path: it runs alone"
	}
	for _, s := range selected {
		switch {
		case directlyLinked(c, s):
			return "has a dependency with " + s.ID
		case pathsOverlap(fp, s.FilePath()):
			return "file_path overlaps " + s.ID
		}
	}
	return ""
}

// pathsOverlap reports whether two repo-relative paths name the same file
// or one contains the other.
func pathsOverlap(a, b string) bool {
	a, b = path.Clean(strings.ReplaceAll(a, "\\", "/")), path.Clean(strings.ReplaceAll(b, "\\", "/"))
	return a == b || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// directlyLinked reports whether a and b have an edge of any kind between
// them, in either direction.
func directlyLinked(a, b *Node) bool {
	linked := func(x, y *Node) bool {
		for _, list := range [][]string{x.Dependencies.Blocks, x.Dependencies.BlockedBy, x.Dependencies.Depends} {
			if indexOf(list, y.ID) >= 0 {
				return true
			}
		}
		return false
	}
	return linked(a, b) || linked(b, a)
}

// StaleTask is a task ResetStale moved back to pending.
type StaleTask struct {
	TaskID    string `json:"task_id"`
	StartedAt string `json:"started_at"`
	StartedBy string `json:"started_by"`
	// HoursInProgress is nil when started_at is missing or unreadable.
	HoursInProgress *float64 `json:"hours_in_progress"`
}

// ResetStale reopens every work leaf in progress for at least
// thresholdHours at now (a task without a readable started_at counts as
// stale), in execution order, with a reason naming the threshold and
// taking over other sessions' claims (freeing them is the point). It
// returns the tasks reset and their journal entries; the caller stores both
// in one transaction. Errors are Reopen's.
func ResetStale(s *Spec, now time.Time, thresholdHours float64, o TransitionOptions) ([]StaleTask, []JournalEntry, error) {
	reset := []StaleTask{}
	var entries []JournalEntry
	o.Reason = fmt.Sprintf("reset-batch: in progress at least %g h without completion", thresholdHours)
	o.TakeOver = true
	for _, n := range inProgressLeaves(s) {
		if hours, ok := inProgressFor(n, now); ok && hours < thresholdHours {
			continue
		}
		t := staleTaskOf(n.ID, n, now)
		tr, err := Reopen(s, n.ID, o)
		if err != nil {
			return nil, nil, err
		}
		if tr.Entry != nil {
			entries = append(entries, *tr.Entry)
		}
		reset = append(reset, t)
	}
	return reset, entries, nil
}

// inProgressLeaves are the work leaves in progress, in execution order.
func inProgressLeaves(s *Spec) []*Node {
	var out []*Node
	for n := range ExecutionOrder(s, RootID) {
		if n.ID != RootID && n.IsWorkLeaf() && n.Status == StatusInProgress {
			out = append(out, n)
		}
	}
	return out
}

// inProgressFor is how long n has been in progress at now, in hours; ok is
// false when its started_at is missing or unreadable.
func inProgressFor(n *Node, now time.Time) (float64, bool) {
	at, ok := ParseTime(n.MetaString("started_at"))
	if !ok {
		return 0, false
	}
	return now.Sub(at).Hours(), true
}

// staleTaskOf is node n (task id) as reset-batch reports it, its hours in
// progress at now cut to hundredths (nil when started_at is unreadable).
func staleTaskOf(id string, n *Node, now time.Time) StaleTask {
	t := StaleTask{TaskID: id, StartedAt: n.MetaString("started_at"), StartedBy: n.StartedBy()}
	if hours, ok := inProgressFor(n, now); ok {
		h := float64(int(hours*100)) / 100
		t.HoursInProgress = &h
	}
	return t
}

// DepRef is one end of a dependency edge as dependency checks show it.
type DepRef struct {
	TaskID  string   `json:"task_id"`
	Title   string   `json:"title,omitempty"`
	Type    NodeType `json:"type,omitempty"`
	Status  Status   `json:"status,omitempty"`
	Missing bool     `json:"missing,omitempty"` // the edge names a node that does not exist
}

// Prerequisite is a blocked_by edge of a node or of one of its ancestors.
type Prerequisite struct {
	DepRef
	Blocking      bool   `json:"blocking"`                 // still unfinished
	InheritedFrom string `json:"inherited_from,omitempty"` // the ancestor that holds the edge
}

// DepCheck is a node's dependency check.
type DepCheck struct {
	CanStart   bool           `json:"can_start"`
	Unfinished []string       `json:"unfinished"`
	BlockedBy  []Prerequisite `json:"blocked_by"`
	Blocks     []DepRef       `json:"blocks"`
	Depends    []DepRef       `json:"depends"`
}

// CheckDeps lists n's prerequisites: its own blocked_by targets and those
// inherited from its ancestors (InheritedFrom names the ancestor; each
// prerequisite once, nearest first), each with whether it still blocks;
// what n blocks; its informational depends; CanStart and the unfinished
// ids (Blockers).
func CheckDeps(s *Spec, n *Node) DepCheck {
	unfinished := orEmpty(Blockers(s, n.ID))
	open := make(map[string]bool, len(unfinished))
	for _, b := range unfinished {
		open[b] = true
	}
	return DepCheck{CanStart: len(unfinished) == 0, Unfinished: unfinished, BlockedBy: prerequisites(s, n, open),
		Blocks: depRefs(s, n.Dependencies.Blocks), Depends: depRefs(s, n.Dependencies.Depends)}
}

// prerequisites are the blocked_by targets of n and of its ancestors,
// nearest first, each once, blocking when open holds it (never nil).
func prerequisites(s *Spec, n *Node, open map[string]bool) []Prerequisite {
	out := []Prerequisite{}
	seen := map[string]bool{}
	for a := range lineage(s, n) {
		for _, b := range a.Dependencies.BlockedBy {
			if seen[b] {
				continue
			}
			seen[b] = true
			p := Prerequisite{DepRef: depRef(s, b), Blocking: open[b]}
			if a.ID != n.ID {
				p.InheritedFrom = a.ID
			}
			out = append(out, p)
		}
	}
	return out
}

// depRef is node id as a dependency end (Missing when there is none).
func depRef(s *Spec, id string) DepRef {
	t := s.Node(id)
	if t == nil {
		return DepRef{TaskID: id, Missing: true}
	}
	return DepRef{TaskID: id, Title: t.Title, Type: t.Type, Status: t.Status}
}

// depRefs is depRef of each id (never nil).
func depRefs(s *Spec, ids []string) []DepRef {
	out := make([]DepRef, 0, len(ids))
	for _, id := range ids {
		out = append(out, depRef(s, id))
	}
	return out
}

// MatchTasks lists the ids of scope's subtree (scope excluded) that pass f,
// in execution order, stopping once more than max match (tooMany).
func MatchTasks(s *Spec, scope string, f TaskFilter, max int) (ids []string, tooMany bool) {
	seq, _ := WalkFrom(s, scope, "", 0)
	for n := range seq {
		if !f.Keeps(n) {
			continue
		}
		ids = append(ids, n.ID)
		if len(ids) > max {
			return ids, true
		}
	}
	return ids, false
}

// StartAll starts every task of ids in order (Start). The first that
// cannot start stops it with that task's error, details.failed_task_id
// naming it (and details.field task_ids for TASK_NOT_FOUND); the caller's
// transaction then stores nothing. The results are in ids' order.
func StartAll(s *Spec, ids []string, o TransitionOptions) ([]TransitionResult, error) {
	out := make([]TransitionResult, 0, len(ids))
	for _, id := range ids {
		tr, err := Start(s, id, o)
		if err != nil {
			if de, ok := err.(*core.Error); ok {
				de.WithDetail("failed_task_id", id)
				if de.Code == errcode.TaskNotFound {
					de.WithDetail("field", "task_ids")
				}
			}
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// Completion is one item of a batch completion: success completes the task
// (Note as the completion note), failure fails it (Note as the reason).
type Completion struct {
	TaskID      string
	Success     bool
	Note        string
	ActualHours *float64
}

// CompletionOutcome is what one Completion did: Err, or the transition.
type CompletionOutcome struct {
	Result TransitionResult
	Err    error
}

// CompleteAll applies each completion in order: success → Complete,
// failure → Fail (in_progress → failed, retry_count + 1). An item that
// cannot move keeps its error in its outcome and the others are still
// applied. o.Force is not used (it would skip prerequisites); o.TakeOver
// takes over other sessions' tasks.
func CompleteAll(s *Spec, items []Completion, o TransitionOptions) []CompletionOutcome {
	out := make([]CompletionOutcome, 0, len(items))
	o.Force = false
	for _, c := range items {
		io := o
		io.ActualHours = c.ActualHours
		var oc CompletionOutcome
		if c.Success {
			io.Note = c.Note
			oc.Result, oc.Err = Complete(s, c.TaskID, io)
		} else {
			io.Reason = c.Note
			oc.Result, oc.Err = Fail(s, c.TaskID, io)
		}
		out = append(out, oc)
	}
	return out
}

// MetadataChange is the keys UpdateMetadataAll changed on one node.
type MetadataChange struct {
	TaskID  string   `json:"task_id"`
	Changed []string `json:"changed"`
}

// UpdateMetadataAll applies updates to every node of ids (UpdateMetadata).
// The first invalid update stops it with that node's error,
// details.failed_task_id naming it; the caller's transaction then stores
// nothing.
func UpdateMetadataAll(s *Spec, ids []string, updates map[string]any) ([]MetadataChange, error) {
	out := make([]MetadataChange, 0, len(ids))
	for _, id := range ids {
		changed, err := UpdateMetadata(s, id, updates)
		if err != nil {
			if de, ok := err.(*core.Error); ok {
				de.WithDetail("failed_task_id", id)
			}
			return nil, err
		}
		out = append(out, MetadataChange{TaskID: id, Changed: changed})
	}
	return out, nil
}
