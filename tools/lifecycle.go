package tools

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

const lifecycleDescription = `Use this when a spec changes folder: activate it when work starts (pending → active), complete it when every task is done (force to complete early), archive it when it will not be pursued, move it to any allowed folder, or read its lifecycle state and allowed moves. ` +
	`Use task instead to change the status of individual tasks, and spec list with a status filter to see the specs of one folder. ` +
	`Typical composition: authoring spec-create → lifecycle activate → task next … → lifecycle complete. Moves are journaled; moving to the current folder is a success with a warning.`

func lifecycleTool(d *Deps) *Tool {
	move := func(to specs.Lifecycle) Handler {
		return func(ctx context.Context, r *Request) Result {
			target := to
			if target == "" {
				target = specs.Lifecycle(r.Args.String("to_folder"))
			}
			var warnings []string
			res := d.mutate(ctx, r, func(sp *specs.Spec, j specs.JournalWriter) (map[string]any, error) {
				from := sp.Header.Lifecycle
				if from == "" {
					from = specs.LifecyclePending
				}
				var err error
				warnings, err = specs.MoveLifecycle(sp, target, r.Args.Bool("force"))
				if err != nil {
					return nil, err
				}
				if from != target {
					j.Append(specs.JournalEntry{Timestamp: specs.FormatTime(d.clock()()), EntryType: "status_change",
						Title: "Lifecycle " + string(from) + " → " + string(target), Content: "Spec moved from " + string(from) + " to " + string(target) + ".",
						Author: author(r), Metadata: map[string]any{"from": string(from), "to": string(target), "force": r.Args.Bool("force")}})
				}
				return map[string]any{"from_folder": from, "to_folder": target, "lifecycle": target, "progress_percentage": sp.Header.ProgressPercentage}, nil
			})
			for _, w := range warnings {
				res.Meta = append(res.Meta, warn("LIFECYCLE_UNCHANGED", w, nil))
			}
			return res
		}
	}
	folders := make([]string, 0, 4)
	for _, l := range specs.Lifecycles() {
		folders = append(folders, string(l))
	}
	w := func(name, summary string, required, optional []string, h Handler) Action {
		return Action{Name: name, Summary: summary, Required: append([]string{"spec_id"}, required...), Optional: append(optional, mutationArgs...),
			SideEffects: EffectWrite, Idempotent: true, Latency: LatencyFast, Handler: h}
	}
	return &Tool{
		Name:        "lifecycle",
		Title:       "specd lifecycle",
		Description: lifecycleDescription,
		Params: []Param{
			pSpecID, pDryRun, pExpectedVersion,
			{Name: "to_folder", Type: String, Enum: folders, Description: "Target folder: pending, active, completed or archived."},
			{Name: "force", Type: Boolean, Description: "complete/move to completed: allow it below 100% progress."},
		},
		Actions: []Action{
			w("move", "Moves the spec to to_folder (pending → active|archived; active → pending|completed|archived; completed → active|archived; archived → pending|active).",
				[]string{"to_folder"}, []string{"force"}, move("")),
			w("activate", "Moves the spec to active (work has started).", nil, nil, move(specs.LifecycleActive)),
			w("complete", "Moves the spec to completed; needs 100% progress unless force.", nil, []string{"force"}, move(specs.LifecycleCompleted)),
			w("archive", "Moves the spec to archived (not pursued: abandoned, superseded, deprioritised).", nil, nil, move(specs.LifecycleArchived)),
			{
				Name: "state", Summary: "The spec's folder, status, progress and the moves allowed from here.",
				Required: []string{"spec_id"}, SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast,
				Handler: func(ctx context.Context, r *Request) Result {
					return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
						l := sp.Header.Lifecycle
						if l == "" {
							l = specs.LifecyclePending
						}
						return map[string]any{
							"lifecycle": l, "status": sp.Header.Status, "progress_percentage": sp.Header.ProgressPercentage,
							"version": sp.Header.Version, "allowed": specs.AllowedLifecycleMoves(l),
							"can_complete": sp.Header.ProgressPercentage == 100,
						}, nil, nil
					})
				},
			},
		},
	}
}
