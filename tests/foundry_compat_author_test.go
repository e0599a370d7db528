package tests

import (
	"fmt"
	"slices"
	"testing"
)

// foundryAuthorRows: authoring, lifecycle and verification parameters as
// foundry-mcp callers send them (README "Coming from foundry-mcp"). The fixture
// spec is active with phase-1 (task-1-1, task-1-2, verify-1-1, verify-1-2); the
// rows build on each other: phase-2 and phase-3 come from phase-add-bulk,
// phase-4 from phase-add.
var foundryAuthorRows = []foundryRow{
	// phase-add-bulk: details, category, top-level metadata_defaults,
	// phase.estimated_hours, and no verify scaffold unless asked.
	{name: "phase-add-bulk as foundry sends it", tool: "authoring", args: map[string]any{"action": "phase-add-bulk", "spec_id": "$spec_id",
		"phase":             map[string]any{"title": "Foundry bulk", "estimated_hours": 6.0},
		"metadata_defaults": map[string]any{"category": "investigation", "estimated_hours": 1.5},
		"tasks": []any{
			map[string]any{"type": "task", "title": "Read the retry loop", "details": "Look at how retries back off", "acceptance_criteria": "Backoff is written down"},
			map[string]any{"type": "task", "title": "Write it up", "category": "decision", "details": []any{"Choose", "Record"}},
		}},
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			if d["verify_ids"] != nil || fmt.Sprint(d["task_ids"]) != "[task-2-1 task-2-2]" {
				t.Errorf("want two tasks and no verify scaffold: %v", d)
			}
		}},
	{name: "tasks[].details is the description, metadata_defaults.category the task_category, one criterion as text a list", tool: "task",
		args: map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "task-2-1"},
		check: wantTaskMeta(map[string]any{"description": "Look at how retries back off", "task_category": "investigation", "estimated_hours": 1.5,
			"acceptance_criteria": []any{"Backoff is written down"}})},
	{name: "tasks[].category wins over the default; a details list joins", tool: "task",
		args:  map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "task-2-2"},
		check: wantTaskMeta(map[string]any{"description": "Choose\nRecord", "task_category": "decision"})},
	{name: "phase.estimated_hours", tool: "task", args: map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "phase-2"},
		check: wantTaskMeta(map[string]any{"estimated_hours": 6.0})},
	{name: "phase-add-bulk verify_scaffold: true", tool: "authoring", args: map[string]any{"action": "phase-add-bulk", "spec_id": "$spec_id",
		"verify_scaffold": true, "phase": map[string]any{"title": "With checks"}, "tasks": []any{map[string]any{"type": "task", "title": "Build it"}}},
		check: func(t *testing.T, env map[string]any) {
			if fmt.Sprint(data(env)["verify_ids"]) != "[verify-3-1 verify-3-2]" {
				t.Errorf("want the scaffold: %v", data(env))
			}
		}},
	// phase-add / phase-update-metadata.
	{name: "phase-add estimated_hours", tool: "authoring", args: map[string]any{"action": "phase-add", "spec_id": "$spec_id", "title": "Estimated", "estimated_hours": 4.0},
		check: wantData("phase_id", "phase-4")},
	{name: "phase-add's estimate is on the phase", tool: "task", args: map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "phase-4"},
		check: wantTaskMeta(map[string]any{"estimated_hours": 4.0})},
	{name: "phase-update-metadata top-level keys", tool: "authoring", args: map[string]any{"action": "phase-update-metadata", "spec_id": "$spec_id", "phase_id": "$phase_id",
		"description": "What phase one does", "purpose": "Why it exists", "estimated_hours": 3.0},
		check: func(t *testing.T, env map[string]any) {
			if got := fmt.Sprint(data(env)["changed"]); got != "[description estimated_hours purpose]" {
				t.Errorf("changed %s", got)
			}
		}},
	{name: "phase-update-metadata stored them", tool: "task", args: map[string]any{"action": "info", "spec_id": "$spec_id", "task_id": "$phase_id"},
		check: wantTaskMeta(map[string]any{"description": "What phase one does", "purpose": "Why it exists", "estimated_hours": 3.0})},
	// phase-move link_previous: phases 1→2→3→4 are chained by phase-add's
	// own link_previous; moving phase-4 forward takes it out of the chain
	// after phase-3 and chains it where it lands.
	{name: "phase-move link_previous", tool: "authoring", args: map[string]any{"action": "phase-move", "spec_id": "$spec_id", "phase_id": "phase-4", "position": 1, "link_previous": true},
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			if !hasLink(d["unlinked"], "phase-3", "phase-4") || !hasLinkFrom(d["linked"], "phase-4") {
				t.Errorf("chain not followed: linked %v unlinked %v", d["linked"], d["unlinked"])
			}
		}},
	{name: "phase-move link_previous false", tool: "authoring", args: map[string]any{"action": "phase-move", "spec_id": "$spec_id", "phase_id": "phase-3", "position": 1, "link_previous": false},
		check: func(t *testing.T, env map[string]any) {
			if d := data(env); d["linked"] != nil || d["unlinked"] != nil || d["link_previous"] != false {
				t.Errorf("dependencies changed: %v", d)
			}
		}},
	// spec-find-replace case_sensitive (default true).
	{name: "spec-find-replace case_sensitive true finds no other case", tool: "authoring", args: map[string]any{"action": "spec-find-replace", "spec_id": "$spec_id", "find": "FOUNDRY BULK", "replace": "x", "case_sensitive": true},
		check: wantData("replacements", 0.0)},
	{name: "spec-find-replace case_sensitive false", tool: "authoring", args: map[string]any{"action": "spec-find-replace", "spec_id": "$spec_id", "find": "FOUNDRY BULK", "replace": "Foundry batch", "case_sensitive": false},
		check: func(t *testing.T, env map[string]any) {
			if d := data(env); d["replacements"] != 1.0 || fmt.Sprint(d["nodes_changed"]) != "[phase-2]" {
				t.Errorf("%v", d)
			}
		}},
	// revision-add version and changes (foundry sends version as text).
	{name: "revision-add version and changes", tool: "authoring", args: map[string]any{"action": "revision-add", "spec_id": "$spec_id", "version": "1.1", "changes": "Split phase one", "author": "alice"},
		check: func(t *testing.T, env map[string]any) {
			rev, _ := data(env)["revision"].(map[string]any)
			if rev["version"] != "1.1" || rev["changelog"] != "Split phase one" || rev["author"] != "alice" {
				t.Errorf("revision %v", rev)
			}
		}},
	// spec-template template_name.
	{name: "spec-template template_name", tool: "authoring", args: map[string]any{"action": "spec-template", "template_action": "show", "template_name": "bugfix"},
		check: func(t *testing.T, env map[string]any) {
			if tm, _ := data(env)["template"].(map[string]any); tm["name"] != "bugfix" {
				t.Errorf("template %v", data(env))
			}
		}},
	{name: "spec-template template_name of a foundry-only template", tool: "authoring", args: map[string]any{"action": "spec-template", "template_action": "show", "template_name": "medium"},
		code: "INVALID_FORMAT"},
	// assumption-add author; assumption-list assumption_type.
	{name: "assumption-add author", tool: "authoring", args: map[string]any{"action": "assumption-add", "spec_id": "$spec_id", "text": "Runs on Linux", "assumption_type": "constraint", "author": "alice"},
		check: func(t *testing.T, env map[string]any) {
			if d := data(env); d["author"] != "alice" || d["assumption"] != "[constraint] Runs on Linux" {
				t.Errorf("%v", d)
			}
		}},
	{name: "another type of assumption", tool: "authoring", args: map[string]any{"action": "assumption-add", "spec_id": "$spec_id", "text": "Needs Go 1.26", "assumption_type": "requirement"}},
	{name: "assumption-list assumption_type", tool: "authoring", args: map[string]any{"action": "assumption-list", "spec_id": "$spec_id", "assumption_type": "constraint"},
		check: func(t *testing.T, env map[string]any) {
			if d := data(env); fmt.Sprint(d["assumptions"]) != "[[constraint] Runs on Linux]" || d["count"] != 1.0 {
				t.Errorf("%v", d)
			}
		}},
	// verification execute record (default false): execute is off on this
	// fixture's server, so the call is refused the same with or without
	// record; what record does is run by TestVerificationExecuteOverStdio
	// and tools.TestVerificationExecute.
	{name: "verification execute record false", tool: "verification", args: map[string]any{"action": "execute", "spec_id": "$spec_id", "verify_id": "$verify_id", "record": false},
		code: "FEATURE_DISABLED"},
	// lifecycle: state's foundry keys; force on activate and archive.
	{name: "lifecycle state task counts and can_archive", tool: "lifecycle", args: map[string]any{"action": "state", "spec_id": "$spec_id"},
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			if d["total_tasks"] == nil || d["total_tasks"].(float64) < 4 || d["completed_tasks"] != 0.0 || d["can_archive"] != true {
				t.Errorf("%v", d)
			}
		}},
	{name: "lifecycle archive force", tool: "lifecycle", args: map[string]any{"action": "archive", "spec_id": "$spec_id", "force": true},
		check: wantData("to_folder", "archived")},
	{name: "lifecycle activate force", tool: "lifecycle", args: map[string]any{"action": "activate", "spec_id": "$spec_id", "force": true},
		check: wantData("to_folder", "active")},
}

func init() { foundryTables["author"] = foundryAuthorRows }

// wantTaskMeta checks task info's task.metadata keys.
func wantTaskMeta(want map[string]any) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		task, _ := data(env)["task"].(map[string]any)
		meta, _ := task["metadata"].(map[string]any)
		for k, v := range want {
			if fmt.Sprintf("%#v", meta[k]) != fmt.Sprintf("%#v", v) {
				t.Errorf("metadata.%s = %#v, want %#v (metadata %v)", k, meta[k], v, meta)
			}
		}
	}
}

// links reads an answer's [{blocker, blocked}] list.
func links(v any) [][2]string {
	var out [][2]string
	list, _ := v.([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		out = append(out, [2]string{fmt.Sprint(m["blocker"]), fmt.Sprint(m["blocked"])})
	}
	return out
}

func hasLink(v any, blocker, blocked string) bool {
	return slices.Contains(links(v), [2]string{blocker, blocked})
}

func hasLinkFrom(v any, blocker string) bool {
	return slices.ContainsFunc(links(v), func(l [2]string) bool { return l[0] == blocker })
}
