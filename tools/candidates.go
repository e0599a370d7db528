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
	switch {
	case d.Specs == nil:
	case param == "spec_id":
		return d.specCandidates(ctx, tool, action)
	case param == "task_id" && tool == "task" && args.String("spec_id") != "":
		return d.taskCandidates(ctx, action, args.String("spec_id"))
	}
	return nil, "", nil
}

// specCandidates are the spec_id candidates of tool's action: the specs
// of the folder it works on (pending for lifecycle activate, active
// otherwise) and the spec list call of that folder.
func (d *Deps) specCandidates(ctx context.Context, tool, action string) ([]string, string, map[string]any) {
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
}

// taskMovesFrom is the status a task action moves a task from, for the
// actions that have one.
var taskMovesFrom = map[string]specs.Status{"complete": specs.StatusInProgress, "block": specs.StatusInProgress,
	"unblock": specs.StatusBlocked, "reopen": specs.StatusCompleted}

// taskCandidates are the task_id candidates of task action on spec: its
// work nodes in the status the action moves a task from (sorted, at most
// maxCandidates) and the task list call of that status; none, and the
// spec's task list, for an action no status fits.
func (d *Deps) taskCandidates(ctx context.Context, action, spec string) ([]string, string, map[string]any) {
	from := taskMovesFrom[action]
	list := toTaskList.Args(taskListArgs{specArgs: specOf(spec), StatusFilter: string(from)})
	if from == "" {
		return nil, toTaskList.Tool, list
	}
	var ids []string
	err := d.Specs.ReadSpec(ctx, spec, func(sp *specs.Spec, _ specs.JournalReader) error {
		ids = workNodesIn(sp, from)
		return nil
	})
	if err != nil {
		return nil, "", nil
	}
	slices.Sort(ids)
	return ids[:min(len(ids), maxCandidates)], "task", list
}

// workNodesIn are the ids of sp's counted work nodes in status, in
// sp.IDs order.
func workNodesIn(sp *specs.Spec, status specs.Status) []string {
	var ids []string
	for _, id := range sp.IDs() {
		if n := sp.Node(id); n != nil && n.Status == status && n.Type.Counted() {
			ids = append(ids, id)
		}
	}
	return ids
}
