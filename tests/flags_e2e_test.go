package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags"
	"github.com/specd/specd/flags/registry"
)

// flagFile is a flagd flag file with every registry flag at its default
// variant, overridden by defaults (flag → "on"/"off") and by raw flag
// definitions (flag → JSON).
func flagFile(defaults map[string]string, raw map[string]string) string {
	var parts []string
	for _, f := range registry.Flags {
		def := "off"
		if f.Default {
			def = "on"
		}
		if v, ok := defaults[f.Name]; ok {
			def = v
		}
		body := fmt.Sprintf(`{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":%q}`, def)
		if r, ok := raw[f.Name]; ok {
			body = r
		}
		parts = append(parts, fmt.Sprintf("%q: %s", f.Name, body))
	}
	return "{\"flags\": {\n" + strings.Join(parts, ",\n") + "\n}}\n"
}

// writeFlagFile writes a flag file into a fresh directory and returns its path.
func writeFlagFile(t testing.TB, defaults map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flags.json")
	must(t, os.WriteFile(p, []byte(flagFile(defaults, nil)), 0o644))
	return p
}

// replaceFile swaps path's content in one rename, as most editors save.
func replaceFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	must(t, os.WriteFile(tmp, []byte(content), 0o644))
	must(t, os.Rename(tmp, path))
}

// callV1 makes a call that must come back in the legacy v1 shape: text
// content only, no structuredContent; the bare data object on success,
// {"error", "error_code"} with isError on failure.
func callV1(t testing.TB, c *client.Client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res := callRaw(t, c, tool, args)
	if res.StructuredContent != nil {
		t.Fatalf("%s %v: v1 answer with structuredContent: %v", tool, args, res.StructuredContent)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content is not text", tool)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(tc.Text), &m); err != nil {
		t.Fatalf("%s: text is not a JSON object: %v", tool, err)
	}
	for _, k := range []string{"success", "meta", "data"} {
		if _, has := m[k]; has && !(k == "data" && !res.IsError) {
			t.Fatalf("%s: v1 answer has envelope key %q: %v", tool, k, m)
		}
	}
	if res.IsError {
		if len(m) != 2 || m["error"] == "" || m["error_code"] == "" {
			t.Fatalf("%s: v1 error shape: %v", tool, m)
		}
	}
	return m, !res.IsError
}

// isV2 reports the shape of one answer (and checks it is one of the two).
func isV2(t testing.TB, c *client.Client) bool {
	t.Helper()
	res := callRaw(t, c, "health", map[string]any{"action": "readiness"})
	if res.StructuredContent != nil {
		envelopeOf(t, res)
		return true
	}
	callV1(t, c, "health", map[string]any{"action": "readiness"})
	return false
}

// listHasOutputSchema reports whether tools/list declares output schemas
// (all tools or none).
func listHasOutputSchema(t testing.TB, c *client.Client) bool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range res.Tools {
		if tl.OutputSchema.Type != "" || tl.RawOutputSchema != nil {
			n++
		}
	}
	if n != 0 && n != len(res.Tools) {
		t.Fatalf("%d of %d tools declare an output schema", n, len(res.Tools))
	}
	return n > 0
}

// TestFlagsV1AgentLoopOverStdio: a client whose response_contract_v2 is off
// works through a whole agent loop with mcp-go's client, in the v1 shape,
// under both protocol eras; validation and error codes are the envelope's.
func TestFlagsV1AgentLoopOverStdio(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	file := writeFlagFile(t, map[string]string{"response_contract_v2": "off"})
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			c := overStdio(t, p, "--flags", file)
			if listHasOutputSchema(t, c) {
				t.Fatal("a v1 session's tools/list declares outputSchema")
			}
			d, ok := callV1(t, c, "authoring", map[string]any{"action": "spec-create", "name": "v1 loop"})
			if !ok {
				t.Fatalf("spec-create: %v", d)
			}
			specID := d["spec_id"].(string)
			d, ok = callV1(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": specID,
				"phase": map[string]any{"title": "Phase 1"},
				"tasks": []any{map[string]any{"title": "one", "task_category": "implementation"}, map[string]any{"title": "two", "task_category": "implementation"}}})
			if !ok || len(d["task_ids"].([]any)) != 2 {
				t.Fatalf("phase-add-bulk: %v", d)
			}
			if d, ok := callV1(t, c, "task", map[string]any{"action": "add", "spec_id": specID, "parent": "phase-1", "title": "three"}); !ok {
				t.Fatalf("task add: %v", d)
			}
			if d, ok := callV1(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": specID}); !ok {
				t.Fatalf("activate: %v", d)
			}
			done := 0
			for range 20 {
				d, ok := callV1(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
				if !ok {
					t.Fatalf("next: %v", d)
				}
				if d["found"] != true {
					break
				}
				id := d["task_id"].(string)
				if d["type"] == "verify" {
					if d, ok := callV1(t, c, "verification", map[string]any{"action": "add", "spec_id": specID, "verify_id": id, "result": "PASSED"}); !ok {
						t.Fatalf("verification add: %v", d)
					}
				}
				if d, ok := callV1(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": "done"}); !ok || d["status"] != "completed" {
					t.Fatalf("complete %s: %v", id, d)
				}
				done++
			}
			if done < 3 {
				t.Fatalf("completed %d tasks", done)
			}
			// paged answers carry cursor and has_more at the top level
			d, ok = callV1(t, c, "task", map[string]any{"action": "list", "spec_id": specID, "limit": 1})
			if !ok || d["has_more"] != true || d["cursor"] == nil {
				t.Fatalf("paged list: %v", d)
			}
			// the same validation and error codes, in the v1 error shape
			d, ok = callV1(t, c, "task", map[string]any{"action": "info", "spec_id": specID, "task_id": "task-9-9"})
			if ok || d["error_code"] != "TASK_NOT_FOUND" {
				t.Fatalf("unknown task: %v", d)
			}
			d, ok = callV1(t, c, "task", map[string]any{"action": "next"})
			if ok || d["error_code"] != "MISSING_REQUIRED" {
				t.Fatalf("missing spec_id: %v", d)
			}
		})
	}
}

// freePort returns a TCP port free at the time of asking.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpServer starts the built binary over streamable HTTP and returns its
// endpoint and its stderr.
// The server binds port 0 (the kernel picks a free one, so parallel tests
// cannot race for a port) and logs the address it got.
func httpServer(t testing.TB, env []string, args ...string) (string, *lockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(specdBinary(t), append([]string{"serve", "--transport", "http", "--addr", "127.0.0.1:0",
		"--db", filepath.Join(dir, ".specd", "specd.db"), "--log-level", "info"}, args...)...)
	cmd.Env = append(append(os.Environ(), "SPECD_WORKSPACE="+dir), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := regexp.MustCompile(`msg="serving MCP over streamable HTTP" addr=(127\.0\.0\.1:\d+) `)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return "http://" + m[1] + "/mcp", stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not listen: %s", stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// httpClient opens one MCP session on url.
func httpClient(t testing.TB, url, protocol, name string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(protocol))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(t, c.Start(ctx))
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestFlagsFileEditOverHTTP: one server process; an edit of the flag file
// flips new sessions' shape without a restart while a running session keeps
// its own; a broken edit keeps the last good configuration with one warning
// naming the file; under 2026-07-28 (no session) the next request follows
// the file.
func TestFlagsFileEditOverHTTP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	file := writeFlagFile(t, nil)
	url, stderr := httpServer(t, nil, "--flags", file)
	old, modern := protocols[0], protocols[1]

	a := httpClient(t, url, old, "agent")
	m := httpClient(t, url, modern, "agent")
	if !isV2(t, a) || !listHasOutputSchema(t, a) || !isV2(t, m) {
		t.Fatal("want v2 before the edit")
	}
	early := httpClient(t, url, old, "agent") // initialized before the edit, first call after it
	replaceFile(t, file, flagFile(map[string]string{"response_contract_v2": "off", "task_batch_operations": "off"}, nil))
	var b *client.Client
	waitUntil(t, "a new session to get v1", func() bool {
		b = httpClient(t, url, old, "agent")
		return !isV2(t, b)
	})
	if listHasOutputSchema(t, b) {
		t.Fatal("the v1 session's tools/list declares outputSchema")
	}
	if !isV2(t, a) || !listHasOutputSchema(t, a) {
		t.Fatal("the running session changed shape")
	}
	if !listHasOutputSchema(t, early) || !isV2(t, early) {
		t.Fatal("a session initialized before the edit did not keep the decision made at initialize")
	}
	if isV2(t, m) {
		t.Fatal("a 2026-07-28 request did not follow the edited file")
	}
	// gates change at once, for running sessions too
	if env := call(t, a, "task", map[string]any{"action": "reset-batch", "spec_id": "x"}); errorCode(env) != "FEATURE_DISABLED" {
		t.Fatalf("gate after the edit: %v", env)
	}

	for _, broken := range []string{`{"flags": {"response_contract_v2": `, flagFile(nil, map[string]string{"response_contract_v2": `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"onn"}`})} {
		before := strings.Count(stderr.String(), "edit rejected")
		replaceFile(t, file, broken)
		waitUntil(t, "the warning", func() bool { return strings.Count(stderr.String(), "edit rejected") == before+1 })
		time.Sleep(600 * time.Millisecond) // more polls: still one warning
		if n := strings.Count(stderr.String(), "edit rejected"); n != before+1 {
			t.Fatalf("%d warnings for one broken edit:\n%s", n-before, stderr)
		}
		if !strings.Contains(stderr.String(), "file=flags.json") {
			t.Fatalf("warning does not name the file:\n%s", stderr)
		}
		if c := httpClient(t, url, old, "agent"); isV2(t, c) {
			t.Fatal("a broken edit fell back to the defaults instead of the last good configuration")
		}
	}
	if strings.Contains(stderr.String(), `{"level"`) {
		t.Fatalf("the flagd provider's own log reached stderr:\n%s", stderr)
	}
	// specd flags --url prints the running server's rollout health table
	cli := exec.Command(specdBinary(t), "flags", "--url", url, "--db", filepath.Join(t.TempDir(), "cli.db"))
	cli.Env = append(os.Environ(), "SPECD_WORKSPACE="+t.TempDir())
	out, err := cli.CombinedOutput()
	if err != nil {
		t.Fatalf("specd flags --url: %v\n%s", err, out)
	}
	if !regexpLine(string(out), `(?m)^response_contract_v2\s+off\s+[1-9]\d*\s+[1-9]\d*\s`) || !regexpLine(string(out), `(?m)^response_contract_v2\s+on\s+[1-9]`) ||
		!regexpLine(string(out), `(?m)^task_batch_operations\s+off\s+1\s+1\s+feature_flag=1\s+100\.0`) {
		t.Fatalf("specd flags --url:\n%s", out)
	}
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFlagsFractionalRollout: a 50/50 fractional rule keyed by targeting key
// splits 1,000 client ids within 45–55% (evaluated through the flags package
// with the real flagd file provider: one process per id would take
// minutes), and the binary gives a handful of those clients, identified by
// SPECD_CLIENT_ID, exactly the shape the package predicts, every time.
func TestFlagsFractionalRollout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	file := filepath.Join(t.TempDir(), "flags.json")
	must(t, os.WriteFile(file, []byte(flagFile(nil, map[string]string{"response_contract_v2": `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"fractional":[["on",50],["off",50]]}}`})), 0o644))
	svc, err := flags.Open(context.Background(), flags.Options{Path: file})
	must(t, err)
	defer svc.Close()
	on := 0
	for i := range 1000 {
		// the targeting key of a client with an API key id is "key:<id>"
		d := svc.Gate(context.Background(), registry.ResponseContractV2, mcptool.FlagContext{APIKeyID: fmt.Sprintf("client-%04d", i)})
		if d.Source != flags.SourceFile {
			t.Fatalf("source %q", d.Source)
		}
		if d.On {
			on++
		}
	}
	if on < 450 || on > 550 {
		t.Fatalf("%d of 1000 clients on v2, want 45–55%%", on)
	}
	t.Logf("%d of 1000 client ids on v2", on)
	// SPECD_CLIENT_ID is the targeting key itself: predict with a service
	// set up as the binary's is.
	predict := map[string]bool{}
	for i := range 6 {
		id := fmt.Sprintf("client-%04d", i)
		s, err := flags.Open(context.Background(), flags.Options{Path: file, ClientID: id})
		must(t, err)
		predict[id] = s.Contract(context.Background(), mcptool.FlagContext{SessionID: "p", ClientName: "agent"}).On
		s.Close()
	}
	seen := map[bool]int{}
	for i := range 6 {
		id := fmt.Sprintf("client-%04d", i)
		for round := range 2 {
			c := stdioWithEnv(t, protocols[round], []string{"SPECD_CLIENT_ID=" + id}, "--flags", file)
			if got := isV2(t, c); got != predict[id] {
				t.Fatalf("%s (round %d): binary gave v2=%v, the flags package %v", id, round, got, predict[id])
			}
			_ = c.Close()
		}
		seen[predict[id]]++
	}
	t.Logf("binary sessions: %d v2, %d v1", seen[true], seen[false])
}

// stdioWithEnv is overStdio with extra environment.
func stdioWithEnv(t testing.TB, protocol string, env []string, extraArgs ...string) *client.Client {
	t.Helper()
	db := filepath.Join(t.TempDir(), ".specd", "specd.db")
	args := append([]string{"serve", "--db", db, "--log-level", "warn"}, extraArgs...)
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	tr := transport.NewStdioWithOptions(specdBinary(t), append([]string{"SPECD_WORKSPACE=" + t.TempDir()}, env...), args,
		transport.WithCommandStderrWriter(logw))
	must(t, tr.Start(context.Background()))
	c := client.NewClient(tr, client.WithProtocolVersion(protocol))
	initialize(t, c, protocol)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestFlagsGatesOverStdio: the four gates off in the flag file answer
// FEATURE_DISABLED with details.feature; server schema shows those actions
// available:false with the reason; capabilities lists every flag with its
// value and source; server flags counts the calls.
func TestFlagsGatesOverStdio(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	file := writeFlagFile(t, map[string]string{"task_batch_operations": "off", "research_digests": "off", "content_archive": "off", "verification_execute": "off",
		"autonomy_sessions": "off"})
	c := overStdio(t, protocols[0], "--flags", file, "--enable-verification-execute")
	gated := []struct {
		tool, flag string
		args       map[string]any
	}{
		{"task", "task_batch_operations", map[string]any{"action": "reset-batch", "spec_id": "s"}},
		{"task", "task_batch_operations", map[string]any{"action": "prepare-batch", "spec_id": "s"}},
		{"research", "research_digests", map[string]any{"action": "digest-list"}},
		{"research", "content_archive", map[string]any{"action": "archive-get", "hash": "sha256:" + strings.Repeat("0", 64)}},
		{"research", "content_archive", map[string]any{"action": "archive-put", "content": "x"}},
		{"verification", "verification_execute", map[string]any{"action": "execute", "spec_id": "s", "verify_id": "verify-1-1"}},
		{"task", "autonomy_sessions", map[string]any{"action": "session", "command": "start", "spec_id": "s"}},
		{"task", "autonomy_sessions", map[string]any{"action": "session-step", "command": "next", "spec_id": "s"}},
		{"review", "autonomy_sessions", map[string]any{"action": "fidelity-gate", "spec_id": "s", "session_id": "x", "phase_id": "phase-1", "step_id": "x"}},
	}
	for _, g := range gated {
		env := call(t, c, g.tool, g.args)
		d := data(env)
		det, _ := d["details"].(map[string]any)
		if errorCode(env) != "FEATURE_DISABLED" || d["error_type"] != "feature_flag" || det["feature"] != g.flag ||
			!strings.Contains(d["remediation"].(string), g.flag) || !strings.Contains(d["remediation"].(string), "flags.json") {
			t.Fatalf("%s %v: %v", g.tool, g.args["action"], env)
		}
	}
	// ungated actions still work
	if env := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "gates"}); env["success"] != true {
		t.Fatalf("ungated call: %v", env)
	}
	for _, tool := range []string{"task", "research", "verification", "review"} {
		for _, a := range data(call(t, c, "server", map[string]any{"action": "schema", "tool_name": tool}))["actions"].([]any) {
			as := a.(map[string]any)
			off := as["feature_flag"] != nil
			if as["available"] == off {
				t.Fatalf("%s %s: available=%v with flag %v", tool, as["name"], as["available"], as["feature_flag"])
			}
			if off && !strings.Contains(fmt.Sprint(as["unavailable_reason"]), as["feature_flag"].(string)) {
				t.Fatalf("%s %s: reason %v", tool, as["name"], as["unavailable_reason"])
			}
		}
	}
	caps := data(call(t, c, "server", map[string]any{"action": "capabilities"}))
	fl := caps["flags"].([]any)
	if len(fl) != len(registry.Flags) {
		t.Fatalf("capabilities lists %d flags", len(fl))
	}
	for _, f := range fl {
		f := f.(map[string]any)
		want := f["name"] == "response_contract_v2"
		if f["value"] != want || f["source"] != "file" || f["state"] == nil || f["default"] == nil || f["owner"] == nil {
			t.Fatalf("capabilities flag %v", f)
		}
	}
	h := data(call(t, c, "server", map[string]any{"action": "flags"}))
	rows := map[string]map[string]any{}
	for _, r := range h["rows"].([]any) {
		r := r.(map[string]any)
		rows[r["flag"].(string)+"/"+r["variant"].(string)] = r
	}
	tb := rows["task_batch_operations/off"]
	if tb == nil || tb["calls"] != float64(2) || tb["sessions"] != float64(1) || tb["errors"].(map[string]any)["feature_flag"] != float64(2) {
		t.Fatalf("health of task_batch_operations: %v", h)
	}
	v2 := rows["response_contract_v2/on"]
	if v2 == nil || v2["sessions"] != float64(1) || v2["calls"].(float64) < 10 || v2["p99_ms"].(float64) < v2["p50_ms"].(float64) {
		t.Fatalf("health of response_contract_v2: %v", h)
	}
}

// TestFlagsCLI: specd init writes the default flag file a server then finds
// on its own; specd flags eval shows what a client gets.
func TestFlagsCLI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	ws := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(specdBinary(t), args...)
		cmd.Env = append(os.Environ(), "SPECD_WORKSPACE="+ws)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("specd %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("init")
	b, err := os.ReadFile(filepath.Join(ws, ".specd", "flags.json"))
	must(t, err)
	if !bytes.Equal(b, flags.DefaultFile) {
		t.Fatal("init did not write the default flag file")
	}
	must(t, os.WriteFile(filepath.Join(ws, ".specd", "flags.json"),
		[]byte(flagFile(nil, map[string]string{"response_contract_v2": `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on","targeting":{"if":[{"==":[{"var":"targetingKey"},"legacy-bot"]},"off","on"]}}`})), 0o644))
	out := run("flags", "eval", "--client", "legacy-bot")
	if !regexpLine(out, `response_contract_v2\s+stable\s+on\s+off\s+off\s+file`) || !strings.Contains(out, ".specd/flags.json") {
		t.Fatalf("flags eval legacy-bot:\n%s", out)
	}
	out = run("flags", "eval", "--client", "someone-else")
	if !regexpLine(out, `response_contract_v2\s+stable\s+on\s+on\s+on\s+file`) {
		t.Fatalf("flags eval someone-else:\n%s", out)
	}
	if strings.Contains(out, ws) {
		t.Fatalf("output shows the absolute path:\n%s", out)
	}
}

func regexpLine(out, pattern string) bool { return regexp.MustCompile(pattern).MatchString(out) }
