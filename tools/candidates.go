package tools

import (
	"context"
	"slices"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// maxCandidates bounds how many candidate values a refusal for a missing
// parameter names.
const maxCandidates = 20

// missingCandidates is specd's mcptool.Candidates: what could fill a
// required parameter a call left out, and the call that lists it.
//
//   - spec_id: the specs of the folder the action works on — pending for
//     lifecycle activate, active for everything else — listed by spec list
//     with that status;
//   - task_id (with spec_id given): the work nodes in the status the action
//     moves a task from — in_progress for complete and block, blocked for
//     unblock, completed for reopen — listed by task list with that
//     status_filter; for other actions no value fits by status, and the
//     listing call is task list of the spec.
//
// Exactly one value makes the refusal name the corrected call; a store
// error names no candidates (the refusal keeps its schema call).
func (d *Deps) missingCandidates(ctx context.Context, tool, action, param string, args mcptool.Args) ([]string, string, map[string]any) {
	if d.Specs == nil {
		return nil, "", nil
	}
	switch param {
	case "spec_id":
		folder := string(specs.LifecycleActive)
		if tool == "lifecycle" && action == "activate" {
			folder = string(specs.LifecyclePending)
		}
		rows, _, err := d.Specs.ListSpecs(ctx, folder, "", maxCandidates)
		if err != nil {
			return nil, "", nil
		}
		ids := make([]string, 0, len(rows))
		for _, r := range rows {
			ids = append(ids, r.SpecID)
		}
		return ids, toSpecList.Tool, toSpecList.Args(specListArgs{Status: folder})
	case "task_id":
		spec := args.String("spec_id")
		if tool != "task" || spec == "" {
			return nil, "", nil
		}
		from := map[string]specs.Status{"complete": specs.StatusInProgress, "block": specs.StatusInProgress,
			"unblock": specs.StatusBlocked, "reopen": specs.StatusCompleted}[action]
		list := toTaskList.Args(taskListArgs{specArgs: specOf(spec), StatusFilter: string(from)})
		if from == "" {
			return nil, toTaskList.Tool, list
		}
		var ids []string
		err := d.Specs.ReadSpec(ctx, spec, func(sp *specs.Spec, _ specs.JournalReader) error {
			ids = nil // fn may run more than once (specs.Repo)
			for _, id := range sp.IDs() {
				if n := sp.Node(id); n != nil && n.Status == from && n.Type.Counted() {
					ids = append(ids, id)
				}
			}
			return nil
		})
		if err != nil {
			return nil, "", nil
		}
		slices.Sort(ids)
		return ids[:min(len(ids), maxCandidates)], "task", list
	}
	return nil, "", nil
}
