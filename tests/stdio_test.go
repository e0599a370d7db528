package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/tools"
)

// TestStdoutCarriesOnlyJSONRPC speaks raw JSON-RPC to the built binary with
// debug logging on and checks that every byte on stdout is a JSON-RPC
// message, while the logs arrive on stderr.
func TestStdoutCarriesOnlyJSONRPC(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	db := filepath.Join(t.TempDir(), "specd.db")
	cmd := exec.Command(specdBinary(t), "serve", "--db", db, "--log-level", "debug")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	msgs := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{"action":"check"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"health","arguments":{"action":"nope"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nosuchtool","arguments":{}}}`,
	}
	go func() {
		for _, m := range msgs {
			_, _ = io.WriteString(stdin, m+"\n")
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	got := map[float64]map[string]any{}
	deadline := time.After(15 * time.Second)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for len(got) < 5 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stdout closed early; stderr:\n%s", stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("non-JSON-RPC line on stdout: %q", line)
			}
			if id, ok := m["id"].(float64); ok {
				got[id] = m
			}
		case <-deadline:
			t.Fatalf("timed out; got %d answers; stderr:\n%s", len(got), stderr.String())
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	res := got[4]["result"].(map[string]any)
	if res["isError"] != true || res["structuredContent"].(map[string]any)["success"] != false {
		t.Fatalf("unknown action should be an envelope error: %v", res)
	}
	if !strings.Contains(stderr.String(), "request_id=health_") {
		t.Fatalf("the call's log line (with its request_id) should be on stderr; got:\n%s", stderr.String())
	}
}

// rawStdio is the built binary on stdio spoken to in raw JSON-RPC lines.
type rawStdio struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // each stdout line that is JSON, as written
	stderr *bytes.Buffer
}

func startRawStdio(t *testing.T) *rawStdio {
	t.Helper()
	return startRawStdioIn(t, "")
}

// startRawStdioIn starts the built binary on stdio with extra serve args;
// with a workspace ws its store is ws/.specd/specd.db and SPECD_WORKSPACE
// names ws, else the store is in a temporary folder.
func startRawStdioIn(t *testing.T, ws string, args ...string) *rawStdio {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	db := filepath.Join(t.TempDir(), "specd.db")
	if ws != "" {
		db = filepath.Join(ws, ".specd", "specd.db")
	}
	cmd := exec.Command(specdBinary(t), append([]string{"serve", "--db", db}, args...)...)
	if ws != "" {
		cmd.Env = append(os.Environ(), "SPECD_WORKSPACE="+ws)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	s := &rawStdio{cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if json.Valid(sc.Bytes()) {
				s.lines <- bytes.Clone(sc.Bytes())
			}
		}
		close(s.lines)
	}()
	s.send(t, `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	s.next(t)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (s *rawStdio) next(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal(s.nextRaw(t), &m))
	return m
}

// nextRaw is the next JSON line of stdout, byte for byte.
func (s *rawStdio) nextRaw(t *testing.T) []byte {
	t.Helper()
	select {
	case b, ok := <-s.lines:
		if !ok {
			t.Fatalf("stdout closed; stderr:\n%s", s.stderr.String())
		}
		return b
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer; stderr:\n%s", s.stderr.String())
	}
	return nil
}

// vmHWM returns the peak resident set of pid in KiB (Linux), or 0.
func vmHWM(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// TestStdioOversizeMessageIsRefusedInBoundedMemory sends one 40 MB line (over
// the 8 MB cap) and checks that it is answered with a JSON-RPC parse error,
// that the next call is served, and that the process never held the line
// (peak RSS well under the line's size; it was several times it before).
func TestStdioOversizeMessageIsRefusedInBoundedMemory(t *testing.T) {
	t.Parallel()
	s := startRawStdio(t)
	const size = 40 << 20
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"health","arguments":{"action":"liveness","x":"` +
		strings.Repeat("a", size) + `"}}}`
	go func() { _, _ = io.WriteString(s.stdin, big+"\n") }()
	m := s.next(t)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32700.0 || m["id"] != nil {
		t.Fatalf("oversize line: want a parse error with id null, got %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"health","arguments":{"action":"liveness"}}}`)
	m = s.next(t)
	if m["id"] != 3.0 || m["result"].(map[string]any)["structuredContent"].(map[string]any)["success"] != true {
		t.Fatalf("the call after the oversize line: %v", m)
	}
	hwm := vmHWM(s.cmd.Process.Pid)
	t.Logf("peak RSS after a %d MB line: %d KiB", size>>20, hwm)
	if hwm > 150<<10 {
		t.Fatalf("peak RSS %d KiB: the oversize line was buffered", hwm)
	}
}

// TestOutOfRangeNumberIsAnEnvelope: 1e309 cannot be decoded into a float64;
// it must reach the validator and come back as INVALID_FORMAT naming the
// field and the literal, over stdio and over streamable HTTP.
func TestOutOfRangeNumberIsAnEnvelope(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, env map[string]any) {
		t.Helper()
		d, _ := env["data"].(map[string]any)
		det, _ := d["details"].(map[string]any)
		if env["success"] != false || d["error_code"] != "INVALID_FORMAT" || det["field"] != "limit" || det["received"] != "1e309" {
			t.Fatalf("want INVALID_FORMAT for limit with received 1e309, got %v", env)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		s := startRawStdio(t)
		s.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"server","arguments":{"action":"tools","limit":1e309}}}`)
		m := s.next(t)
		res, _ := m["result"].(map[string]any)
		if res == nil {
			t.Fatalf("want a tool result, got %v", m)
		}
		check(t, res["structuredContent"].(map[string]any))
	})
	t.Run("http", func(t *testing.T) {
		srv, reg := tools.NewMCPServer(newDeps(t, false))
		t.Cleanup(func() { reg.FlushErrors(context.Background()) })
		ts := httptest.NewServer(mcptool.HTTPInput(server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp")), core.MaxMessageBytes))
		defer ts.Close()
		tr, err := transport.NewStreamableHTTP(ts.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		initialize(t, c, mcp.ProtocolVersion20251125)
		defer c.Close()
		check(t, call(t, c, "server", map[string]any{"action": "tools", "limit": json.RawMessage("1e309")}))

		resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"x":"`+strings.Repeat("a", core.MaxMessageBytes)+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "-32700") {
			t.Fatalf("oversize POST: %d %s", resp.StatusCode, body)
		}
	})
}
