package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// TestSpecAuthoringScenario: through a real MCP client an agent creates a spec
// from nothing, adds phases in bulk, validates, fixes, activates, journals,
// reads history and rolls back.
func TestSpecAuthoringScenario(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		ok := func(env map[string]any) map[string]any {
			t.Helper()
			if env["success"] != true {
				t.Fatalf("call failed: %v", env)
			}
			return data(env)
		}
		created := ok(call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Payments retry", "mission": "Retry failed payments safely"}))
		id := created["spec_id"].(string)

		// Dry run first: the answer has the real shape plus changes, and nothing is stored.
		dry := ok(call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "dry_run": true,
			"phase": map[string]any{"title": "Design"},
			"tasks": []any{map[string]any{"title": "Write the retry policy", "task_category": "decision", "file_path": "docs/retry.md"}}}))
		if dry["dry_run"] != true || len(dry["changes"].([]any)) == 0 {
			t.Fatalf("dry run answer: %v", dry)
		}
		for i, phase := range []string{"Design", "Build", "Roll out"} {
			res := ok(call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id,
				"phase": map[string]any{"title": phase, "description": phase + " the retries"},
				"tasks": []any{
					map[string]any{"title": phase + ": first", "task_category": "implementation", "file_path": "pay/a.go", "description": "a"},
					map[string]any{"title": phase + ": second", "task_category": "implementation", "file_path": "pay/b.go", "description": "b"},
				}}))
			if res["version"].(float64) != float64(i+2) {
				t.Fatalf("phase %d made version %v", i+1, res["version"])
			}
		}
		val := ok(call(t, c, "spec", map[string]any{"action": "validate", "spec_id": id}))
		if val["is_valid"] != true {
			t.Fatalf("a spec built through authoring must validate: %v", val)
		}
		fix := ok(call(t, c, "spec", map[string]any{"action": "fix", "spec_id": id, "dry_run": true}))
		if fix["dry_run"] != true {
			t.Fatalf("fix dry run: %v", fix)
		}
		ok(call(t, c, "spec", map[string]any{"action": "fix", "spec_id": id}))

		// A stale expected_version changes nothing.
		stale := call(t, c, "authoring", map[string]any{"action": "risk-add", "spec_id": id, "description": "double charge", "expected_version": 1})
		if errorCode(stale) != "VERSION_CONFLICT" {
			t.Fatalf("stale write: %v", stale)
		}
		act := ok(call(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": id}))
		if act["to_folder"] != "active" {
			t.Fatalf("activate: %v", act)
		}
		ok(call(t, c, "journal", map[string]any{"action": "add", "spec_id": id, "title": "Use exponential backoff", "entry_type": "decision"}))
		list := ok(call(t, c, "journal", map[string]any{"action": "list", "spec_id": id, "entry_type": "decision"}))
		if list["count"].(float64) != 1 {
			t.Fatalf("journal list: %v", list)
		}
		got := ok(call(t, c, "spec", map[string]any{"action": "get", "spec_id": id}))
		spec := got["spec"].(map[string]any)
		// root + 3 × (phase + 2 tasks): phase-add-bulk adds no verify
		// scaffold unless asked (verify_scaffold), as in foundry-mcp.
		if spec["lifecycle"] != "active" || len(spec["hierarchy"].(map[string]any)) != 1+3*(1+2) {
			t.Fatalf("get: lifecycle %v, %d nodes", spec["lifecycle"], len(spec["hierarchy"].(map[string]any)))
		}
		hist := ok(call(t, c, "spec", map[string]any{"action": "history", "spec_id": id, "limit": 2}))
		if len(hist["versions"].([]any)) != 2 {
			t.Fatalf("history page: %v", hist)
		}
		// Diff version 2 (one phase) against now: phases 2 and 3 were added,
		// each with its two tasks (no verify scaffold unless asked).
		diff := ok(call(t, c, "spec", map[string]any{"action": "diff", "spec_id": id, "version": 2}))
		if len(diff["added"].([]any)) != 2*3 {
			t.Fatalf("diff v2→now added %v", diff["added"])
		}
		stats := ok(call(t, c, "spec", map[string]any{"action": "stats", "spec_id": id}))
		if stats["phases"].(float64) != 3 {
			t.Fatalf("stats: %v", stats)
		}
		// Roll back to the spec with one phase: a new version, phases 2 and 3 gone.
		rb := ok(call(t, c, "authoring", map[string]any{"action": "spec-rollback", "spec_id": id, "version": 2}))
		after := ok(call(t, c, "spec", map[string]any{"action": "get", "spec_id": id}))["spec"].(map[string]any)
		if after["version"].(float64) != rb["version"].(float64) || len(after["hierarchy"].(map[string]any)) != 1+3 { // root + phase 1 with its two tasks
			t.Fatalf("rollback: version %v, %d nodes", after["version"], len(after["hierarchy"].(map[string]any)))
		}
		// The journal survives a rollback.
		if n := ok(call(t, c, "journal", map[string]any{"action": "list", "spec_id": id}))["count"].(float64); n < 3 {
			t.Fatalf("journal after rollback has %v entries", n)
		}
		// Unknown ids fuzzy-match and suggest the listing call.
		miss := call(t, c, "spec", map[string]any{"action": "get", "spec_id": id[:len(id)-1] + "9"})
		rec := data(miss)["recovery"].(map[string]any)
		if errorCode(miss) != "SPEC_NOT_FOUND" || rec["suggested_tool"] != "spec" || len(rec["fuzzy_matches"].([]any)) == 0 {
			t.Fatalf("not found: %v", miss)
		}
	})
}

// TestImportFoundryFolder imports a foundry specs/ folder with status
// subfolders and checks the per-file report, then exports and re-imports.
func TestImportFoundryFolder(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	root := filepath.Join(deps.Workspace, "specs")
	place := func(src, folder, name string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "specs", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		must(t, os.MkdirAll(filepath.Join(root, folder), 0o755))
		must(t, os.WriteFile(filepath.Join(root, folder, name), b, 0o644))
	}
	place("foundry_basic.json", "active", "basic.json")
	var quirks map[string]any
	raw, err := os.ReadFile(filepath.Join("..", "specs", "testdata", "foundry_quirks.json"))
	must(t, err)
	// The quirks with an orphan whose id names no existing parent, under
	// another id: kept under spec-root, as foundry's own fix does.
	must(t, os.MkdirAll(filepath.Join(root, "archived"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "archived", "quirks-orphan.json"),
		[]byte(strings.Replace(string(raw), `"legacy-import-2025-10-30-0847"`, `"legacy-orphan-2025-10-30-0847"`, 1)), 0o644))
	// The same quirks without that orphan.
	must(t, json.Unmarshal(raw, &quirks))
	delete(quirks["hierarchy"].(map[string]any), "task-3-1")
	fixable, _ := json.Marshal(quirks)
	must(t, os.MkdirAll(filepath.Join(root, "pending"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "pending", "quirks.json"), fixable, 0o644))
	place("foundry_cycle.json", "completed", "cycle.json")
	must(t, os.WriteFile(filepath.Join(root, "pending", "broken.json"), []byte(`{"spec_id": `), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "pending", "README.md"), []byte("not a spec"), 0o644))

	env := call(t, c, "spec", map[string]any{"action": "import", "path": "specs"})
	if env["success"] != true {
		t.Fatalf("import: %v", env)
	}
	files := importReports(env)
	if len(files) != 5 {
		t.Fatalf("want 5 json files reported, got %v", files)
	}
	orphan := files["archived/quirks-orphan.json"]
	// The orphan joins the open phase, not spec-root (where next never looks).
	if orphan["outcome"] != "imported" || strings.Contains(fmt.Sprint(orphan["diagnostic_codes"]), "INVALID_PARENT_TYPE") {
		t.Fatalf("a spec with an orphan its id cannot place must import, the orphan in a phase: %v", orphan)
	}
	if o := ok(t, c, "task", map[string]any{"action": "info", "spec_id": orphan["spec_id"], "task_id": "task-3-1"}); o["task"].(map[string]any)["parent"] != "phase-2" {
		t.Fatalf("the orphan task-3-1: %v, want it under phase-2", o["task"])
	}
	if files["active/basic.json"]["outcome"] != "imported" || files["active/basic.json"]["lifecycle"] != "active" {
		t.Fatalf("basic: %v", files["active/basic.json"])
	}
	q := files["pending/quirks.json"]
	if q["outcome"] != "imported" || q["fixes_applied"].(float64) == 0 {
		t.Fatalf("quirks must import after fixes: %v", q)
	}
	if files["pending/broken.json"]["outcome"] != "failed" {
		t.Fatalf("broken: %v", files["pending/broken.json"])
	}
	t.Logf("cycle.json: %v", files["completed/cycle.json"])

	// The imported quirky spec validates and lists in its folder.
	qid := q["spec_id"].(string)
	if v := data(call(t, c, "spec", map[string]any{"action": "validate", "spec_id": qid})); v["is_valid"] != true {
		t.Fatalf("imported spec does not validate: %v", v)
	}
	pend := data(call(t, c, "spec", map[string]any{"action": "list", "status": "pending"}))
	found := false
	for _, s := range pend["specs"].([]any) {
		found = found || s.(map[string]any)["spec_id"] == qid
	}
	if !found {
		t.Fatalf("imported spec not in pending: %v", pend)
	}
	// Importing again skips existing specs unless overwrite.
	again := data(call(t, c, "spec", map[string]any{"action": "import", "path": "specs/active/basic.json"}))
	if again["files"].([]any)[0].(map[string]any)["outcome"] != "skipped" {
		t.Fatalf("re-import: %v", again)
	}
	// Export writes the same layout, and it imports back cleanly.
	exp := data(call(t, c, "spec", map[string]any{"action": "export", "path": "out"}))
	if exp["count"].(float64) < 2 {
		t.Fatalf("export: %v", exp)
	}
	if _, err := os.Stat(filepath.Join(deps.Workspace, "out", "pending", qid+".json")); err != nil {
		t.Fatalf("exported file missing: %v", err)
	}
	back := data(call(t, c, "spec", map[string]any{"action": "import", "path": "out", "overwrite": true}))
	for _, f := range back["files"].([]any) {
		if m := f.(map[string]any); m["outcome"] != "replaced" {
			t.Fatalf("round trip: %v", m)
		}
	}
	// Paths outside the workspace are refused.
	esc := call(t, c, "spec", map[string]any{"action": "import", "path": "../.."})
	if errorCode(esc) != "INVALID_FORMAT" {
		t.Fatalf("escape: %v", esc)
	}
}

// importReports indexes a spec import answer's per-file reports by file.
func importReports(env map[string]any) map[string]map[string]any {
	files := map[string]map[string]any{}
	for _, f := range data(env)["files"].([]any) {
		m := f.(map[string]any)
		files[m["file"].(string)] = m
	}
	return files
}
