package specs

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TransitionOptions carries the parameters of the status transitions; each
// action reads the fields it documents.
type TransitionOptions struct {
	Agent       string   // the caller's agent identity, never a credential: start records it as started_by; decides CONFLICT
	Author      string   // journal author (default Agent, else "specd")
	Force       bool     // complete: complete despite unfinished prerequisites
	TakeOver    bool     // every transition: act on a task another session holds (see Holder)
	Strict      bool     // complete: refuse a pending task (config tasks.strict_complete)
	Note        string   // start, complete: the journal entry's content (foundry's note / completion_note); UpdateStatus: also the default Reason
	ActualHours *float64 // complete: overrides the elapsed time
	Reason      string   // block: blocker description (required); reopen: required; fail: failure reason
	BlockerType string   // block: dependency (default) | technical | resource | decision
	Ticket      string   // block: tracking ticket
	Resolution  string   // unblock: how the blocker was resolved
}

// TransitionResult is the outcome of a transition. Entry is the journal entry
// the store must append in the same transaction (its Seq is 0: the store
// assigns it); it is nil when nothing changed (a warning says why).
type TransitionResult struct {
	TaskID   string        `json:"task_id"`
	From     Status        `json:"from"`
	To       Status        `json:"to"`
	Entry    *JournalEntry `json:"entry,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
}

// DefaultBlockedReason is the blocker description of update-status blocked
// given neither a reason nor a note (foundry-mcp needs none).
const DefaultBlockedReason = "blocked"

// actionTargets maps each action to the status it produces, and
// actionSources to the statuses it applies to (the spec-model table).
var (
	actionTargets = map[string]Status{"start": StatusInProgress, "complete": StatusCompleted, "block": StatusBlocked,
		"unblock": StatusPending, "reopen": StatusPending, "fail": StatusFailed}
	actionSources = map[string][]Status{
		"start":    {StatusPending, StatusFailed},
		"complete": {StatusInProgress, StatusPending},
		"block":    {StatusPending, StatusInProgress},
		"unblock":  {StatusBlocked},
		"reopen":   {StatusCompleted, StatusInProgress, StatusFailed},
		"fail":     {StatusInProgress},
	}
	actionOrder = []string{"start", "complete", "block", "unblock", "reopen", "fail"}
)

// AllowedActions returns the transition actions allowed from a status.
func AllowedActions(from Status) []string {
	out := []string{}
	for _, a := range actionOrder {
		for _, st := range actionSources[a] {
			if st == from {
				out = append(out, a)
			}
		}
	}
	return out
}

func invalidTransition(n *Node, action, why string) *core.Error {
	allowed := AllowedActions(n.Status)
	statuses := []string{}
	for _, a := range allowed {
		st := string(actionTargets[a])
		if !containsString(statuses, st) {
			statuses = append(statuses, st)
		}
	}
	msg := "cannot " + action + " " + n.ID + " while it is " + string(n.Status)
	if why != "" {
		msg = "cannot " + action + " " + n.ID + ": " + why
	}
	return newErr(errcode.InvalidTransition, "status", "%s", msg).
		WithDetail("allowed", allowed).WithDetail("allowed_statuses", statuses).WithDetail("current_status", string(n.Status)).WithDetail("task_id", n.ID)
}

// Holder returns the agent holding n: the started_by of a task in
// progress, or of a blocked task that was blocked while in progress (block
// keeps the claim). It returns "" for any other task and for a claim made
// without an agent.
func Holder(n *Node) string {
	if n == nil || (n.Status != StatusInProgress && n.Status != StatusBlocked) {
		return ""
	}
	return n.StartedBy()
}

// checkHolder refuses a transition of n by a session other than its
// holder: CONFLICT with details.started_by and details.started_at, unless
// opts.TakeOver. A caller without an agent identity (a domain test)
// is not refused.
func checkHolder(n *Node, action string, opts TransitionOptions) error {
	by := Holder(n)
	if by == "" || opts.Agent == "" || by == opts.Agent || opts.TakeOver {
		return nil
	}
	return newErr(errcode.Conflict, "task_id", "cannot %s %s: session %s started it at %s; pass force:true to act on it anyway", action, n.ID, by, n.MetaString("started_at")).
		WithDetail("task_id", n.ID).WithDetail("started_by", by).WithDetail("started_at", n.MetaString("started_at")).WithDetail("action", action)
}

// transitionTarget returns the node for a transition, or the error for a
// missing or non-transitionable node. Transitions apply to leaf task,
// subtask, verify and research nodes (research nodes are not counted in
// rollups but their status moves the same way).
func transitionTarget(s *Spec, id, action string) (*Node, error) {
	n := s.Node(id)
	if n == nil {
		return nil, taskNotFound(s, "task_id", id)
	}
	if !n.IsLeaf() || !(n.Type.Counted() || n.Type == TypeResearch) {
		e := invalidTransition(n, action, "its status is computed from its children ("+string(n.Type)+")")
		e.Details["allowed"] = []string{}
		e.Details["allowed_statuses"] = []string{}
		return nil, e
	}
	return n, nil
}

// checkSource refuses action on n when n's status is not one of its
// sources: INVALID_TRANSITION with details.allowed and, as its step, the
// one allowed move after which action applies, when exactly one does
// (moveStep).
func checkSource(s *Spec, n *Node, action string) error {
	for _, st := range actionSources[action] {
		if n.Status == st {
			return nil
		}
	}
	e := invalidTransition(n, action, "")
	if m, ok := moveStep(n.Status, action); ok {
		args := map[string]any{"spec_id": s.Header.SpecID, "task_id": n.ID}
		if m == "reopen" {
			args["reason"] = "reopened to " + action + " it again"
		}
		e.WithStep("task-"+m, args, nil)
	}
	return e
}

// stepMoves are the moves a refusal may offer as its step: those that
// need no judgement of the caller's (block and fail declare a problem).
var stepMoves = []string{"start", "complete", "unblock", "reopen"}

// moveStep is the one move allowed from status after which action applies,
// when exactly one of stepMoves is.
func moveStep(from Status, action string) (string, bool) {
	var fit []string
	for _, m := range AllowedActions(from) {
		if containsString(stepMoves, m) && slices.Contains(actionSources[action], actionTargets[m]) {
			fit = append(fit, m)
		}
	}
	if len(fit) != 1 {
		return "", false
	}
	return fit[0], true
}

func author(o TransitionOptions) string {
	switch {
	case o.Author != "":
		return o.Author
	case o.Agent != "":
		return o.Agent
	}
	return "specd"
}

func (s *Spec) journalEntry(n *Node, entryType, title, content string, o TransitionOptions, meta map[string]any) *JournalEntry {
	return &JournalEntry{Timestamp: s.nowString(), EntryType: entryType, Title: title + ": " + n.Title,
		Content: content, Author: author(o), TaskID: n.ID, Metadata: meta}
}

func blockedErr(id string, blockers []string) *core.Error {
	return newErr(errcode.TaskBlocked, "task_id", "%s is waiting on %s; run task check-deps to see what is unfinished", id, strings.Join(blockers, ", ")).
		WithDetail("blocked_by", blockers).WithDetail("suggested_action", "check-deps").WithDetail("task_id", id)
}

// finish applies the rollup and header bookkeeping after a status change.
func (s *Spec) finish(id string) {
	RecomputeAncestors(s, id)
	s.touch()
}

// startRefusal is the one rule of whether Start(s, id, opts) succeeds: the
// node it would start, or the refusal it would give. It changes nothing,
// so read models (InfoOf's CanStart) ask it too.
func startRefusal(s *Spec, id string, opts TransitionOptions) (*Node, error) {
	n, err := transitionTarget(s, id, "start")
	if err != nil {
		return nil, err
	}
	if n.Status == StatusInProgress {
		return n, checkHolder(n, "start", opts)
	}
	if err := checkSource(s, n, "start"); err != nil {
		return nil, err
	}
	if b := Blockers(s, id); len(b) > 0 {
		return nil, blockedErr(id, b)
	}
	return n, nil
}

// Start moves a pending or failed leaf to in_progress and records
// started_at and started_by (opts.Agent). Starting a task already in
// progress under the same session (or an unknown one) succeeds with a
// warning and no journal entry.
//
// With opts.TakeOver, starting a task another session holds moves the
// claim to opts.Agent (journaled as "Task Taken Over").
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION (a parent, or another status;
// details.allowed), CONFLICT (in progress under another session, unless
// opts.TakeOver; details.started_by, details.started_at), TASK_BLOCKED
// (unfinished prerequisites; details.blocked_by).
func Start(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n, err := startRefusal(s, id, opts)
	if err != nil {
		return res, err
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusInProgress}
	if n.Status == StatusInProgress {
		return s.restart(n, opts, res), nil
	}
	e := s.Edit(id)
	e.Status = StatusInProgress
	e.SetMeta("started_at", s.nowString())
	setOrDeleteMeta(e, "started_by", opts.Agent)
	content := "Started " + id + "."
	if strings.TrimSpace(opts.Note) != "" {
		content = opts.Note
	}
	res.Entry = s.journalEntry(e, "status_change", "Task Started", content, opts, nil)
	s.finish(id)
	return res, nil
}

// restart is Start of n, already in progress: with opts.TakeOver, a claim
// another known session holds moves to opts.Agent (journaled as "Task Taken
// Over"); otherwise nothing changes and res gets a warning.
func (s *Spec) restart(n *Node, opts TransitionOptions, res TransitionResult) TransitionResult {
	by := n.StartedBy()
	if !opts.TakeOver || by == "" || opts.Agent == "" || by == opts.Agent {
		res.Warnings = append(res.Warnings, n.ID+" is already in progress")
		return res
	}
	e := s.Edit(n.ID)
	e.SetMeta("started_at", s.nowString())
	e.SetMeta("started_by", opts.Agent)
	res.Entry = s.journalEntry(e, "status_change", "Task Taken Over", "Took over "+n.ID+" from session "+by+".", opts, map[string]any{"previous_holder": by})
	s.touch()
	return res
}

// setOrDeleteMeta sets metadata key of e to value, or deletes the key when
// value is empty.
func setOrDeleteMeta(e *Node, key, value string) {
	if value == "" {
		e.DeleteMeta(key)
		return
	}
	e.SetMeta(key, value)
}

// Complete moves an in-progress (or, unless opts.Strict, pending) leaf to
// completed: sets completed_at and needs_journaling, and actual_hours
// (opts.ActualHours, else the hours since started_at rounded to 2 decimals
// when unset). Unfinished prerequisites refuse it unless opts.Force (then a
// warning lists them). Completing a completed task succeeds with a warning
// and no journal entry. opts.Note becomes the journal entry's content.
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION (a parent; blocked or failed;
// pending under Strict), INVALID_FORMAT (negative actual hours),
// TASK_BLOCKED (details.blocked_by), CONFLICT (held by another session,
// unless opts.TakeOver; details.started_by, details.started_at).
func Complete(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n, err := transitionTarget(s, id, "complete")
	if err != nil {
		return res, err
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusCompleted}
	if n.Status == StatusCompleted {
		res.Warnings = append(res.Warnings, id+" is already completed")
		return res, nil
	}
	if err := completeRefusal(s, n, opts); err != nil {
		return res, err
	}
	var meta map[string]any
	if b := Blockers(s, id); len(b) > 0 {
		if !opts.Force {
			return res, blockedErr(id, b)
		}
		res.Warnings = append(res.Warnings, "completed despite unfinished prerequisites: "+strings.Join(b, ", "))
		meta = map[string]any{"forced": true}
	}
	now := s.Clock.Now()
	e := s.Edit(id)
	e.Status = StatusCompleted
	e.SetMeta("completed_at", FormatTime(now))
	e.SetMeta("needs_journaling", true)
	e.DeleteMeta("journaled_at")
	setActualHours(e, opts.ActualHours, now)
	res.Entry = s.journalEntry(e, "status_change", "Task Completed", cmp.Or(opts.Note, "Completed "+id+"."), opts, meta)
	s.finish(id)
	return res, nil
}

// completeRefusal is what refuses Complete of n (not completed yet) before
// its prerequisites are looked at, in this order: CONFLICT (held by another
// session), INVALID_TRANSITION (its status; pending under opts.Strict),
// INVALID_FORMAT (opts.ActualHours out of range).
func completeRefusal(s *Spec, n *Node, opts TransitionOptions) error {
	if err := checkHolder(n, "complete", opts); err != nil {
		return err
	}
	if err := checkSource(s, n, "complete"); err != nil {
		return err
	}
	if opts.Strict && n.Status == StatusPending {
		return invalidTransition(n, "complete", "it is pending and strict completion requires starting it first")
	}
	if opts.ActualHours == nil {
		return nil
	}
	var vs []fieldViolation
	checkHours(&vs, "actual_hours", opts.ActualHours)
	if len(vs) > 0 {
		return vs[0].err()
	}
	return nil
}

// setActualHours records a completed task's actual_hours: hours (rounded to
// 2 decimals) when given; else, when none is recorded, the time since
// started_at (when that parses and is not after now).
func setActualHours(e *Node, hours *float64, now time.Time) {
	if hours != nil {
		e.SetMeta("actual_hours", round2(*hours))
		return
	}
	if _, has := e.Metadata["actual_hours"]; has {
		return
	}
	if start, ok := ParseTime(e.MetaString("started_at")); ok && !now.Before(start) {
		e.SetMeta("actual_hours", round2(now.Sub(start).Hours()))
	}
}

// Block moves a pending or in-progress leaf to blocked, recording
// blocked_at, blocker_type (default dependency), blocker_description
// (opts.Reason) and blocker_ticket.
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION, MISSING_REQUIRED (reason),
// INVALID_FORMAT (blocker_type), CONFLICT (held by another session, unless
// opts.TakeOver).
func Block(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n, err := transitionTarget(s, id, "block")
	if err != nil {
		return res, err
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusBlocked}
	if err := checkHolder(n, "block", opts); err != nil {
		return res, err
	}
	if err := checkSource(s, n, "block"); err != nil {
		return res, err
	}
	if strings.TrimSpace(opts.Reason) == "" {
		return res, newErr(errcode.MissingRequired, "reason", "blocking needs a reason")
	}
	bt := cmp.Or(opts.BlockerType, "dependency")
	if !containsString(BlockerTypes, bt) {
		return res, newErr(errcode.InvalidFormat, "blocker_type", "blocker_type must be one of %s", strings.Join(BlockerTypes, ", ")).
			WithDetail("received", truncateForDetails(bt)).WithDetail("allowed", BlockerTypes)
	}
	e := s.Edit(id)
	e.Status = StatusBlocked
	e.SetMeta("blocked_at", s.nowString())
	e.SetMeta("blocker_type", bt)
	e.SetMeta("blocker_description", strings.TrimSpace(opts.Reason))
	setOrDeleteMeta(e, "blocker_ticket", opts.Ticket)
	res.Entry = s.journalEntry(e, "blocker", "Task Blocked", strings.TrimSpace(opts.Reason), opts,
		map[string]any{"blocker_type": bt, "ticket": opts.Ticket})
	s.finish(id)
	return res, nil
}

// Unblock moves a blocked node back to pending, releases its claim
// (started_at, started_by), and moves its blocker into
// resolved_blockers[] ({blocked_at, blocker_type, description, ticket,
// resolved_at, resolution}). As the one exception to "transitions apply to
// leaves", it also accepts a blocked parent (an imported phase, or a task
// that gained subtasks while blocked): the parent's status is then
// recomputed from its children.
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION (not blocked), CONFLICT
// (blocked while another session held it, unless opts.TakeOver).
func Unblock(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil || id == RootID {
		return res, taskNotFound(s, "task_id", id)
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusPending}
	if err := checkSource(s, n, "unblock"); err != nil {
		return res, err
	}
	if err := checkHolder(n, "unblock", opts); err != nil {
		return res, err
	}
	e := s.Edit(id)
	resolution := cmp.Or(opts.Resolution, opts.Reason)
	resolved := map[string]any{
		"blocked_at": e.MetaString("blocked_at"), "blocker_type": e.MetaString("blocker_type"),
		"description": e.MetaString("blocker_description"), "ticket": e.MetaString("blocker_ticket"),
		"resolved_at": s.nowString(), "resolution": resolution,
	}
	list, _ := e.Metadata["resolved_blockers"].([]any)
	e.SetMeta("resolved_blockers", append(cloneValue(list).([]any), resolved))
	// Back to pending: the claim of whoever held it is released too (as
	// reopen does), so a later start is a fresh claim.
	e.DeleteMeta("blocked_at", "blocker_type", "blocker_description", "blocker_ticket", "started_at", "started_by")
	e.Status = StatusPending
	res.Entry = s.journalEntry(e, "status_change", "Task Unblocked", cmp.Or(resolution, "Unblocked "+id+"."), opts, nil)
	s.finish(id)
	res.To = s.Node(id).Status
	return res, nil
}

// Reopen moves a completed, in-progress or failed leaf back to pending and
// clears completed_at, needs_journaling, journaled_at, started_at and
// started_by (actual_hours and the retry history are kept).
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION, MISSING_REQUIRED (reason),
// CONFLICT (held by another session, unless opts.TakeOver).
func Reopen(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n, err := transitionTarget(s, id, "reopen")
	if err != nil {
		return res, err
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusPending}
	if err := checkSource(s, n, "reopen"); err != nil {
		return res, err
	}
	if err := checkHolder(n, "reopen", opts); err != nil {
		return res, err
	}
	if strings.TrimSpace(opts.Reason) == "" {
		return res, newErr(errcode.MissingRequired, "reason", "reopening needs a reason")
	}
	e := s.Edit(id)
	e.Status = StatusPending
	e.DeleteMeta("completed_at", "needs_journaling", "journaled_at", "started_at", "started_by")
	res.Entry = s.journalEntry(e, "status_change", "Task Reopened", strings.TrimSpace(opts.Reason), opts,
		map[string]any{"previous_status": string(n.Status)})
	s.finish(id)
	return res, nil
}

// Fail moves an in-progress leaf to failed (batch completion failure):
// retry_count + 1, failed_at, failure_reason (opts.Reason).
//
// Errors: TASK_NOT_FOUND, INVALID_TRANSITION, CONFLICT (held by another
// session, unless opts.TakeOver).
func Fail(s *Spec, id string, opts TransitionOptions) (res TransitionResult, err error) {
	defer s.mutate(&err)()
	n, err := transitionTarget(s, id, "fail")
	if err != nil {
		return res, err
	}
	res = TransitionResult{TaskID: id, From: n.Status, To: StatusFailed}
	if err := checkHolder(n, "fail", opts); err != nil {
		return res, err
	}
	if err := checkSource(s, n, "fail"); err != nil {
		return res, err
	}
	e := s.Edit(id)
	retries, _ := e.MetaInt("retry_count")
	e.Status = StatusFailed
	e.SetMeta("retry_count", retries+1)
	e.SetMeta("failed_at", s.nowString())
	if opts.Reason != "" {
		e.SetMeta("failure_reason", opts.Reason)
	}
	res.Entry = s.journalEntry(e, "status_change", "Task Failed", cmp.Or(opts.Reason, "Failed "+id+"."), opts, map[string]any{"retry_count": retries + 1})
	s.finish(id)
	return res, nil
}

// UpdateStatus moves a node to status through the matching action, with its
// checks: in_progress → Start, completed → Complete, blocked → Block,
// failed → Fail, pending → Unblock when blocked, else Reopen. As in
// foundry-mcp, a reason is not required here: a blank opts.Reason is
// opts.Note (journaled as the entry's content), and blocked without either
// is blocked with the reason "blocked".
//
// Errors: INVALID_FORMAT (unknown status), INVALID_TRANSITION (archived, or
// the action's own), and those of the action.
func UpdateStatus(s *Spec, id string, status Status, opts TransitionOptions) (TransitionResult, error) {
	if strings.TrimSpace(opts.Reason) == "" {
		opts.Reason = opts.Note
	}
	if status == StatusBlocked && strings.TrimSpace(opts.Reason) == "" {
		opts.Reason = DefaultBlockedReason
	}
	if action, ok := statusActions[status]; ok {
		return action(s, id, opts)
	}
	names := settableStatuses()
	return TransitionResult{}, newErr(errcode.InvalidFormat, "status", "status must be one of %s", strings.Join(names, ", ")).
		WithDetail("received", truncateForDetails(string(status))).WithDetail("allowed", names)
}

// statusActions maps each status to the action UpdateStatus runs for it.
var statusActions = map[Status]func(*Spec, string, TransitionOptions) (TransitionResult, error){
	StatusInProgress: Start,
	StatusCompleted:  Complete,
	StatusBlocked:    Block,
	StatusFailed:     Fail,
	StatusPending:    toPending,
	StatusArchived:   refuseArchive,
}

// toPending unblocks a blocked node and reopens any other.
func toPending(s *Spec, id string, opts TransitionOptions) (TransitionResult, error) {
	if n := s.Node(id); n != nil && n.Status == StatusBlocked {
		return Unblock(s, id, opts)
	}
	return Reopen(s, id, opts)
}

// refuseArchive refuses to archive a node: TASK_NOT_FOUND, or
// INVALID_TRANSITION (only the lifecycle tool archives, and only the root).
func refuseArchive(s *Spec, id string, _ TransitionOptions) (TransitionResult, error) {
	n := s.Node(id)
	if n == nil {
		return TransitionResult{}, taskNotFound(s, "task_id", id)
	}
	return TransitionResult{}, invalidTransition(n, "archive", "only the spec root is archived, by the lifecycle tool")
}

// settableStatuses names the statuses UpdateStatus accepts (all but
// archived), in Statuses order.
func settableStatuses() []string {
	var names []string
	for _, st := range Statuses() {
		if st != StatusArchived {
			names = append(names, string(st))
		}
	}
	return names
}

// MarkJournaled clears needs_journaling on a node and sets journaled_at: what
// a `journal add` for a task does (transition entries never do).
//
// Errors: TASK_NOT_FOUND.
func MarkJournaled(s *Spec, id string) (err error) {
	defer s.mutate(&err)()
	n := s.Node(id)
	if n == nil || id == RootID {
		return taskNotFound(s, "task_id", id)
	}
	if !n.NeedsJournaling() && n.MetaString("journaled_at") != "" {
		return nil
	}
	e := s.Edit(id)
	e.DeleteMeta("needs_journaling")
	e.SetMeta("journaled_at", s.nowString())
	s.touch()
	return nil
}

// Unjournaled lists completed nodes that still need a journal entry, in
// execution order.
func Unjournaled(s *Spec) []string {
	out := []string{}
	for n := range ExecutionOrder(s, RootID) {
		if n.Status == StatusCompleted && n.NeedsJournaling() {
			out = append(out, n.ID)
		}
	}
	return out
}
