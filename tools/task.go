package tools

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

const taskDescription = `Use this when you work through a spec's tasks: get the next task (next, claim:true starts it atomically so two agents never take the same one; prepare adds its context), read one (info, check-deps), change its status (start, complete, block, unblock, reopen, update-status), edit the plan (add, remove, move, add/remove-dependency, add-requirement, update-estimate, update-metadata, metadata-batch), list (list, query, hierarchy, list-blocked, progress), or run several in parallel (prepare-batch → start-batch → complete-batch; reset-batch frees stale claims). ` +
	`Use authoring instead to add phases, journal to record decisions, verification to record a verify step's result. ` +
	`Typical loop: task next(claim:true) → work → task complete(completion_note) → task next …; found:false explains what is blocked or in progress. Every mutation takes dry_run and expected_version.`

// Status values a caller may ask for (archived belongs to the lifecycle).
var taskStatuses = []string{"pending", "in_progress", "completed", "blocked", "failed"}

// taskTool is the task tool: the agent's work loop over one spec. Every
// status change goes through the domain's transitions (specs.Start, …),
// whose journal entry is appended in the same store transaction; every
// mutation is one MutateSpec call, so it reads the latest state inside its
// transaction and two agents cannot both claim or start one task.
func taskTool(d *Deps) *mcptool.Tool {
	readA := func(name, summary string, required, optional []string, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: append([]string{"spec_id"}, required...), Optional: optional,
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Answer: answer, Typed: h}
	}
	writeA := func(name, summary string, required, optional []string, idempotent, destructive bool, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: append([]string{"spec_id"}, required...), Optional: append(append(optional, mutationArgs...), lockArgs...),
			SideEffects: mcptool.EffectWrite, Idempotent: idempotent, Destructive: destructive, Latency: mcptool.LatencyFast, Answer: answer, Typed: h}
	}
	pages := []string{"cursor", "limit"}
	nodeTypes := make([]string, 0, 6)
	for _, t := range specs.NodeTypes() {
		if t != specs.TypeSpec {
			nodeTypes = append(nodeTypes, string(t))
		}
	}
	t := &mcptool.Tool{
		Name:        "task",
		Title:       "specd task",
		Description: taskDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion, pCursor, pLimit(core.PageTasks),
			idParam("task_id", "Node id, e.g. task-1-2."),
			{Name: "claim", Type: mcptool.Boolean, Description: "Also start the task, atomically."},
			{Name: "completion_note", Type: mcptool.String, Description: "What was done (journaled)."},
			{Name: "note", Type: mcptool.String, Description: "Journaled with the change."},
			{Name: "force", Type: mcptool.Boolean, Description: "Act on a task another session started (otherwise CONFLICT naming started_by); complete: also ignore unfinished prerequisites."},
			{Name: "actual_hours", Type: mcptool.Number, Min: f64(0), Max: f64(100000), Description: "Hours spent (default: since start)."},
			{Name: "reason", Type: mcptool.String, Description: "Why (blocker description, reopen reason)."},
			{Name: "blocker_type", Type: mcptool.String, Enum: specs.BlockerTypes, Synonyms: specs.BlockerTypeSynonyms, Description: "Default dependency."},
			{Name: "ticket", Type: mcptool.String, MaxLength: 500, Description: "Blocker's tracking ticket."},
			{Name: "resolution", Type: mcptool.String, Description: "How it was resolved."},
			{Name: "status", Type: mcptool.String, Enum: taskStatuses, Synonyms: specs.StatusSynonyms, Description: "Target status, or a filter."},
			idParam("parent", "Parent node (phase or task); a filter for query (children) and metadata-batch (subtree)."),
			{Name: "title", Type: mcptool.String, MaxLength: 500, Description: "Node title."},
			{Name: "task_type", Type: mcptool.String, Enum: []string{"task", "subtask", "verify", "research"}, Description: "Default task."},
			{Name: "description", Type: mcptool.String, Description: "Task description."},
			{Name: "estimated_hours", Type: mcptool.Number, Min: f64(0), Max: f64(100000), Description: "Estimated hours."},
			{Name: "complexity", Type: mcptool.String, Enum: specs.Complexities, Synonyms: specs.LevelSynonyms, Description: "low, medium or high."},
			{Name: "position", Type: mcptool.Integer, Min: f64(0), Description: "0-based, among the parent's children (default: before trailing verify nodes)."},
			{Name: "file_path", Type: mcptool.String, MaxLength: 1000, Description: "Repo-relative path the task changes."},
			{Name: "task_category", Type: mcptool.String, Enum: specs.TaskCategories, Synonyms: specs.TaskCategorySynonyms, Description: "investigation, implementation, refactoring, decision or research."},
			{Name: "acceptance_criteria", Type: mcptool.Array, Items: mcptool.String, MaxItems: 50, Description: "Checks that say it is done."},
			{Name: "verification_type", Type: mcptool.String, Enum: specs.VerificationTypes, Synonyms: specs.VerificationTypeSynonyms, Description: "Verify nodes."},
			{Name: "command", Type: mcptool.String, MaxLength: 2000, Description: "Verify nodes: the check to run. session: start|status|pause|resume|rebase|end|list|reset; session-step: next|report|replay|heartbeat."},
			{Name: "expected", Type: mcptool.String, Description: "Verify nodes: what passing looks like."},
			{Name: "blocking_mode", Type: mcptool.String, Enum: specs.BlockingModes, Synonyms: specs.BlockingModeSynonyms, Description: "Research nodes (default soft; hard blocks)."},
			{Name: "research_type", Type: mcptool.String, MaxLength: 100},
			{Name: "query", Type: mcptool.String, MaxLength: 2000},
			{Name: "status_note", Type: mcptool.String, Description: "Free-form note on the task's state."},
			{Name: "metadata", Type: mcptool.Object, Description: "Metadata keys to set (null deletes)."},
			{Name: "cascade", Type: mcptool.Boolean, Description: "Also remove children."},
			idParam("target_id", "Other end of the edge."),
			{Name: "dependency_type", Type: mcptool.String, Enum: specs.DependencyTypes, Synonyms: specs.DependencyTypeSynonyms, Description: "blocks (default: task_id blocks target_id), blocked_by or depends (informational)."},
			{Name: "requirement_type", Type: mcptool.String, Enum: specs.RequirementTypes, Synonyms: specs.RequirementTypeSynonyms, Description: "Default acceptance."},
			{Name: "text", Type: mcptool.String, Description: "Requirement text."},
			{Name: "pattern", Type: mcptool.String, MaxLength: 256, MinLength: 1, Description: "RE2 regex over titles and ids."},
			{Name: "node_type", Type: mcptool.String, Enum: nodeTypes, Description: "Only nodes of this type."},
			{Name: "updates", Type: mcptool.Object, Description: "Metadata keys to set on every match."},
			{Name: "update_metadata", Type: mcptool.Object, Description: "= updates"},
			{Name: "custom_metadata", Type: mcptool.Object, Description: "= metadata"},
			idParam("parent_filter", "= parent"),
			{Name: "category", Type: mcptool.String, MaxLength: 100},
			{Name: "labels", Type: mcptool.Object},
			{Name: "owners", Type: mcptool.Array, Items: mcptool.String, MaxItems: 50},
			idParam("node_id", "Default spec-root."),
			{Name: "include_phases", Type: mcptool.Boolean, Description: "Default true."},
			{Name: "max_depth", Type: mcptool.Integer, Min: f64(0), Max: f64(10), Clamp: true, Description: "Deepest level (phases 1, tasks 2…; default 2; 0: all)."},
			{Name: "status_filter", Type: mcptool.String, Enum: taskStatuses, Synonyms: specs.StatusSynonyms},
			{Name: "include_completed", Type: mcptool.Boolean},
			{Name: "include_metadata", Type: mcptool.Boolean, Description: "Include metadata and dependencies."},
			{Name: "max_tasks", Type: mcptool.Integer, Min: f64(1), Max: f64(20), Clamp: true, Description: "Default 3; over 20 is clamped."},
			{Name: "token_budget", Type: mcptool.Integer, Min: f64(100), Max: f64(100000), Description: "Stop before the tasks exceed this many tokens."},
			idListParam("task_ids", 50, "Tasks to start (start-batch) or reset (reset-batch)."),
			{Name: "completions", Type: mcptool.Array, Items: mcptool.Object, MaxItems: 50, Description: "[{task_id, success, note? (or completion_note), actual_hours?}]."},
			{Name: "threshold_hours", Type: mcptool.Number, Min: f64(0), Max: f64(100000), Description: "Default 24."},
		},
		Actions: []mcptool.Action{
			{
				Name: "next", Summary: "Next actionable task; claim:true starts it atomically. None → found:false with blocked, in_progress, spec_complete.",
				Required: []string{"spec_id"}, Optional: append(append([]string{"claim"}, mutationArgs...), lockArgs...),
				SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Answer: TaskNextAnswer{}, Typed: mcptool.Typed(d.taskNext),
			},
			readA("prepare", "Context for a task (default: next): deps, previous sibling + journal excerpt, parent, phase progress, last 3 journal entries, hints.",
				nil, []string{"task_id"}, TaskPrepareAnswer{}, mcptool.Typed(d.taskPrepare)),
			readA("info", "One node with metadata, dependencies, can_start.", []string{"task_id"}, nil, TaskInfoAnswer{}, mcptool.Typed(d.taskInfo)),
			readA("check-deps", "Prerequisites (own and inherited) with status, what it blocks, can_start.",
				[]string{"task_id"}, nil, TaskCheckDepsAnswer{}, mcptool.Typed(d.taskCheckDeps)),
			writeA("start", "pending|failed → in_progress (TASK_BLOCKED, CONFLICT if another session holds it; force takes it over).",
				[]string{"task_id"}, []string{"force", "note"}, false, false, TransitionAnswer{}, taskTransition[taskStartArgs](d, specs.Start)),
			writeA("complete", "→ completed with completion_note (CONFLICT if another session holds it); force overrides that and unfinished prerequisites.",
				[]string{"task_id"}, []string{"completion_note", "note", "force", "actual_hours"}, false, false, TransitionAnswer{}, taskTransition[taskCompleteArgs](d, specs.Complete)),
			writeA("reopen", "completed|in_progress|failed → pending, with reason.", []string{"task_id", "reason"}, []string{"force"}, false, false, TransitionAnswer{}, taskTransition[taskReopenArgs](d, specs.Reopen)),
			writeA("update-status", "Moves to status through the matching action and its checks (blocked: reason defaults to note, then \"blocked\").",
				[]string{"task_id", "status"}, []string{"reason", "note", "completion_note", "force", "blocker_type", "ticket", "resolution"}, false, false,
				TransitionAnswer{}, mcptool.Typed(d.taskUpdateStatus)),
			writeA("block", "→ blocked with reason, blocker_type, ticket.",
				[]string{"task_id", "reason"}, []string{"blocker_type", "ticket", "force"}, false, false, TransitionAnswer{}, taskTransition[taskBlockArgs](d, specs.Block)),
			writeA("unblock", "blocked → pending; blocker kept in resolved_blockers.",
				[]string{"task_id"}, []string{"resolution", "force"}, false, false, TransitionAnswer{}, taskTransition[taskUnblockArgs](d, specs.Unblock)),
			readA("list-blocked", "Blocked tasks with blocker and waiting_on (paged).",
				nil, pages, TaskBlockedAnswer{}, mcptool.Typed(d.taskListBlocked)),
			writeA("add", "Adds a node under parent (default: before trailing verify nodes).",
				[]string{"parent", "title"}, []string{"task_type", "description", "estimated_hours", "position", "file_path", "task_category", "acceptance_criteria",
					"complexity", "verification_type", "command", "expected", "blocking_mode", "research_type", "query", "metadata"}, false, false, TaskAddAnswer{}, mcptool.Typed(d.taskAdd)),
			writeA("remove", "Removes a node (cascade: its children) and its edges.", []string{"task_id"}, []string{"cascade"}, false, true, TaskRemoveAnswer{}, mcptool.Typed(d.taskRemove)),
			writeA("move", "Moves a node to parent/position (0-based).",
				[]string{"task_id"}, []string{"parent", "position"}, false, false, TaskMoveAnswer{}, mcptool.Typed(d.taskMove)),
			writeA("add-dependency", "Adds an edge (both halves); cycles refused.",
				[]string{"task_id", "target_id"}, []string{"dependency_type"}, false, false, TaskDependencyAnswer{}, mcptool.Typed(d.taskDependency(specs.AddDependency))),
			writeA("remove-dependency", "Removes an edge (both halves).",
				[]string{"task_id", "target_id"}, []string{"dependency_type"}, false, false, TaskDependencyAnswer{}, mcptool.Typed(d.taskDependency(specs.RemoveDependency))),
			writeA("add-requirement", "Appends a requirement {id, type, text} (max 50).",
				[]string{"task_id", "text"}, []string{"requirement_type"}, false, false, TaskRequirementAnswer{}, mcptool.Typed(d.taskAddRequirement)),
			writeA("update-estimate", "Sets estimated_hours and/or complexity.", []string{"task_id"}, []string{"estimated_hours", "complexity"}, true, false, TaskEstimateAnswer{}, mcptool.Typed(d.taskUpdateEstimate)),
			writeA("update-metadata", "Sets metadata keys (metadata object and/or direct fields).",
				[]string{"task_id"}, []string{"metadata", "custom_metadata", "title", "description", "file_path", "task_category", "acceptance_criteria", "complexity", "estimated_hours", "actual_hours", "status_note",
					"verification_type", "command", "expected"}, true, false, TaskMetadataAnswer{}, mcptool.Typed(d.taskUpdateMetadata)),
			writeA("metadata-batch", "Same updates on every node matching the filters (max 100, all or nothing).",
				nil, []string{"updates", "update_metadata", "status", "status_filter", "parent", "parent_filter", "pattern", "node_type",
					"description", "file_path", "estimated_hours", "category", "labels", "owners"}, true, false, TaskMetadataBatchAnswer{}, mcptool.Typed(d.taskMetadataBatch)),
			readA("progress", "Counts and percentage of a node (default spec) and its phases.",
				nil, []string{"node_id", "include_phases"}, TaskProgressAnswer{}, mcptool.Typed(d.taskProgress)),
			readA("list", "All tasks in execution order (paged).", nil, append([]string{"status_filter", "include_completed"}, pages...), TaskListAnswer{}, mcptool.Typed(d.taskList)),
			readA("query", "Tasks by status, parent, node_type (paged).",
				nil, append([]string{"status", "parent", "node_type"}, pages...), TaskQueryAnswer{}, mcptool.Typed(d.taskQuery)),
			readA("hierarchy", "The tree to max_depth (real depth), with counts (paged).",
				nil, append([]string{"max_depth", "include_metadata"}, pages...), TaskHierarchyAnswer{}, mcptool.Typed(d.taskHierarchy)),
			readA("prepare-batch", "Independent actionable tasks for parallel agents (no shared edge or file path).",
				nil, []string{"max_tasks", "token_budget"}, TaskPrepareBatchAnswer{}, mcptool.Typed(d.taskPrepareBatch)),
			writeA("start-batch", "Starts all task_ids or none.",
				[]string{"task_ids"}, []string{"force"}, false, false, TaskStartBatchAnswer{}, mcptool.Typed(d.taskStartBatch)),
			writeA("complete-batch", "Per task: success → completed, failure → failed (retry_count+1).",
				[]string{"completions"}, []string{"force"}, false, false, TaskCompleteBatchAnswer{}, mcptool.Typed(d.taskCompleteBatch)),
			writeA("reset-batch", "task_ids, else stale in_progress tasks (≥ threshold_hours), back to pending.",
				nil, []string{"task_ids", "threshold_hours"}, false, false, TaskResetBatchAnswer{}, mcptool.Typed(d.taskResetBatch)),
			{Name: "session-config", Summary: "This session's id, client and limits (token budget, deadline, read-only, execute).",
				SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(noArgs{}), Answer: SessionConfigAnswer{}, Typed: mcptool.Typed(d.taskSessionConfig)},
			withExample(writeA("fix-verification-types", "Applies only the verification_type fixes of spec fix (missing or unknown types).", nil, nil, true, false, SpecFixAnswer{}, mcptool.Typed(d.fixVerificationTypes)),
				mcptool.ArgsOf(lockedWriteArgs{writeArgs: writeArgs{specArgs: specOf("$spec_id")}})),
		},
	}
	t.Params = append(append(t.Params, autonomyParams...), lockBypassParams...)
	t.Actions = append(t.Actions, autonomyTaskActions(d)...)
	return t
}
