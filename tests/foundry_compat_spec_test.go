package tests

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// foundrySpecRows: the spec, journal, health and server parameters foundry-mcp
// callers send (versions as timestamps, diff limit, create_backup / auto_fix,
// list-unjournaled paging, health and server filters, spec list rows), each as
// a foundry agent sends it.
var foundrySpecRows = []foundryRow{
	// A version given as a moment: foundry's backup ids, RFC 3339.
	{name: "spec-rollback to a foundry backup id (after every version: the current one)", tool: "authoring",
		args:  map[string]any{"action": "spec-rollback", "spec_id": "$spec_id", "version": specRowBackupID(time.Now().Add(24 * time.Hour))},
		check: specRowRestoredCurrent},
	{name: "spec-rollback to before the spec existed", tool: "authoring",
		args: map[string]any{"action": "spec-rollback", "spec_id": "$spec_id", "version": "2001-01-01T00-00-00.000001"}, code: "VERSION_NOT_FOUND"},
	{name: "spec diff against a foundry backup id", tool: "spec",
		args:  map[string]any{"action": "diff", "spec_id": "$spec_id", "target": specRowBackupID(time.Now().Add(24 * time.Hour))},
		check: specRowDiffWithItself},
	{name: "spec diff with an RFC 3339 version", tool: "spec",
		args:  map[string]any{"action": "diff", "spec_id": "$spec_id", "version": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)},
		check: specRowDiffWithItself},
	{name: "spec history from a moment", tool: "spec",
		args: map[string]any{"action": "history", "spec_id": "$spec_id", "version": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)},
		check: func(t *testing.T, env map[string]any) {
			if v, _ := data(env)["versions"].([]any); len(v) == 0 {
				t.Errorf("no versions up to now: %v", data(env))
			}
		}},
	{name: "spec get at a moment (the shared version parameter)", tool: "spec",
		args: map[string]any{"action": "get", "spec_id": "$spec_id", "version": specRowBackupID(time.Now().Add(24 * time.Hour))},
		check: func(t *testing.T, env map[string]any) {
			if v, _ := data(env)["version"].(float64); v < 1 {
				t.Errorf("no version in %v", data(env))
			}
		}},
	// create_backup and auto_fix: accepted, and the answer says what they mean here.
	{name: "spec fix create_backup", tool: "spec", args: map[string]any{"action": "fix", "spec_id": "$spec_id", "create_backup": true, "dry_run": true},
		check: specRowDataContaining("backup", "keeps every version in history")},
	{name: "spec validate auto_fix", tool: "spec", args: map[string]any{"action": "validate", "spec_id": "$spec_id", "auto_fix": true, "create_backup": false},
		check: specRowDataContaining("auto_fix", "validate never changes the spec")},
	// list-unjournaled pages: a completed task waits for its entry.
	{name: "task complete (for list-unjournaled)", tool: "task", args: map[string]any{"action": "complete", "spec_id": "$spec_id", "task_id": "$task_id", "completion_note": "done"}},
	{name: "task complete another", tool: "task", args: map[string]any{"action": "complete", "spec_id": "$spec_id", "task_id": "$task_id_2", "completion_note": "done"}},
	{name: "journal list-unjournaled limit", tool: "journal", args: map[string]any{"action": "list-unjournaled", "spec_id": "$spec_id", "limit": 1},
		check: specRowUnjournaledPaged},
	// Version 3 is the fixture before the two completions: they modified
	// both tasks, their phase and the root since.
	{name: "spec diff limit", tool: "spec", args: map[string]any{"action": "diff", "spec_id": "$spec_id", "version": 3, "limit": 1},
		check: specRowDiffLimited},
	{name: "journal list-unjournaled bad cursor", tool: "journal", args: map[string]any{"action": "list-unjournaled", "spec_id": "$spec_id", "cursor": "not-a-cursor"}, code: "INVALID_CURSOR"},
	// health and server.
	{name: "health check include_details false", tool: "health", args: map[string]any{"action": "check", "include_details": false},
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			if d["status"] == nil || d["store"] != nil || d["disk"] != nil || d["flags"] != nil {
				t.Errorf("want status without details: %v", d)
			}
		}},
	{name: "server tools category", tool: "server", args: map[string]any{"action": "tools", "category": "specs"},
		check: specRowToolNames("authoring", "spec")},
	{name: "server tools tag and include_deprecated", tool: "server", args: map[string]any{"action": "tools", "tag": "read", "include_deprecated": true},
		check: specRowToolNames("environment", "health", "pr", "server")},
	{name: "server context include_*", tool: "server",
		args: map[string]any{"action": "context", "include_llm": true, "include_workflow": true, "include_workspace": false, "include_capabilities": false},
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			llm, _ := d["llm"].(map[string]any)
			if llm["configured"] != false || !strings.Contains(llm["note"].(string), "calls no language model") || d["workflow"] == nil {
				t.Errorf("llm/workflow: %v", d)
			}
			if d["workspace_root"] != nil || d["capabilities"] != nil {
				t.Errorf("workspace_root and capabilities were turned off: %v", d)
			}
		}},
	// spec list rows: status is the folder; spec id order, as foundry's spec list.
	{name: "spec list rows", tool: "spec", args: map[string]any{"action": "list", "status": "all"},
		check: func(t *testing.T, env map[string]any) {
			rows, _ := data(env)["specs"].([]any)
			var ids []string
			for _, r := range rows {
				row := r.(map[string]any)
				ids = append(ids, row["spec_id"].(string))
				if row["status"] != row["lifecycle"] || !slices.Contains([]any{"pending", "active", "completed", "archived"}, row["status"]) || row["work_status"] == nil {
					t.Errorf("row status %v (lifecycle %v, work_status %v)", row["status"], row["lifecycle"], row["work_status"])
				}
			}
			if len(ids) == 0 || !slices.IsSorted(ids) {
				t.Errorf("rows not in spec id order: %v", ids)
			}
		}},
}

func init() { foundryTables["spec"] = foundrySpecRows }

// specRowBackupID is t as foundry-mcp names a backup file (UTC).
func specRowBackupID(t time.Time) string { return t.UTC().Format("2006-01-02T15-04-05.000000") }

// specRowRestoredCurrent: a moment after every version names the current one, so
// the rollback restores it and changes nothing.
func specRowRestoredCurrent(t *testing.T, env map[string]any) {
	d := data(env)
	if d["restored_version"] != d["version"] || d["nodes_restored"] != float64(0) {
		t.Errorf("restored %v as %v, %v nodes", d["restored_version"], d["version"], d["nodes_restored"])
	}
}

// specRowDiffWithItself: a moment after every version is the current version, so
// nothing differs.
func specRowDiffWithItself(t *testing.T, env map[string]any) {
	d := data(env)
	for _, k := range []string{"added", "removed", "modified"} {
		if l, _ := d[k].([]any); len(l) != 0 {
			t.Errorf("%s = %v, want none", k, l)
		}
	}
	if d["from_version"] == nil {
		t.Errorf("no from_version: %v", d)
	}
}

// specRowDiffLimited: one modified node, and a cursor to the rest.
func specRowDiffLimited(t *testing.T, env map[string]any) {
	m, _ := data(env)["modified"].([]any)
	meta, _ := env["meta"].(map[string]any)
	p, _ := meta["pagination"].(map[string]any)
	if len(m) != 1 || p == nil || p["cursor"] == "" || p["cursor"] == nil {
		t.Errorf("modified %d, pagination %v: %v", len(m), p, data(env))
	}
}

// specRowUnjournaledPaged: one of the two waiting tasks, and a cursor to the other.
func specRowUnjournaledPaged(t *testing.T, env map[string]any) {
	tasks, _ := data(env)["tasks"].([]any)
	meta, _ := env["meta"].(map[string]any)
	p, _ := meta["pagination"].(map[string]any)
	if len(tasks) != 1 || p == nil || p["cursor"] == nil || p["cursor"] == "" || p["total_count"] == float64(1) {
		t.Errorf("tasks %v, pagination %v", tasks, p)
	}
}

func specRowDataContaining(key, text string) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		if s, _ := data(env)[key].(string); !strings.Contains(s, text) {
			t.Errorf("data.%s = %q, want it to say %q", key, s, text)
		}
	}
}

// specRowToolNames: server tools answered exactly these tools.
func specRowToolNames(want ...string) func(t *testing.T, env map[string]any) {
	return func(t *testing.T, env map[string]any) {
		t.Helper()
		var got []string
		for _, x := range data(env)["tools"].([]any) {
			got = append(got, x.(map[string]any)["name"].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("tools %v, want %v", got, want)
		}
	}
}
