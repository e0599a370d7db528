package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/specs"
)

// Paths (README "Security"): nothing a caller names can make specd read, write
// or delete outside the workspace, block on a non-regular file, or show a
// server path. Every call goes through the real dispatcher and store.

// pathsSetup returns a client on a fresh store, the workspace and an
// "outside" folder next to it, with rel the relative way from the
// workspace to outside (for relative symlinks that escape).
func pathsSetup(t *testing.T) (c *client.Client, ws, outside, rel string) {
	t.Helper()
	deps := newDeps(t, false)
	c, _ = inProcess(t, deps, protocols[0])
	ws = deps.Workspace
	outside = t.TempDir()
	rel, err := filepath.Rel(ws, outside)
	must(t, err)
	return c, ws, outside, rel
}

// callWithin is call, failing the test if the answer takes more than 5 s
// (a blocking open of a FIFO would otherwise hang the test).
func callWithin(t *testing.T, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	var env map[string]any
	done := make(chan struct{})
	go func() { defer close(done); env = call(t, c, tool, args) }()
	select {
	case <-done:
		return env
	case <-time.After(5 * time.Second):
		t.Fatalf("%s %v blocked for 5 s", tool, args)
	}
	return nil
}

// noServerPaths fails when the envelope shows any of the server paths
// beyond the name the caller gave (given, which may itself be absolute).
func noServerPaths(t *testing.T, env map[string]any, given string, paths ...string) {
	t.Helper()
	b, _ := json.Marshal(env)
	text := string(b)
	if given != "" {
		q, _ := json.Marshal(given)
		text = strings.ReplaceAll(text, strings.Trim(string(q), `"`), "<given>")
		// The message quotes it with %q, which JSON escapes again.
		q2, _ := json.Marshal(string(q))
		text = strings.ReplaceAll(text, strings.Trim(string(q2), `"`), "<given>")
	}
	for _, p := range paths {
		if p != "" && p != "/" && strings.Contains(text, p) {
			t.Errorf("answer shows server path %s: %s", p, b)
		}
	}
}

// serverPaths lists absolute paths an answer must never show.
func serverPaths(t *testing.T, ws, outside string) []string {
	out := []string{ws, outside, os.TempDir() + "/"}
	if wd, err := os.Getwd(); err == nil {
		out = append(out, wd)
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		out = append(out, real)
	}
	return out
}

// foundrySpec returns foundry_basic.json with edit (when not nil) applied
// to its text.
func foundrySpec(t *testing.T, edit func(string) string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "specs", "testdata", "foundry_basic.json"))
	must(t, err)
	if edit == nil {
		return b
	}
	out := edit(string(b))
	if out == string(b) {
		t.Fatal("edit did not apply")
	}
	return []byte(out)
}

// importBasic imports foundry_basic into the store as a pending spec and
// returns its id.
func importBasic(t *testing.T, c *client.Client, ws string) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(ws, "seed", "pending"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "seed", "pending", "basic.json"), foundrySpec(t, nil), 0o644))
	env := call(t, c, "spec", map[string]any{"action": "import", "path": "seed"})
	files := data(env)["files"].([]any)
	f := files[0].(map[string]any)
	if f["outcome"] != "imported" {
		t.Fatalf("seed import: %v", env)
	}
	return f["spec_id"].(string)
}

// Item 1: a spec whose spec_id or node id is a path is rejected on import,
// named by its relative file and the INVALID_ID code, and never stored, so
// export cannot create anything outside.
func TestImportRejectsPathIDs(t *testing.T) {
	t.Parallel()
	c, ws, outside, rel := pathsSetup(t)
	pending := filepath.Join(ws, "specs", "pending")
	must(t, os.MkdirAll(pending, 0o755))
	victim := filepath.ToSlash(filepath.Join(rel, "victim"))
	must(t, os.WriteFile(filepath.Join(pending, "evil.json"), foundrySpec(t, func(s string) string {
		return strings.Replace(s, `"spec_id": "csv-export-2025-11-03-001"`, `"spec_id": "../../../`+victim+`"`, 1)
	}), 0o644))
	must(t, os.WriteFile(filepath.Join(pending, "deep.json"), foundrySpec(t, func(s string) string {
		s = strings.Replace(s, `"spec_id": "csv-export-2025-11-03-001"`, `"spec_id": "deep-2025-11-03-001"`, 1)
		return strings.ReplaceAll(s, `"task-1-1"`, `"../../x/deep/mk"`)
	}), 0o644))
	env := call(t, c, "spec", map[string]any{"action": "import", "path": "specs"})
	if env["success"] != true {
		t.Fatalf("import: %v", env)
	}
	got := map[string]map[string]any{}
	for _, f := range data(env)["files"].([]any) {
		m := f.(map[string]any)
		got[m["file"].(string)] = m
	}
	for _, name := range []string{"pending/evil.json", "pending/deep.json"} {
		m := got[name]
		codes, _ := json.Marshal(m["diagnostic_codes"])
		if m["outcome"] != "rejected" || !strings.Contains(string(codes), `"INVALID_ID"`) {
			t.Errorf("%s: want rejected with INVALID_ID, got %v", name, m)
		}
	}
	noServerPaths(t, env, "", serverPaths(t, ws, outside)...)
	list := data(call(t, c, "spec", map[string]any{"action": "list"}))
	if b, _ := json.Marshal(list); strings.Contains(string(b), "victim") || strings.Contains(string(b), "deep-2025") {
		t.Fatalf("a rejected spec was stored: %s", b)
	}
	exp := call(t, c, "spec", map[string]any{"action": "export", "path": "out"})
	if exp["success"] != true {
		t.Fatalf("export: %v", exp)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("export created %d entries outside the workspace", len(entries))
	}
}

// Item 1 (b): every parameter that carries a spec or node id refuses a path
// with INVALID_FORMAT naming the field and the received value.
func TestIDParametersRefusePaths(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, reg := inProcess(t, deps, protocols[1])
	const bad = "../../../outside/victim"
	idParams := map[string]bool{"spec_id": true, "task_id": true, "parent": true, "target_id": true, "node_id": true,
		"phase_id": true, "verify_id": true, "task_ids": true, "target": true}
	checked := 0
	for _, tool := range reg.Tools() {
		for _, p := range tool.Params {
			if !idParams[p.Name] {
				continue
			}
			for _, a := range tool.Actions {
				takes := false
				for _, n := range a.Params() {
					takes = takes || n == p.Name
				}
				if !takes {
					continue
				}
				var v any = bad
				field := p.Name
				if p.Name == "task_ids" {
					v, field = []any{bad}, "task_ids[0]"
				}
				env := call(t, c, tool.Name, map[string]any{"action": a.Name, p.Name: v})
				d := data(env)
				det, _ := d["details"].(map[string]any)
				if errorCode(env) != "INVALID_FORMAT" || det["field"] != field || det["received"] != bad {
					t.Errorf("%s %s %s=%q: want INVALID_FORMAT naming %s and the value, got %v", tool.Name, a.Name, p.Name, bad, field, d)
				}
				checked++
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d (tool, action, id parameter) triples checked", checked)
	}
	// An id inside an object item is checked too.
	env := call(t, c, "task", map[string]any{"action": "complete-batch", "spec_id": "s-2026-01-01-001",
		"completions": []any{map[string]any{"task_id": bad, "success": true}}})
	if det, _ := data(env)["details"].(map[string]any); errorCode(env) != "INVALID_FORMAT" || det["field"] != "completions[0].task_id" {
		t.Errorf("complete-batch item: %v", data(env))
	}
}

// Items 2, 5, 6: export never writes or deletes through a symlinked
// lifecycle folder, and user mistakes are INVALID_FORMAT with a remediation
// and a recovery call that runs as given; no answer shows a server path.
func TestExportRefusesEscapesAndUserMistakes(t *testing.T) {
	t.Parallel()
	c, ws, outside, rel := pathsSetup(t)
	id := importBasic(t, c, ws)
	hidden := serverPaths(t, ws, outside)

	// A lifecycle folder that is a symlink out: write refused.
	must(t, os.MkdirAll(filepath.Join(outside, "target"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "out"), 0o755))
	must(t, os.Symlink(filepath.Join("..", rel, "target"), filepath.Join(ws, "out", "pending")))
	// Another export folder whose "active" leads out to a victim copy:
	// the "remove from the other folders" step must not delete it.
	must(t, os.MkdirAll(filepath.Join(outside, "v2"), 0o755))
	victim := filepath.Join(outside, "v2", id+".json")
	must(t, os.WriteFile(victim, []byte("VICTIM"), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "out2"), 0o755))
	must(t, os.Symlink(filepath.Join("..", rel, "v2"), filepath.Join(ws, "out2", "active")))
	// User mistakes.
	must(t, os.WriteFile(filepath.Join(ws, "afile"), []byte("x"), 0o644))
	must(t, os.Symlink("nowhere", filepath.Join(ws, "dangling")))

	for _, path := range []string{"out", "out2", "afile", "dangling", "out\x00x", "../" + filepath.ToSlash(rel), filepath.Join(outside, "x"), "/proc/self/cwd"} {
		env := call(t, c, "spec", map[string]any{"action": "export", "path": path})
		d := data(env)
		if errorCode(env) != "INVALID_FORMAT" || d["remediation"] == "" {
			t.Errorf("export to %q: want INVALID_FORMAT with a remediation, got %v", path, d)
			continue
		}
		rec, _ := d["recovery"].(map[string]any)
		tool, _ := rec["suggested_tool"].(string)
		args, _ := rec["suggested_args"].(map[string]any)
		if tool == "" || args == nil {
			t.Errorf("export to %q: no recovery call: %v", path, d)
		} else if r := call(t, c, tool, args); r["success"] != true {
			t.Errorf("export to %q: recovery %s %v does not run: %v", path, tool, args, r)
		}
		noServerPaths(t, env, path, hidden...)
	}
	if entries, _ := os.ReadDir(filepath.Join(outside, "target")); len(entries) != 0 {
		t.Errorf("export wrote %d entries through out/pending", len(entries))
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "VICTIM" {
		t.Errorf("export removed or changed the outside copy: %q %v", b, err)
	}
	// A symlinked folder that stays inside is followed.
	must(t, os.MkdirAll(filepath.Join(ws, "real"), 0o755))
	must(t, os.Symlink("real", filepath.Join(ws, "alias")))
	if env := call(t, c, "spec", map[string]any{"action": "export", "path": "alias"}); env["success"] != true {
		t.Fatalf("export through an inside symlink: %v", env)
	}
	if _, err := os.Stat(filepath.Join(ws, "real", "pending", id+".json")); err != nil {
		t.Fatal(err)
	}
}

// Item 4: FIFOs are refused at once, by digest-create (five times, then
// liveness still answers) and by an import folder walk (reported per file).
func TestFIFOsAreRefusedAtOnce(t *testing.T) {
	t.Parallel()
	c, ws, outside, _ := pathsSetup(t)
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe.txt"), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "specs"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(ws, "specs", "pipe.json"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "specs", "basic.json"), foundrySpec(t, nil), 0o644))
	must(t, os.Symlink("pipe.txt", filepath.Join(ws, "pipe-link.txt")))
	must(t, os.Symlink("../pipe.txt", filepath.Join(ws, "specs", "link.json")))
	hidden := serverPaths(t, ws, outside)

	for i := 0; i < 6; i++ {
		path := "pipe.txt"
		if i == 5 {
			path = "pipe-link.txt"
		}
		env := callWithin(t, c, "research", map[string]any{"action": "digest-create", "path": path, "query": "x"})
		if errorCode(env) != "INVALID_FORMAT" {
			t.Fatalf("FIFO digest-create: %v", data(env))
		}
	}
	if env := callWithin(t, c, "health", map[string]any{"action": "liveness"}); env["success"] != true {
		t.Fatalf("liveness after FIFO calls: %v", env)
	}
	env := callWithin(t, c, "spec", map[string]any{"action": "import", "path": "specs"})
	files := importReports(env)
	if files["pipe.json"]["outcome"] != "rejected" || files["link.json"]["outcome"] != "rejected" || files["basic.json"]["outcome"] != "imported" {
		t.Fatalf("import with a FIFO: %v", data(env))
	}
	noServerPaths(t, env, "", hidden...)
}

// Item 5: whatever path the caller names, digest-create, server context and
// health check show no server path (only the name the caller gave).
func TestAnswersShowNoServerPaths(t *testing.T) {
	t.Parallel()
	c, ws, outside, rel := pathsSetup(t)
	must(t, os.MkdirAll(filepath.Join(ws, "specs"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET text"), 0o644))
	must(t, os.Symlink(filepath.Join(rel, "secret.txt"), filepath.Join(ws, "out-link.txt")))
	hidden := serverPaths(t, ws, outside)
	for _, p := range []string{"out-link.txt", "../" + filepath.ToSlash(rel) + "/secret.txt",
		"/proc/self/cwd", "/proc/self/exe", "/proc/self/environ", filepath.Join(outside, "secret.txt"), ws + "/../x", "missing.txt", "specs"} {
		env := callWithin(t, c, "research", map[string]any{"action": "digest-create", "path": p, "query": "text"})
		if env["success"] != false {
			t.Errorf("digest-create %q succeeded: %v", p, data(env))
		}
		if b, _ := json.Marshal(env); strings.Contains(string(b), "SECRET") {
			t.Errorf("digest-create %q returned the outside file", p)
		}
		noServerPaths(t, env, p, hidden...)
	}
	for _, q := range []map[string]any{{"action": "context"}} {
		noServerPaths(t, call(t, c, "server", q), "", hidden...)
	}
	noServerPaths(t, call(t, c, "health", map[string]any{"action": "check"}), "", hidden...)
}

// Item 3: while a goroutine keeps swapping a workspace file (and an export
// folder) with a symlink to an outside one by rename, digest-create never
// returns the outside text and export never writes outside. Bounded in
// calls and time.
func TestSwapRaceStaysInside(t *testing.T) {
	t.Parallel()
	c, ws, outside, rel := pathsSetup(t)
	id := importBasic(t, c, ws)
	const inside = "inside words about alpha"
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET words about alpha"), 0o644))
	must(t, os.MkdirAll(filepath.Join(outside, "dir"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "swap.txt"), []byte(inside), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "out", "pending"), 0o755))
	insideHash := sha256.Sum256([]byte(inside))

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fileLink, fileReg := filepath.Join(ws, ".swap-link"), filepath.Join(ws, ".swap-reg")
		dirLink, dirReal := filepath.Join(ws, "out", ".pending-link"), filepath.Join(ws, "out", ".pending-real")
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				_ = os.Symlink(filepath.Join(rel, "secret.txt"), fileLink)
				_ = os.Rename(fileLink, filepath.Join(ws, "swap.txt"))
				_ = os.Symlink(filepath.Join("..", "..", rel, "dir"), dirLink)
				_ = os.Rename(filepath.Join(ws, "out", "pending"), dirReal)
				_ = os.Rename(dirLink, filepath.Join(ws, "out", "pending"))
			} else {
				_ = os.WriteFile(fileReg, []byte(inside), 0o644)
				_ = os.Rename(fileReg, filepath.Join(ws, "swap.txt"))
				_ = os.Remove(filepath.Join(ws, "out", "pending"))
				_ = os.Rename(dirReal, filepath.Join(ws, "out", "pending"))
			}
		}
	}()
	deadline := time.Now().Add(15 * time.Second)
	digests, exports := 0, 0
	for i := 0; i < swapCalls && time.Now().Before(deadline); i++ {
		env := call(t, c, "research", map[string]any{"action": "digest-create", "path": "swap.txt", "query": "alpha words"})
		b, _ := json.Marshal(env)
		if strings.Contains(string(b), "SECRET") {
			t.Fatalf("call %d returned the outside file: %s", i, b)
		}
		if env["success"] == true && data(env)["source_text_hash"] != "sha256:"+hex.EncodeToString(insideHash[:]) {
			t.Fatalf("call %d hashed another text: %v", i, data(env)["source_text_hash"])
		}
		digests++
		if i%4 == 0 {
			call(t, c, "spec", map[string]any{"action": "export", "path": "out", "spec_id": id})
			exports++
		}
	}
	stop.Store(true)
	wg.Wait()
	if entries, _ := os.ReadDir(filepath.Join(outside, "dir")); len(entries) != 0 {
		t.Fatalf("export wrote %d entries outside the workspace", len(entries))
	}
	t.Logf("%d digest-create and %d export calls under the swap", digests, exports)
}

// Item 1 (export side): even a spec stored under a path-like id (as one
// imported before the grammar existed would be) is never written outside
// the export folder: export skips it and says so.
func TestExportNeverUsesAStoredPathID(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	outside := t.TempDir()
	rel, err := filepath.Rel(deps.Workspace, outside)
	must(t, err)
	badID := "../../../" + filepath.ToSlash(filepath.Join(rel, "victim"))
	doc, err := specs.ParseDocument(foundrySpec(t, func(s string) string {
		return strings.Replace(s, `"spec_id": "csv-export-2025-11-03-001"`, `"spec_id": "`+badID+`"`, 1)
	}))
	must(t, err)
	must(t, deps.Specs.ImportSpec(context.Background(), specs.FromDocument(*doc), nil, false))
	env := call(t, c, "spec", map[string]any{"action": "export", "path": "out/deep"})
	if env["success"] != true {
		t.Fatalf("export: %v", env)
	}
	d := data(env)
	if skipped, _ := d["skipped"].([]any); len(skipped) != 1 || d["count"] != float64(0) {
		t.Fatalf("want the bad id skipped, got %v", d)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("export wrote %d entries outside the workspace", len(entries))
	}
}

// Item 1 (b) for resources: a spec id in a resource URI follows the same
// grammar.
func TestResourceURIsRefuseBadIDs(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, uri := range []string{"specd://specs/Bad..ID", "specd://specs/..", "specd://specs/Bad..ID/journal"} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		if _, err := c.ReadResource(ctx, req); err == nil || !strings.Contains(err.Error(), "INVALID_FORMAT") {
			t.Errorf("read %s: want INVALID_FORMAT, got %v", uri, err)
		}
	}
}

// TestExportRefusesReservedFolders: spec export into
// .specd or .git, below them, or into a folder that resolves there (./, ..,
// case, an absolute path, a symlink to them or below them) is
// INVALID_FORMAT with a remediation and a recovery that runs as given (an
// export to a folder of the caller's own), and writes nothing there;
// look-alike names (.github, .specdx) stay allowed.
func TestExportRefusesReservedFolders(t *testing.T) {
	t.Parallel()
	c, ws, outside, _ := pathsSetup(t)
	id := importBasic(t, c, ws)
	hidden := serverPaths(t, ws, outside)
	must(t, os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, ".specd", "sub"), 0o755))
	must(t, os.Symlink(filepath.Join(".git", "hooks"), filepath.Join(ws, "hooks-link")))
	must(t, os.Symlink(".specd", filepath.Join(ws, "store-link")))
	must(t, os.MkdirAll(filepath.Join(ws, "deep"), 0o755))
	must(t, os.Symlink(filepath.Join("..", ".specd", "sub"), filepath.Join(ws, "deep", "up")))
	listing := func(dir string) []string {
		var names []string
		_ = filepath.WalkDir(filepath.Join(ws, dir), func(p string, _ os.DirEntry, _ error) error {
			names = append(names, p)
			return nil
		})
		return names
	}
	beforeGit, beforeSpecd := listing(".git"), listing(".specd")
	for _, path := range []string{".specd", ".specd/x", "./.specd", "x/../.specd", ".SPECD", ".Git/hooks",
		".git", ".git/hooks", "./.git/", filepath.Join(ws, ".git"), "hooks-link", "store-link/out", "deep/up", "deep/up/more"} {
		for _, args := range []map[string]any{{"action": "export", "path": path}, {"action": "export", "path": path, "spec_id": id}} {
			env := call(t, c, "spec", args)
			d := data(env)
			det, _ := d["details"].(map[string]any)
			if errorCode(env) != "INVALID_FORMAT" || d["remediation"] == "" || det["field"] != "path" {
				t.Errorf("export to %q: want INVALID_FORMAT naming path with a remediation, got %v", path, d)
				continue
			}
			rec, _ := d["recovery"].(map[string]any)
			sargs, _ := rec["suggested_args"].(map[string]any)
			if rec["suggested_tool"] != "spec" || sargs["action"] != "export" || sargs["path"] != "specs" || sargs["spec_id"] != args["spec_id"] {
				t.Errorf("export to %q: recovery %v, want an export to specs", path, rec)
			} else if r := call(t, c, "spec", sargs); r["success"] != true {
				t.Errorf("export to %q: recovery %v does not run: %v", path, sargs, r)
			}
			noServerPaths(t, env, path, hidden...)
		}
	}
	if after := listing(".git"); fmt.Sprint(after) != fmt.Sprint(beforeGit) {
		t.Errorf("export wrote into .git: %v", after)
	}
	if after := listing(".specd"); fmt.Sprint(after) != fmt.Sprint(beforeSpecd) {
		t.Errorf("export wrote into .specd: %v", after)
	}
	for _, path := range []string{".github", ".specdx", "specs/.git-notes"} {
		if env := call(t, c, "spec", map[string]any{"action": "export", "path": path, "spec_id": id}); env["success"] != true {
			t.Errorf("export to %q: %v", path, data(env))
		}
	}
}
