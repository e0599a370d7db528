// Package tests holds specd's end-to-end tests: a real mcp-go client talks to
// the server in-process and, over stdio, to the built binary, with both the
// 2025-11-25 (initialize handshake) and 2026-07-28 (stateless) protocols.
package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/tools"
)

var update = flag.Bool("update", false, "rewrite golden files")

// protocols are the MCP revisions every end-to-end test runs under.
var protocols = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728}

// fixedClock returns a clock that never moves, so durations are 0 and
// golden envelopes are stable.
func fixedClock() func() time.Time {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return t0 }
}

// counterIDs returns deterministic UUID-shaped ids.
func counterIDs() func() string { return counterIDsFrom(new(atomic.Int64)) }

// counterIDsFrom returns deterministic UUID-shaped ids numbered after n's
// value, advancing n, so a caller can read how many were handed out.
func counterIDsFrom(n *atomic.Int64) func() string {
	return func() string { return fmt.Sprintf("00000000-0000-7000-8000-%012x", n.Add(1)) }
}

// newDeps builds tools.Deps over a fresh store in t.TempDir(); deterministic
// makes the clock and ids fixed.
func newDeps(t testing.TB, deterministic bool) *tools.Deps {
	t.Helper()
	var ids func() string
	if deterministic {
		ids = counterIDs()
	}
	return depsOn(storetest.Open(t), ids)
}

// depsOn builds tools.Deps over st; a non-nil ids makes the clock fixed and
// the ids come from ids.
func depsOn(st *store.Store, ids func() string) *tools.Deps {
	rt := mcptool.Runtime{Deadline: 10 * time.Second}
	if ids != nil {
		rt.Now, rt.NewID = fixedClock(), ids
	}
	d := &tools.Deps{
		Version:      "test",
		Workspace:    filepath.Dir(filepath.Dir(st.Path())),
		ConfigSource: "test",
		Transports:   []string{"stdio"},
		Started:      time.Now(),
		TokenBudget:  core.DefaultTokenBudget,
		Runtime:      rt,
	}
	d.OverStore(st)
	return d
}

// inProcess starts an in-process client on a new server speaking protocol.
func inProcess(t testing.TB, deps *tools.Deps, protocol string) (*client.Client, *mcptool.Registry) {
	t.Helper()
	srv, reg := tools.NewMCPServer(deps)
	c, err := client.NewInProcessClientWithOptions(srv, client.WithProtocolVersion(protocol))
	if err != nil {
		t.Fatal(err)
	}
	initialize(t, c, protocol)
	// Runs after the client closes: the error answers still queued reach
	// the store before its own cleanup checks and closes it.
	t.Cleanup(func() { reg.FlushErrors(context.Background()) })
	t.Cleanup(func() { _ = c.Close() })
	return c, reg
}

func initialize(t testing.TB, c *client.Client, protocol string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "specd-tests", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize (%s): %v", protocol, err)
	}
	if res.ProtocolVersion != protocol {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, protocol)
	}
}

// builtBinary is a command the tests run: the file $env names, or one
// built once from pkg into a temporary directory, which TestMain removes
// when the tests end.
type builtBinary struct {
	env, pkg, name string

	once sync.Once
	dir  string // the directory the build made ("" before, or with $env)
	path string
	err  error
}

var (
	specdBuild = &builtBinary{env: "SPECD_BIN", pkg: "../cmd/specd", name: "specd"}
	loadBuild  = &builtBinary{env: "SPECD_LOAD_BIN", pkg: "../cmd/specd-load", name: "specd-load"}
)

// get returns the binary's path, building it on the first call.
func (b *builtBinary) get(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(b.env); p != "" {
		return p
	}
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", b.name+"-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
		b.path = filepath.Join(dir, b.name)
		if runtime.GOOS == "windows" {
			b.path += ".exe"
		}
		if out, err := exec.Command("go", "build", "-o", b.path, b.pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// specdBinary returns the binary under test: $SPECD_BIN (make test builds
// it) or one built once (see builtBinary).
func specdBinary(t testing.TB) string { return specdBuild.get(t) }

// overStdio starts the built binary on a fresh store and connects a client.
func overStdio(t testing.TB, protocol string, extraArgs ...string) *client.Client {
	t.Helper()
	db := filepath.Join(t.TempDir(), ".specd", "specd.db")
	args := append([]string{"serve", "--db", db, "--log-level", "debug"}, extraArgs...)
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop) // registered first, so it runs after the client is closed
	tr := transport.NewStdioWithOptions(specdBinary(t), []string{"SPECD_WORKSPACE=" + t.TempDir()}, args,
		transport.WithCommandStderrWriter(logw))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(protocol))
	initialize(t, c, protocol)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testLogWriter forwards the server's stderr to the test log.
type testLogWriter struct {
	t       testing.TB
	mu      sync.Mutex
	stopped bool
}

func (w *testLogWriter) stop() { w.mu.Lock(); w.stopped = true; w.mu.Unlock() }

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return len(p), nil
	}
	w.t.Logf("specd stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// call invokes tool with args and decodes the envelope from structuredContent,
// checking that content[0].text mirrors it and isError == !success.
func call(t testing.TB, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	return envelopeOf(t, callRaw(t, c, tool, args))
}

// callRaw makes one tool call and returns the raw result; a transport error
// fails the test (tool failures must be envelopes). The deadline is a
// ceiling for the largest answers under -race, not a performance bound.
func callRaw(t testing.TB, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s %v: transport error (tool failures must be envelopes): %v", tool, args, err)
	}
	return res
}

func envelopeOf(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	structured := []byte(res.RawStructuredContent)
	if structured == nil {
		var err error
		if structured, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.Content) != 1 {
		t.Fatalf("want exactly one content item, got %d", len(res.Content))
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] is %T, want text", res.Content[0])
	}
	// The client decoded structuredContent with encoding/json already: an
	// object is a map[string]any of what the wire said; anything else is
	// decoded again to say what it is.
	env, isObject := res.StructuredContent.(map[string]any)
	var mirror map[string]any
	if !isObject {
		if err := json.Unmarshal(structured, &env); err != nil {
			t.Fatalf("structuredContent is not an object: %s", structured)
		}
	}
	if err := json.Unmarshal([]byte(text.Text), &mirror); err != nil {
		t.Fatalf("content[0].text is not JSON: %q", text.Text)
	}
	// Decoded JSON values (maps, slices, float64, string, bool, nil) are
	// deeply equal exactly when they encode to the same canonical JSON.
	if !reflect.DeepEqual(env, mirror) {
		t.Fatalf("content[0].text does not mirror structuredContent:\n%s\n%s", structured, text.Text)
	}
	if strings.Contains(text.Text, "\n") {
		t.Fatalf("content[0].text is not compact JSON")
	}
	if res.IsError != !env["success"].(bool) {
		t.Fatalf("isError=%v but success=%v", res.IsError, env["success"])
	}
	validateEnvelopeJSON(t, structured)
	return env
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
)

// validateEnvelopeJSON checks the JSON of an envelope (as a client sees
// it) against the published envelope schema.
func validateEnvelopeJSON(t testing.TB, b []byte) {
	t.Helper()
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(core.EnvelopeSchema()))
		if err != nil {
			panic(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("envelope.json", doc); err != nil {
			panic(err)
		}
		schema = c.MustCompile("envelope.json")
	})
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("envelope does not validate against the output schema: %v\n%s", err, b)
	}
}

// data returns env.data as a map.
func data(env map[string]any) map[string]any { m, _ := env["data"].(map[string]any); return m }

// errorCode returns env.data.error_code.
func errorCode(env map[string]any) string { s, _ := data(env)["error_code"].(string); return s }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
