package tools

import (
	"context"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

const lifecycleDescription = `Use this when a spec changes folder: activate it when work starts (pending → active), complete it when every task is done (force to complete early), archive it when it will not be pursued, move it to any allowed folder, or read its lifecycle state and allowed moves. ` +
	`Use task instead to change the status of individual tasks, and spec list with a status filter to see the specs of one folder. ` +
	`Typical composition: authoring spec-create → lifecycle activate → task next … → lifecycle complete. Moves are journaled; moving to the current folder is a success with a warning.`

func lifecycleTool(d *Deps) *mcptool.Tool {
	folders := make([]string, 0, 4)
	for _, l := range specs.Lifecycles() {
		folders = append(folders, string(l))
	}
	w := func(name, summary string, required, optional []string, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: append([]string{"spec_id"}, required...), Optional: append(append(optional, mutationArgs...), lockArgs...),
			SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyFast, Answer: LifecycleMoveAnswer{}, Typed: h}
	}
	return &mcptool.Tool{
		Name:        "lifecycle",
		Title:       "specd lifecycle",
		Description: lifecycleDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion,
			{Name: "to_folder", Type: mcptool.String, Enum: folders, Synonyms: specs.LifecycleSynonyms, Description: "Target folder: pending, active, completed or archived."},
			{Name: "force", Type: mcptool.Boolean, Description: "complete/move to completed: allow it below 100% progress; activate/archive accept it without effect, as foundry-mcp does."},
			lockBypassParams[0], lockBypassParams[1],
		},
		Actions: []mcptool.Action{
			w("move", "Moves the spec to to_folder (pending → active|archived; active → pending|completed|archived; completed → active|archived; archived → pending|active).",
				[]string{"to_folder"}, []string{"force"}, mcptool.Typed(d.lifecycleMove)),
			w("activate", "Moves the spec to active (work has started).", nil, []string{"force"}, d.lifecycleTo(specs.LifecycleActive)),
			w("complete", "Moves the spec to completed; needs 100% progress unless force.", nil, []string{"force"}, d.lifecycleTo(specs.LifecycleCompleted)),
			w("archive", "Moves the spec to archived (not pursued: abandoned, superseded, deprioritised).", nil, []string{"force"}, d.lifecycleTo(specs.LifecycleArchived)),
			{
				Name: "state", Summary: "The spec's folder, status, progress, task counts and the moves allowed from here.",
				Required: []string{"spec_id"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Answer: LifecycleStateAnswer{}, Typed: mcptool.Typed(d.lifecycleState),
			},
		},
	}
}

// LifecycleMoveAnswer is the answer of lifecycle move, activate, complete
// and archive.
type LifecycleMoveAnswer struct {
	Mutation
	specs.LifecycleMove
}

// lifecycleTo moves the spec to folder to and journals the move
// (specs.MoveSpec); moving to the current folder is a success with a
// LIFECYCLE_UNCHANGED warning.
func (d *Deps) lifecycleTo(to specs.Lifecycle) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a lifecycleArgs) mcptool.Result {
		return d.moveSpec(ctx, r, a, to)
	})
}

// lifecycleMove is move: the spec to to_folder.
func (d *Deps) lifecycleMove(ctx context.Context, r *mcptool.Request, a lifecycleMoveArgs) mcptool.Result {
	return d.moveSpec(ctx, r, a.lifecycleArgs, specs.Lifecycle(a.ToFolder))
}

// moveSpec moves a's spec to folder target (specs.MoveSpec); the domain's
// warnings (already there) become LIFECYCLE_UNCHANGED meta warnings.
func (d *Deps) moveSpec(ctx context.Context, r *mcptool.Request, a lifecycleArgs, target specs.Lifecycle) mcptool.Result {
	ans, err := mutateAnswer(ctx, d, r, a.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (LifecycleMoveAnswer, error) {
		m, err := specs.MoveSpec(sp, j, target, a.Force, author(r))
		return LifecycleMoveAnswer{LifecycleMove: m}, err
	})
	res := answer(ans, err)
	for _, w := range ans.Warnings {
		res.Meta = append(res.Meta, warn("LIFECYCLE_UNCHANGED", w, nil))
	}
	return res
}

// The lifecycle tool's typed arguments (mcptool.Typed).
type (
	lifecycleArgs struct {
		lockedWriteArgs
		Force bool `arg:"force"`
	}
	lifecycleMoveArgs struct {
		lifecycleArgs
		ToFolder string `arg:"to_folder,required"`
	}
)

type LifecycleStateAnswer = specs.LifecycleState

func (d *Deps) lifecycleState(ctx context.Context, _ *mcptool.Request, a specArgs) mcptool.Result {
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (LifecycleStateAnswer, error) {
		return specs.StateOf(sp), nil
	})
}
