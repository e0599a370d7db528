package tools

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// The work loop: next, prepare, info, check-deps and the status
// transitions. Each handler binds its arguments and calls one domain
// function in one store transaction (specs.ApplyTransition, specs.Next,
// specs.ClaimNext, specs.Prepare, specs.InfoOf, specs.DepsCheckOf).

// transitionOptions are the options of a status change asking for t. The
// session's holder (mcptool.HolderOf: key id, client name and a label, never
// the session id) is what start records as started_by and what decides
// CONFLICT: a transition of a task another session holds is refused unless force
// (TakeOver); for complete, force also ignores unfinished prerequisites.
// foundry's note is the journal content (completion_note wins on complete).
func (d *Deps) transitionOptions(r *mcptool.Request, t transition) specs.TransitionOptions {
	o := specs.TransitionOptions{
		Agent: r.Session.Holder, Author: author(r), Force: t.Force, TakeOver: t.Force, Strict: d.StrictComplete,
		Note: orElse(t.CompletionNote, t.Note), Reason: t.Reason, BlockerType: t.BlockerType,
		Ticket: t.Ticket, Resolution: t.Res, ActualHours: t.ActualHours,
	}
	return o
}

// TransitionAnswer is the answer of a status change. A completion names
// the next step in next_calls (task next with claim, or lifecycle
// complete once every task is done) and leaves out the task node: the
// agent has just worked on it, and the next call brings the next one.
type TransitionAnswer struct {
	Mutation
	specs.TransitionView
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

// callNext is the loop's step after a completion (with claim: true, the
// next task claimed).
var callNext = specCall{tool: "task", action: "next"}

// afterCompletion is a's answer once its task is completed: no task
// node, and the call that takes the next step.
func afterCompletion(a TransitionAnswer) TransitionAnswer {
	a.Task = nil
	if a.DryRun {
		return a
	}
	next := callNext.on(a.SpecID, "")
	next.Args["claim"] = true
	if a.Progress.TotalTasks > 0 && a.Progress.CompletedTasks == a.Progress.TotalTasks {
		next = callCompleteSpec.on(a.SpecID, "")
	}
	a.NextCalls = []core.NextCall{next}
	return a
}

// taskTransition is the handler of a transition action over task_id: one
// stored mutation whose journal entry is appended in the same transaction;
// the domain's warnings (already completed, already started by this
// session, forced completion) become TASK_UNCHANGED meta warnings.
func taskTransition[T transitionCall](d *Deps, do specs.Transition) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a T) mcptool.Result {
		return d.transitionTo(ctx, r, a, do)
	})
}

// transitionTo runs transition do over a's task.
func (d *Deps) transitionTo(ctx context.Context, r *mcptool.Request, a transitionCall, do specs.Transition) mcptool.Result {
	id := a.task()
	res := mutateTo(ctx, d, r, a.write(), func(sp *specs.Spec, j specs.JournalWriter) (TransitionAnswer, error) {
		v, err := specs.ApplyTransition(sp, j, do, id, d.transitionOptions(r, a.transition()))
		return TransitionAnswer{TransitionView: v}, err
	})
	if ans, ok := res.Data.(TransitionAnswer); ok {
		if ans.To == specs.StatusCompleted {
			res.Data = afterCompletion(ans)
		}
		for _, w := range ans.Warnings {
			res.Meta = append(res.Meta, warnOf("TASK_UNCHANGED", w, taskContext{TaskID: id}))
		}
	}
	return res
}

// taskUpdateStatus moves task_id to status through the matching
// transition (specs.To).
func (d *Deps) taskUpdateStatus(ctx context.Context, r *mcptool.Request, a taskUpdateStatusArgs) mcptool.Result {
	return d.transitionTo(ctx, r, a, specs.To(specs.Status(a.Status)))
}

// TaskNextAnswer is next's answer: the task found, or why none is
// actionable.
type TaskNextAnswer struct {
	Mutation
	NextView
}

// NextView is next's answer without its mutation: the task found
// (specs.FoundTask), or why none is actionable (NothingActionable).
type NextView struct {
	Found        bool `json:"found"`
	SpecComplete bool `json:"spec_complete"`
	Claimed      bool `json:"claimed"`
	*specs.FoundTask
	*NothingActionable
}

// nextView is next's result o on spec specID as the answer shows it.
func nextView(specID string, o specs.NextOutcome) NextView {
	return NextView{Found: o.Found, SpecComplete: o.SpecComplete, Claimed: o.Claimed, FoundTask: o.Task,
		NothingActionable: nothingActionable(specID, o.Idle)}
}

// taskNext answers the next actionable task (specs.Next). With claim it
// runs as a mutation that also starts the task in the same transaction
// (specs.ClaimNext), so concurrent claimers (other sessions, other
// processes) each get a different task. Nothing actionable is a success
// with found:false, the blocked and in-progress tasks, spec_complete and a
// hint; when work remains but none is actionable a NO_ACTIONABLE_TASK
// warning says so.
func (d *Deps) taskNext(ctx context.Context, r *mcptool.Request, a taskNextArgs) mcptool.Result {
	var res mcptool.Result
	if !a.Claim {
		res = readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (TaskNextAnswer, error) {
			return TaskNextAnswer{Mutation: Mutation{SpecID: sp.Header.SpecID, Version: sp.Header.Version}, NextView: nextView(sp.Header.SpecID, specs.Next(sp))}, nil
		})
	} else {
		res = mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (TaskNextAnswer, error) {
			o, err := specs.ClaimNext(sp, j, d.transitionOptions(r, transition{}))
			return TaskNextAnswer{NextView: nextView(sp.Header.SpecID, o)}, err
		})
	}
	if ans, ok := res.Data.(TaskNextAnswer); ok && !ans.Found && !ans.SpecComplete {
		res.Meta = append(res.Meta, warn("NO_ACTIONABLE_TASK",
			"No task can start now: data.next_call, when present, takes the next step; see data.failed (retry with its retry call), data.blocked and data.in_progress.", nil))
	}
	return res
}

// TaskPrepareAnswer is prepare's answer: the task's context bundle (a
// research node's with its linked digests), or why nothing is actionable.
type TaskPrepareAnswer struct {
	SpecID       string `json:"spec_id"`
	Found        bool   `json:"found"`
	SpecComplete *bool  `json:"spec_complete,omitempty"`
	*specs.PreparedTask[LinkedDigest]
	*NothingActionable
}

// prepareAnswer is prepare's result p as the answer shows it:
// spec_complete only when nothing is actionable.
func prepareAnswer(p specs.Prepared[LinkedDigest]) TaskPrepareAnswer {
	a := TaskPrepareAnswer{SpecID: p.SpecID, Found: p.Task != nil, PreparedTask: p.Task, NothingActionable: nothingActionable(p.SpecID, p.Idle)}
	if p.Idle != nil {
		a.SpecComplete = &p.SpecComplete
	}
	return a
}

// taskPrepare assembles the context bundle of task_id (default: the next
// task, not claimed; specs.Prepare). A research node's linked digests
// (summaries, key points, top evidence) come from their own reads, after
// the spec's transaction has ended.
func (d *Deps) taskPrepare(ctx context.Context, _ *mcptool.Request, args taskPrepareArgs) mcptool.Result {
	a, err := readAnswer(ctx, d, args.SpecID, func(sp *specs.Spec, j specs.JournalReader) (TaskPrepareAnswer, error) {
		var n *specs.Node
		if args.TaskID != "" {
			var err error
			if n, err = taskArg(sp, "task_id", args.TaskID); err != nil {
				return TaskPrepareAnswer{SpecID: sp.Header.SpecID}, err
			}
		}
		p, err := specs.Prepare[LinkedDigest](sp, j, n)
		return prepareAnswer(p), err
	})
	if err != nil {
		return mcptool.Fail(err)
	}
	if p := a.PreparedTask; p != nil && d.Research != nil && p.Task.Type == specs.TypeResearch {
		if ids := digestIDsOf(p.Task.Metadata); len(ids) > 0 {
			digests := d.digestSummaries(ctx, ids)
			p.Context.Digests = &digests
		}
	}
	return mcptool.OK(a)
}

// TaskInfoAnswer is one node with whether it can start.
type TaskInfoAnswer = specs.TaskInfo

// taskInfo answers one node with whether it can start (specs.InfoOf).
func (d *Deps) taskInfo(ctx context.Context, r *mcptool.Request, a taskNodeArgs) mcptool.Result {
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (TaskInfoAnswer, error) {
		n, err := taskArg(sp, "task_id", a.TaskID)
		if err != nil {
			return TaskInfoAnswer{}, err
		}
		return specs.InfoOf(sp, n, r.Session.Holder), nil
	})
}

// TaskCheckDepsAnswer is a node's dependency check.
type TaskCheckDepsAnswer = specs.TaskDepsCheck

// taskCheckDeps answers a node's prerequisites, inherited ones included
// (specs.DepsCheckOf).
func (d *Deps) taskCheckDeps(ctx context.Context, _ *mcptool.Request, a taskNodeArgs) mcptool.Result {
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (TaskCheckDepsAnswer, error) {
		n, err := taskArg(sp, "task_id", a.TaskID)
		if err != nil {
			return TaskCheckDepsAnswer{}, err
		}
		return specs.DepsCheckOf(sp, n), nil
	})
}

// taskArg is node id, given as field (never the root), or TASK_NOT_FOUND
// with a recovery that lists the tree.
func taskArg(sp *specs.Spec, field, id string) (*specs.Node, error) {
	n := sp.Node(id)
	if n == nil || id == specs.RootID {
		return nil, specs.NodeNotFound(sp, field, id)
	}
	return n, nil
}
