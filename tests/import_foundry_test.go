package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd/specd/specs"
)

// TestImportEveryFoundrySpec: a foundry specs/ folder
// (pending/active/completed/archived) holding a spec written by foundry's own
// auto-fix (subtasks and a verify node reset to spec-root, implementation tasks
// without file_path) imports with its hierarchy repaired from the ids and every
// invariant holding; only a bad spec_id and a dependency cycle are rejected,
// each named by its file.
func TestImportEveryFoundrySpec(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	root := filepath.Join(deps.Workspace, "specs")
	read := func(src string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "specs", "testdata", src))
		must(t, err)
		return b
	}
	put := func(folder, name string, b []byte) {
		t.Helper()
		must(t, os.MkdirAll(filepath.Join(root, folder), 0o755))
		must(t, os.WriteFile(filepath.Join(root, folder, name), b, 0o644))
	}
	autofixed := read("foundry_autofixed.json")
	put("active", "auth.json", autofixed)
	put("pending", "basic.json", read("foundry_basic.json"))
	put("completed", "cycle.json", read("foundry_cycle.json"))
	put("archived", "bad-id.json", []byte(strings.Replace(string(autofixed),
		`"spec_id": "auth-rework-2025-12-02-001"`, `"spec_id": "../auth rework"`, 1)))

	env := call(t, c, "spec", map[string]any{"action": "import", "path": "specs"})
	if env["success"] != true {
		t.Fatalf("import: %v", env)
	}
	files := importReports(env)
	for _, name := range []string{"active/auth.json", "pending/basic.json"} {
		if files[name]["outcome"] != "imported" {
			t.Errorf("%s: want imported, got %v", name, files[name])
			continue
		}
		must(t, deps.Specs.ReadSpec(context.Background(), files[name]["spec_id"].(string), func(sp *specs.Spec, _ specs.JournalReader) error {
			if v := specs.CheckInvariants(sp); len(v) > 0 {
				t.Errorf("%s: invariants: %v", name, v)
			}
			return nil
		}))
	}
	rejected := map[string]string{"completed/cycle.json": "CYCLE_DETECTED", "archived/bad-id.json": "INVALID_ID"}
	for name, code := range rejected {
		m := files[name]
		if m == nil || m["outcome"] != "rejected" || !strings.Contains(fmt.Sprint(m["diagnostic_codes"]), code) {
			t.Errorf("%s: want rejected with %s, got %v", name, code, m)
		}
	}
	if r := fmt.Sprint(files["completed/cycle.json"]["reason"]); !strings.Contains(r, "cycle") {
		t.Errorf("the cycle's reason must say so: %q", r)
	}

	// The auto-fixed spec's hierarchy is repaired from the ids.
	var doc specs.Document
	must(t, deps.Specs.ReadSpec(context.Background(), "auth-rework-2025-12-02-001", func(sp *specs.Spec, _ specs.JournalReader) error {
		doc = sp.Document()
		return nil
	}))
	h := doc.Hierarchy
	want := map[string]string{"task-3-1-1": "task-3-1", "task-3-1-2": "task-3-1", "verify-3-1": "phase-3"}
	for id, parent := range want {
		if n := h[id]; n == nil || n.Parent != parent {
			t.Errorf("%s: want parent %s, got %+v", id, parent, n)
		}
	}
	if got, _ := json.Marshal(h[specs.RootID].Children); string(got) != `["phase-3"]` {
		t.Errorf("spec-root children: %s", got)
	}
	if got, _ := json.Marshal(h["task-3-1"].Children); string(got) != `["task-3-1-1","task-3-1-2"]` {
		t.Errorf("task-3-1 children: %s", got)
	}
	if n := h["task-3-1"]; n.TotalTasks != 2 || n.CompletedTasks != 1 {
		t.Errorf("task-3-1 rollup %d/%d, want 1/2", n.CompletedTasks, n.TotalTasks)
	}
	if v := data(call(t, c, "spec", map[string]any{"action": "validate", "spec_id": "auth-rework-2025-12-02-001"})); v["is_valid"] != true {
		t.Errorf("the imported spec must validate: %v", v)
	}
}
