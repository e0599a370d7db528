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
	w := func(name, summary string, required, optional []string, h mcptool.Handler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: append([]string{"spec_id"}, required...), Optional: append(append(optional, mutationArgs...), lockArgs...),
			SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyFast, Answer: LifecycleMoveAnswer{}, Handler: h}
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
				[]string{"to_folder"}, []string{"force"}, d.lifecycleMove("")),
			w("activate", "Moves the spec to active (work has started).", nil, []string{"force"}, d.lifecycleMove(specs.LifecycleActive)),
			w("complete", "Moves the spec to completed; needs 100% progress unless force.", nil, []string{"force"}, d.lifecycleMove(specs.LifecycleCompleted)),
			w("archive", "Moves the spec to archived (not pursued: abandoned, superseded, deprioritised).", nil, []string{"force"}, d.lifecycleMove(specs.LifecycleArchived)),
			{
				Name: "state", Summary: "The spec's folder, status, progress, task counts and the moves allowed from here.",
				Required: []string{"spec_id"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Answer: LifecycleStateAnswer{}, Handler: d.lifecycleState,
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

// lifecycleMove moves the spec to to (to_folder when to is empty) and
// journals the move (specs.MoveSpec); moving to the current folder is a
// success with a LIFECYCLE_UNCHANGED warning.
func (d *Deps) lifecycleMove(to specs.Lifecycle) mcptool.Handler {
	return func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		target := to
		if target == "" {
			target = specs.Lifecycle(r.Args.String("to_folder"))
		}
		a, err := mutateAnswer(ctx, d, r, func(sp *specs.Spec, j specs.JournalWriter) (LifecycleMoveAnswer, error) {
			m, err := specs.MoveSpec(sp, j, target, r.Args.Bool("force"), author(r))
			return LifecycleMoveAnswer{LifecycleMove: m}, err
		})
		res := answer(a, err)
		for _, w := range a.Warnings {
			res.Meta = append(res.Meta, warn("LIFECYCLE_UNCHANGED", w, nil))
		}
		return res
	}
}

// LifecycleStateAnswer is lifecycle state's answer.
type LifecycleStateAnswer = specs.LifecycleState

func (d *Deps) lifecycleState(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return readTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (LifecycleStateAnswer, error) {
		return specs.StateOf(sp), nil
	})
}
