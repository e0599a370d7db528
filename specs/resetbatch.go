package specs

import (
	"fmt"
	"time"

	"github.com/specd/specd/core/errcode"
)

// ResetBatchOf is reset-batch: with ids (foundry-mcp's task_ids) the named
// tasks are reset whatever their age (ResetTasks); without, every task in
// progress for at least thresholdHours (ResetStaleBatch).
func ResetBatchOf(s *Spec, j JournalWriter, now time.Time, ids []string, thresholdHours float64, o TransitionOptions) (ResetBatch, error) {
	if ids == nil {
		return ResetStaleBatch(s, j, now, thresholdHours, o)
	}
	return ResetTasks(s, j, now, ids, o)
}

// ResetTasks reopens each task of ids, which must be a work leaf in
// progress (held by any session), and appends the journal entries to j.
// Every id is checked before anything changes: one that cannot be reset
// fails the whole call (details.failed_task_id).
//
// Errors: MISSING_REQUIRED (no ids), INVALID_FORMAT (an id twice),
// TASK_NOT_FOUND, INVALID_TRANSITION (not a work leaf in progress).
func ResetTasks(s *Spec, j JournalWriter, now time.Time, ids []string, o TransitionOptions) (ResetBatch, error) {
	if err := checkResetIDs(s, ids); err != nil {
		return ResetBatch{}, err
	}
	o.Reason, o.TakeOver = "reset-batch: reset by request", true
	b := ResetBatch{Reset: []StaleTask{}}
	for _, id := range ids {
		t := staleTaskOf(id, s.Node(id), now)
		tr, err := Reopen(s, id, o)
		if err != nil {
			return ResetBatch{}, err
		}
		if tr.Entry != nil {
			j.Append(*tr.Entry)
		}
		b.Reset = append(b.Reset, t)
	}
	b.Count = len(b.Reset)
	return b, nil
}

// checkResetIDs checks ids in order, each before the next: at least one
// (MISSING_REQUIRED), none twice (INVALID_FORMAT), each a work leaf in
// progress (checkResetID).
func checkResetIDs(s *Spec, ids []string) error {
	if len(ids) == 0 {
		return newErr(errcode.MissingRequired, "task_ids", "task_ids must name at least one task to reset")
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return newErr(errcode.InvalidFormat, "task_ids", "task_ids lists %s twice", id).WithDetail("received", id)
		}
		seen[id] = true
		if err := checkResetID(s, id); err != nil {
			return err
		}
	}
	return nil
}

// checkResetID requires node id to be a work leaf in progress: else
// TASK_NOT_FOUND (the root included) or INVALID_TRANSITION, with
// details.failed_task_id.
func checkResetID(s *Spec, id string) error {
	n := s.Node(id)
	if n == nil || id == RootID {
		return taskNotFound(s, "task_ids", id).WithDetail("failed_task_id", id)
	}
	if !n.IsWorkLeaf() || n.Status != StatusInProgress {
		return invalidTransition(n, "reset", fmt.Sprintf("it is %s, not in_progress", n.Status)).WithDetail("failed_task_id", id)
	}
	return nil
}
