package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/etcdstore/etcdtest"
)

// mirrorWait is how long the test waits for the mirror to catch up with a
// change before failing: a ceiling for a loaded machine, not a latency
// bound (the mirror follows the store's change feed at once).
const mirrorWait = 60 * time.Second

// startServeWith starts the built binary serving stdio in workspace ws
// with args (the store's among them), and connects a client.
func startServeWith(t *testing.T, ws string, args ...string) *client.Client {
	t.Helper()
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	args = append([]string{"serve", "--log-level", "debug"}, args...)
	st := transport.NewStdioWithOptions(specdBinary(t), []string{"SPECD_WORKSPACE=" + ws}, args, transport.WithCommandStderrWriter(logw))
	if err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(st, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	initialize(t, c, mcp.ProtocolVersion20251125)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// exported is what spec export writes for id now, through c, and its file
// under the export folder (e.g. active/<id>.json).
func exported(t *testing.T, c *client.Client, ws, id string) (string, []byte) {
	t.Helper()
	d := taskOK(t, c, "spec", map[string]any{"action": "export", "path": "exported", "spec_id": id})
	file := d["files"].([]any)[0].(map[string]any)["file"].(string)
	raw, err := os.ReadFile(filepath.Join(ws, "exported", filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	return file, raw
}

// waitFile waits until the workspace file name holds want (nil: until it
// is absent), failing after mirrorWait with what it holds.
func waitFile(t *testing.T, ws, name string, want []byte) {
	t.Helper()
	deadline := time.Now().Add(mirrorWait)
	for {
		got, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(name)))
		switch {
		case want == nil && os.IsNotExist(err):
			return
		case want != nil && err == nil && bytes.Equal(got, want):
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: err %v, holds\n%s\nwant\n%s", name, mirrorWait, err, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMirrorFollowsEveryProcess runs three specd processes on one store,
// two of them with --mirror specs: changes made through any (over MCP) land
// in specs/ as spec export writes them, a lifecycle move moves the file, a
// person's edit is left alone and reported (the newer version beside it),
// and spec import of the mirror into an empty store gives the spec back
// byte for byte.
func TestMirrorFollowsEveryProcess(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(ws, ".specd", "specd.db")
	mirrored := startServeWith(t, ws, "--db", db, "--mirror", "specs")
	other := startServeWith(t, ws, "--db", db)
	// A second mirroring process of the same workspace: passes take turns
	// and share what was written, so neither takes the other's writes for
	// a person's edits.
	second := startServeWith(t, ws, "--db", db, "--mirror", "specs")

	// A spec made and filled by the process without the mirror.
	id := taskOK(t, other, "authoring", map[string]any{"action": "spec-create", "name": "mirror plan"})["spec_id"].(string)
	tasks := taskOK(t, other, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Build"},
		"tasks": []any{map[string]any{"title": "Write it", "file_path": "a.go"}, map[string]any{"title": "Test it", "file_path": "a_test.go"}}})["task_ids"].([]any)
	file, want := exported(t, other, ws, id)
	if !strings.HasPrefix(file, "pending/") {
		t.Fatalf("a new spec exports to %s", file)
	}
	waitFile(t, ws, "specs/"+file, want)

	// A lifecycle move by the other process moves the file.
	taskOK(t, other, "lifecycle", map[string]any{"action": "activate", "spec_id": id})
	moved, want := exported(t, other, ws, id)
	if !strings.HasPrefix(moved, "active/") {
		t.Fatalf("an active spec exports to %s", moved)
	}
	waitFile(t, ws, "specs/"+moved, want)
	waitFile(t, ws, "specs/"+file, nil)

	// Changes by the mirroring processes themselves.
	taskOK(t, mirrored, "task", map[string]any{"action": "start", "spec_id": id, "task_id": tasks[0]})
	taskOK(t, second, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": tasks[0], "completion_note": "done", "force": true})
	_, want = exported(t, mirrored, ws, id)
	waitFile(t, ws, "specs/"+moved, want)

	// A person edits the mirrored file; the next change is not written
	// over it but beside it, and health check names the file.
	path := filepath.Join(ws, "specs", filepath.FromSlash(moved))
	edited := bytes.Replace(want, []byte(`"Write it"`), []byte(`"Write it well"`), 1)
	if bytes.Equal(edited, want) {
		t.Fatal("the edit changed nothing")
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	taskOK(t, other, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": tasks[1], "completion_note": "done"})
	_, want = exported(t, other, ws, id)
	waitFile(t, ws, "specs/"+moved+".specd-new", want)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, edited) {
		t.Fatalf("the person's edit was overwritten:\n%s", got)
	}
	env := call(t, mirrored, "health", map[string]any{"action": "check"})
	details, _ := env["meta"].(map[string]any)["warning_details"].([]any)
	named := false
	for _, w := range details {
		w := w.(map[string]any)
		named = named || (w["code"] == "MIRROR_CONFLICT" && strings.Contains(w["message"].(string), "specs/"+moved))
	}
	if !named {
		t.Fatalf("health check does not name the changed file: %v", env["meta"])
	}
	out, err := exec.Command(specdBinary(t), "mirror", "status", "--mirror", "specs", "--db", db, "--workspace", ws, "--log-level", "error").Output()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), `"file": "specs/`+moved+`"`) {
		t.Fatalf("mirror status: exit %d\n%s", code, out)
	}

	// The person takes specd's version: the mirror carries on.
	if err := os.Rename(path+".specd-new", path); err != nil {
		t.Fatal(err)
	}
	taskOK(t, other, "journal", map[string]any{"action": "add", "spec_id": id, "title": "Reviewed", "content": "reviewed in a pull request", "entry_type": "note"})
	_, want = exported(t, other, ws, id)
	waitFile(t, ws, "specs/"+moved, want)

	// spec import of the mirror into an empty store reproduces the spec.
	fresh := filepath.Join(ws, ".specd", "fresh.db")
	imp := exec.Command(specdBinary(t), "call", "spec", `{"action":"import","path":"specs"}`, "--db", fresh, "--workspace", ws, "--log-level", "error")
	if out, err := imp.Output(); err != nil || !strings.Contains(string(out), `"imported": 1`) {
		t.Fatalf("import of the mirror: %v\n%s", err, out)
	}
	exp := exec.Command(specdBinary(t), "call", "spec", `{"action":"export","path":"again","spec_id":"`+id+`"}`, "--db", fresh, "--workspace", ws, "--log-level", "error")
	if out, err := exp.Output(); err != nil {
		t.Fatalf("export of the imported spec: %v\n%s", err, out)
	}
	again, err := os.ReadFile(filepath.Join(ws, "again", filepath.FromSlash(moved)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatalf("import of the mirror does not reproduce the spec:\n%s\nwant\n%s", again, want)
	}
}

// TestMirrorFollowsEtcdServers: two specd servers on one etcd prefix, in
// two workspaces (two machines), one with --mirror: what is changed
// through the other server lands in the mirroring server's workspace, and
// a lifecycle move moves the file there.
func TestMirrorFollowsEtcdServers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary and an etcd member")
	}
	store := "etcd://" + etcdtest.Start(t, 4096) + "/mirror"
	wsA, wsB := t.TempDir(), t.TempDir()
	startServeWith(t, wsA, "--store", store, "--mirror", "specs")
	other := startServeWith(t, wsB, "--store", store)

	id := taskOK(t, other, "authoring", map[string]any{"action": "spec-create", "name": "etcd plan"})["spec_id"].(string)
	taskOK(t, other, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Build"},
		"tasks": []any{map[string]any{"title": "Write it", "file_path": "a.go"}}})
	file, want := exported(t, other, wsB, id)
	waitFile(t, wsA, "specs/"+file, want)
	taskOK(t, other, "lifecycle", map[string]any{"action": "activate", "spec_id": id})
	moved, want := exported(t, other, wsB, id)
	waitFile(t, wsA, "specs/"+moved, want)
	waitFile(t, wsA, "specs/"+file, nil)
}

// exitCode is a finished command's exit status (0 for a nil error).
func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
