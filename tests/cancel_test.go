package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// cancelIDs are request ids a client may cancel: ones specd carries through
// mcp-go as surrogates (1e309, 100000000000000000000000, 9007199254740993,
// 1.0) and ordinary ones.
var cancelIDs = []string{"1e309", "100000000000000000000000", "9007199254740993", "1.0", "7", `"c-1"`}

// slowRuns numbers the slow runs of this test process, so no two (the
// stdio and HTTP subtests run in parallel) share a marker.
var slowRuns atomic.Int64

// slowTestRun writes ws/Makefile so that the next test run touches
// ws/started-n and then sleeps with a marker argument no other process
// has, which it returns.
func slowTestRun(t *testing.T, ws string, n int) (started, marker string) {
	t.Helper()
	started = filepath.Join(ws, fmt.Sprintf("started-%d", n))
	marker = fmt.Sprintf("300.%d%d", os.Getpid(), 1000+slowRuns.Add(1))
	must(t, os.WriteFile(filepath.Join(ws, "Makefile"), []byte("test:\n\t@touch "+started+"; sleep "+marker+"\n"), 0o644))
	return started, marker
}

// waitFor waits until the file path exists (a hang guard, not a timing
// assertion: the command touches it at once).
func waitFor(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared: the call did not start its command", path)
}

// checkCancelled fails unless the sleep with marker is gone once the
// cancelled call has answered.
func checkCancelled(t *testing.T, id, marker string) {
	t.Helper()
	if left := processesWith("sleep\x00" + marker); len(left) > 0 {
		t.Errorf("id %s: the cancelled call's command still runs: %v", id, left)
	}
}

// TestCancelNamesTheIDAsSent: a notifications/cancelled whose requestId is
// an in-flight call's id as the client sent it (1e309,
// 100000000000000000000000, 1.0, which specd carries through mcp-go as
// surrogates, and ordinary ids) ends that call: its command is killed and
// the call answers, with the id as sent, long before the command's sleep
// would end. On stdio (the built binary, raw JSON-RPC lines) and over
// streamable HTTP.
func TestCancelNamesTheIDAsSent(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to look for the command")
	}
	if _, err := os.Stat("/usr/bin/make"); err != nil {
		t.Skip("needs make")
	}
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"enough"}}`
	call := `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"test","arguments":{"action":"run"}}}`
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		ws := t.TempDir()
		s := startRawStdioIn(t, ws, "--enable-verification-execute", "--flags", writeFlagFile(t, map[string]string{"verification_execute": "on"}))
		for n, id := range cancelIDs {
			started, marker := slowTestRun(t, ws, n)
			s.send(t, fmt.Sprintf(call, id))
			waitFor(t, started)
			s.send(t, fmt.Sprintf(cancel, id))
			checkEchoedID(t, "cancelled call", id, s.nextRaw(t))
			checkCancelled(t, id, marker)
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		s := startShared(t, nil, "--enable-verification-execute", "--flags", writeFlagFile(t, map[string]string{"verification_execute": "on"}))
		ws := s.Dir
		resp, _ := s.post(t, "", "", initBody)
		sid := resp.Header.Get("Mcp-Session-Id")
		for n, id := range cancelIDs {
			started, marker := slowTestRun(t, ws, n)
			answer := make(chan string, 1)
			go func() {
				resp, body := s.post(t, "", sid, fmt.Sprintf(call, id))
				if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					_, body, _ = strings.Cut(body, "data: ")
				}
				answer <- strings.TrimSpace(body)
			}()
			waitFor(t, started)
			if resp, body := s.post(t, "", sid, fmt.Sprintf(cancel, id)); resp.StatusCode != http.StatusAccepted {
				t.Fatalf("cancel: %d %s", resp.StatusCode, body)
			}
			select {
			case body := <-answer:
				checkEchoedID(t, "cancelled call", id, []byte(body))
			case <-time.After(60 * time.Second):
				t.Fatalf("id %s: the cancelled call did not answer", id)
			}
			checkCancelled(t, id, marker)
		}
	})
}
