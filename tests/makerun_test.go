package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMakeRunStdoutIsJSONRPC: `make run`, the README's command that runs
// the server, builds it and serves MCP on stdio; what it writes to stdout
// is the server's JSON-RPC alone (make echoed its command lines there
// before, which a client that starts `make run` reads as a broken
// message). The binary goes to a temp dir (BIN), not the repository's
// bin/specd that other tests run.
func TestMakeRunStdoutIsJSONRPC(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the server with make")
	}
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, makeBin, "run", "BIN="+filepath.Join(dir, "specd"))
	cmd.Dir = ".."
	// As from a shell: under `make test` the environment says this make
	// is a sub-make, which prints "Entering directory" on stdout first.
	cmd.Env = []string{"SPECD_WORKSPACE=" + dir}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKELEVEL" && k != "MAKEFLAGS" && k != "MFLAGS" && k != "SPECD_WORKSPACE" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make run: %v\nstderr:\n%s", err, stderr.Bytes())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	lines := 0
	for sc.Scan() {
		lines++
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      int             `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("stdout line %d is not JSON-RPC: %q (%v)", lines, sc.Bytes(), err)
		}
		if msg.ID != 1 || len(msg.Result) == 0 {
			t.Fatalf("stdout line %d is not the initialize answer: %s", lines, sc.Bytes())
		}
	}
	if lines != 1 {
		t.Fatalf("stdout holds %d lines, want the initialize answer alone:\n%s", lines, out)
	}
}
