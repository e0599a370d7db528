package tests

import (
	"fmt"
	"strings"
	"testing"
)

// foundryTaskRows: the task tool's foundry-mcp parameters and positions, each a
// call a foundry-mcp agent sends (learned from foundry's task handlers), with a
// check of foundry's meaning. Rows run in order on one fixture (phase-1:
// $task_id, $task_id_2 and the verify nodes; the spec active).
var foundryTaskRows = []foundryRow{
	// note: the status change's journal entry (foundry journals it as the
	// entry's content).
	{name: "start with note", tool: "task", args: map[string]any{"action": "start", "spec_id": "$spec_id", "task_id": "$task_id", "note": "Picking up the parser"},
		check: wantPath("status", "in_progress")},
	{name: "start's note is journaled", tool: "journal", args: map[string]any{"action": "list", "spec_id": "$spec_id", "task_id": "$task_id", "limit": 1},
		check: wantPath("entries.0.content", "Picking up the parser")},
	// update-status blocked needs no reason (default "blocked"); the
	// transition table still decides the move.
	{name: "update-status blocked without reason", tool: "task", args: map[string]any{"action": "update-status", "spec_id": "$spec_id", "task_id": "$task_id", "status": "blocked"},
		check: wantPath("task.metadata.blocker_description", "blocked")},
	{name: "update-status from blocked to in_progress is still refused", tool: "task", args: map[string]any{"action": "update-status", "spec_id": "$spec_id", "task_id": "$task_id", "status": "in_progress"},
		code: "INVALID_TRANSITION"},
	{name: "update-status with note", tool: "task", args: map[string]any{"action": "update-status", "spec_id": "$spec_id", "task_id": "$task_id", "status": "pending", "note": "Infra is back"},
		check: wantPath("status", "pending")},
	{name: "update-status's note is journaled", tool: "journal", args: map[string]any{"action": "list", "spec_id": "$spec_id", "task_id": "$task_id", "limit": 1},
		check: wantPathContains("entries.0.content", "Infra is back")},
	{name: "complete with note", tool: "task", args: map[string]any{"action": "complete", "spec_id": "$spec_id", "task_id": "$task_id", "note": "Parser done"},
		check: wantPath("status", "completed")},
	{name: "complete's note is journaled", tool: "journal", args: map[string]any{"action": "list", "spec_id": "$spec_id", "task_id": "$task_id", "limit": 1},
		check: wantPath("entries.0.content", "Parser done")},
	// list: status_filter, include_completed.
	{name: "list status_filter", tool: "task", args: map[string]any{"action": "list", "spec_id": "$spec_id", "status_filter": "completed"},
		check: wantRows("tasks", func(r map[string]any) bool { return r["status"] == "completed" }, 1)},
	{name: "list status_filter in any case", tool: "task", args: map[string]any{"action": "list", "spec_id": "$spec_id", "status_filter": "Pending"},
		check: wantRows("tasks", func(r map[string]any) bool { return r["status"] == "pending" }, -1)},
	{name: "list include_completed false", tool: "task", args: map[string]any{"action": "list", "spec_id": "$spec_id", "include_completed": false},
		check: wantRows("tasks", func(r map[string]any) bool { return r["status"] != "completed" }, -1)},
	// update-metadata: custom_metadata, actual_hours.
	{name: "update-metadata custom_metadata and actual_hours", tool: "task", args: map[string]any{"action": "update-metadata", "spec_id": "$spec_id", "task_id": "$task_id_2",
		"custom_metadata": map[string]any{"owner_team": "parsers"}, "actual_hours": 2.5},
		check: all(wantPath("task.metadata.owner_team", "parsers"), wantPath("task.metadata.actual_hours", 2.5))},
	// metadata-batch: foundry's filters, update_metadata and direct fields.
	{name: "metadata-batch with foundry's filters and fields", tool: "task", args: map[string]any{"action": "metadata-batch", "spec_id": "$spec_id",
		"status_filter": "pending", "parent_filter": "$phase_id", "update_metadata": map[string]any{"reviewed": true},
		"description": "Batch described", "file_path": "src/x.go", "estimated_hours": 3, "category": "backend",
		"labels": map[string]any{"area": "io"}, "owners": []any{"ana"}},
		check: all(wantPath("filters.status", "pending"), wantPath("filters.parent", "phase-1"), wantPath("updates.reviewed", true),
			wantPath("updates.category", "backend"), wantPath("updates.labels.area", "io"), wantPath("updates.owners.0", "ana"),
			wantPath("updates.file_path", "src/x.go"), wantPath("updates.estimated_hours", 3.0), wantPath("updates.description", "Batch described"),
			wantPositive("updated_count"))},
	// reset-batch task_ids: those tasks, however fresh.
	{name: "start before reset", tool: "task", args: map[string]any{"action": "start", "spec_id": "$spec_id", "task_id": "$task_id_2"}},
	{name: "reset-batch task_ids", tool: "task", args: map[string]any{"action": "reset-batch", "spec_id": "$spec_id", "task_ids": []any{"$task_id_2"}},
		check: all(wantPath("count", 1.0), wantPath("reset.0.task_id", "task-1-2"))},
	// complete-batch: completions[].completion_note.
	{name: "start before complete-batch", tool: "task", args: map[string]any{"action": "start", "spec_id": "$spec_id", "task_id": "$task_id_2"}},
	{name: "complete-batch completion_note", tool: "task", args: map[string]any{"action": "complete-batch", "spec_id": "$spec_id",
		"completions": []any{map[string]any{"task_id": "$task_id_2", "success": true, "completion_note": "Batch done"}}}},
	{name: "complete-batch's completion_note is journaled", tool: "journal", args: map[string]any{"action": "list", "spec_id": "$spec_id", "task_id": "$task_id_2", "limit": 1},
		check: wantPath("entries.0.content", "Batch done")},
	// task add: research nodes' research_type and query.
	{name: "add research node with research_type and query", tool: "task", args: map[string]any{"action": "add", "spec_id": "$spec_id", "parent": "$phase_id",
		"title": "Survey parser generators", "task_type": "research", "research_type": "consensus", "query": "Which parser generators emit Go?"},
		check: all(wantPath("task.metadata.research_type", "consensus"), wantPath("task.metadata.query", "Which parser generators emit Go?"))},
	// Positions count from 0.
	{name: "task add position 0 is first", tool: "task", args: map[string]any{"action": "add", "spec_id": "$spec_id", "parent": "$phase_id", "title": "Goes first", "position": 0},
		check: wantPath("position", 0.0)},
	{name: "task move position 0 is first", tool: "task", args: map[string]any{"action": "move", "spec_id": "$spec_id", "task_id": "$task_id_2", "position": 0},
		check: wantPath("position", 0.0)},
	{name: "task move position 1 is second", tool: "task", args: map[string]any{"action": "move", "spec_id": "$spec_id", "task_id": "$task_id", "position": 1},
		check: wantPath("position", 1.0)},
	{name: "the moves put the nodes where foundry means", tool: "task", args: map[string]any{"action": "query", "spec_id": "$spec_id", "parent": "$phase_id"},
		check: all(wantPath("tasks.0.task_id", "task-1-2"), wantPath("tasks.1.task_id", "task-1-1"), wantPath("tasks.2.title", "Goes first"))},
	{name: "phase-add position 0 is first", tool: "authoring", args: map[string]any{"action": "phase-add", "spec_id": "$spec_id", "title": "Groundwork", "position": 0}},
	{name: "phase-move position 0 is first", tool: "authoring", args: map[string]any{"action": "phase-move", "spec_id": "$spec_id", "phase_id": "$phase_id", "position": 0},
		check: all(wantPath("position", 0.0), wantPath("phases.0", "phase-1"))},
	{name: "position past the end", tool: "task", args: map[string]any{"action": "move", "spec_id": "$spec_id", "task_id": "$task_id", "position": 99}, code: "INVALID_POSITION"},
	// hierarchy max_depth 0: the whole tree (a subtask sits at depth 3).
	{name: "add a subtask", tool: "task", args: map[string]any{"action": "add", "spec_id": "$spec_id", "parent": "$task_id_2", "title": "Deep", "task_type": "subtask"}},
	{name: "hierarchy max_depth 0", tool: "task", args: map[string]any{"action": "hierarchy", "spec_id": "$spec_id", "max_depth": 0},
		check: all(wantPath("max_depth", 0.0), wantSomeRow("nodes", func(r map[string]any) bool { return r["depth"] == 3.0 }))},
	// Enum values inside objects in any case.
	{name: "phase-add-bulk tasks[] enums in any case", tool: "authoring", args: map[string]any{"action": "phase-add-bulk", "spec_id": "$spec_id",
		"phase": map[string]any{"title": "Cased"}, "tasks": []any{map[string]any{"type": "Task", "title": "Cased task", "complexity": "High", "task_category": "Implementation", "file_path": "c.go"}}}},
	{name: "metadata object enums in any case", tool: "task", args: map[string]any{"action": "update-metadata", "spec_id": "$spec_id", "task_id": "$task_id_2",
		"metadata": map[string]any{"complexity": "High", "task_category": "Refactoring"}},
		check: all(wantPath("task.metadata.complexity", "high"), wantPath("task.metadata.task_category", "refactoring"))},
}

func init() { foundryTables["task"] = foundryTaskRows }

// pathOf is the value at a dotted path in data (numbers index arrays).
func pathOf(env map[string]any, path string) any {
	var v any = data(env)
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := -1
			fmt.Sscan(k, &i)
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func wantPath(path string, want any) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		if got := pathOf(env, path); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("data.%s = %v, want %v", path, got, want)
		}
	}
}

func wantPathContains(path, sub string) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		if got := fmt.Sprint(pathOf(env, path)); !strings.Contains(got, sub) {
			t.Errorf("data.%s = %q, want it to contain %q", path, got, sub)
		}
	}
}

func wantPositive(path string) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		if n, _ := pathOf(env, path).(float64); n <= 0 {
			t.Errorf("data.%s = %v, want > 0", path, pathOf(env, path))
		}
	}
}

// wantRows: every row of data.key passes keep, and there are n rows (n < 0:
// at least one).
func wantRows(key string, keep func(map[string]any) bool, n int) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		rows, _ := data(env)[key].([]any)
		passing := 0
		for _, r := range rows {
			if m, _ := r.(map[string]any); keep(m) {
				passing++
			}
		}
		if passing != len(rows) || (n >= 0 && len(rows) != n) || (n < 0 && len(rows) == 0) {
			t.Errorf("data.%s: %d of %d rows pass (want all, and %d rows)", key, passing, len(rows), n)
		}
	}
}

// wantSomeRow: at least one row of data.key passes keep.
func wantSomeRow(key string, keep func(map[string]any) bool) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		rows, _ := data(env)[key].([]any)
		for _, r := range rows {
			if m, _ := r.(map[string]any); keep(m) {
				return
			}
		}
		t.Errorf("data.%s: no row passes among %d", key, len(rows))
	}
}

func all(checks ...func(t *testing.T, env map[string]any)) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		for _, c := range checks {
			c(t, env)
		}
	}
}
