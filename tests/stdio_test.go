package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStdoutCarriesOnlyJSONRPC speaks raw JSON-RPC to the built binary with
// debug logging on and checks that every byte on stdout is a JSON-RPC
// message, while the logs arrive on stderr.
func TestStdoutCarriesOnlyJSONRPC(t *testing.T) {
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
