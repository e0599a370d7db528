package tests

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/tools"
)

// fixtureTemplate is the contract fixture (see fixture) built once in a
// workspace of its own and closed, so that each test that needs a fresh
// fixture gets a byte copy of that workspace instead of the seven calls
// that build one: the same stored state, at the cost of a file copy.
type fixtureTemplate struct {
	dir           string            // the closed workspace (its .specd/specd.db)
	fx            map[string]string // the placeholders of the fixture in it
	deterministic bool              // built with the fixed clock and counter ids
	ids           int64             // counter ids handed out while building it
}

// newFixtureTemplate builds the fixture over protocol in a store under
// t.TempDir() and closes the store. deterministic as in newDeps.
func newFixtureTemplate(t *testing.T, protocol string, deterministic bool) *fixtureTemplate {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(store.Options{Path: filepath.Join(dir, ".specd", "specd.db"), LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int64)
	var ids func() string
	if deterministic {
		ids = counterIDsFrom(n)
	}
	srv, reg := tools.NewMCPServer(depsOn(st, ids))
	c, err := client.NewInProcessClientWithOptions(srv, client.WithProtocolVersion(protocol))
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, c, protocol)
	fx := fixture(t, c)
	must(t, c.Close())
	reg.FlushErrors(context.Background())
	must(t, st.Close())
	return &fixtureTemplate{dir: dir, fx: fx, deterministic: deterministic, ids: n.Load()}
}

// open copies the template's workspace into t.TempDir() and returns the
// deps over the copy (ids continue where the template's left off), and a
// copy of the placeholders.
func (ft *fixtureTemplate) open(t *testing.T) (*tools.Deps, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS(ft.dir)))
	st := storetest.Open(t, func(o *store.Options) { o.Path = filepath.Join(dir, ".specd", "specd.db") })
	var ids func() string
	if ft.deterministic {
		n := new(atomic.Int64)
		n.Store(ft.ids)
		ids = counterIDsFrom(n)
	}
	fx := make(map[string]string, len(ft.fx))
	for k, v := range ft.fx {
		fx[k] = v
	}
	return depsOn(st, ids), fx
}

// client copies the template (open) and connects an in-process client
// speaking protocol to a new server over the copy.
func (ft *fixtureTemplate) client(t *testing.T, protocol string) (*client.Client, map[string]string) {
	t.Helper()
	deps, fx := ft.open(t)
	c, _ := inProcess(t, deps, protocol)
	return c, fx
}

// readClient is client for actions that only read (SideEffects none or
// read), which share the one copy it makes instead of a copy each: it
// connects a client to a server over one copy of the template and, after
// every subtest of t has finished (parallel ones included), fails t if any
// file of the copy's workspace or any record of its store changed — except
// the error log, where every failing call (read or not) records the error
// answer it gave (the error tool's record, by design). An unchanged
// workspace and store prove the sharing actions wrote nothing else, and
// each saw the state a copy of its own would have had.
func (ft *fixtureTemplate) readClient(t *testing.T, protocol string) (*client.Client, map[string]string) {
	t.Helper()
	deps, fx := ft.open(t)
	c, _ := inProcess(t, deps, protocol)
	// The store's first open in a process writes its meta record (initMeta);
	// a read opens it first, so that write is not counted as an action's.
	if env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": fx["$spec_id"]}); env["success"] != true {
		t.Fatalf("spec get on the shared copy: %v", env)
	}
	st := deps.Store.(*store.Store)
	before := workspaceDigest(t, deps.Workspace, st)
	t.Cleanup(func() { // before the client, the store and the folder close (cleanups run last first)
		if after := workspaceDigest(t, deps.Workspace, st); after != before {
			t.Errorf("actions that only read changed the workspace they share:\nbefore %s\nafter  %s", before, after)
		}
	})
	return c, fx
}

// workspaceDigest names every file under dir but the store's with the
// SHA-256 of its content, sorted by path, and hashes every record of st
// but the error log's (the store file itself changes with any commit, the
// error log's included; its <db>.lock is the queue of waiting processes).
func workspaceDigest(t *testing.T, dir string, st *store.Store) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, st.Path()) {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(&b, "%s:%x ", rel, sha256.Sum256(content))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	err = st.Export(context.Background(), func(e store.Entry) error {
		if len(e.Bucket) > 0 && e.Bucket[0] == "error_log" {
			return nil
		}
		fmt.Fprintf(h, "%q %q %q %d\n", e.Bucket, e.Key, e.Value, e.Seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "store:%x", h.Sum(nil))
	return b.String()
}

// exampleArgs returns the arguments of act's declared Example with the
// fixture's placeholders substituted, after running what the example relies
// on in the workspace: spec import's example reads the folder that spec
// export's example writes.
func exampleArgs(t *testing.T, c *client.Client, tool *mcptool.Tool, act *mcptool.Action, fx map[string]string) map[string]any {
	t.Helper()
	if tool.Name == "spec" && act.Name == "import" {
		exp := map[string]any{"action": "export"}
		for k, v := range findAction(tool, "export").Example {
			exp[k] = substitute(v, fx)
		}
		if env := call(t, c, "spec", exp); env["success"] != true {
			t.Fatalf("export before import: %v", env)
		}
	}
	args := map[string]any{"action": act.Name}
	for k, v := range act.Example {
		args[k] = substitute(v, fx)
	}
	return args
}
