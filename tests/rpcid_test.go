package tests

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/specd/specd/core"
)

// rpcIDs are request ids whose answers must carry them byte for byte: ones
// a float64 cannot hold or that Go would print otherwise (1e309,
// 100000000000000000000000, 9007199254740993, 1.0, -0, 1E2), and ordinary
// ones.
var rpcIDs = []string{"1e309", "100000000000000000000000", "9007199254740993", "1.0", "-0", "1E2", "1.5", "7", "-12", `"s-1"`}

// rpcIDRequests are the requests sent with each id: a success, a JSON-RPC
// error and a tool call.
var rpcIDRequests = []string{
	`{"jsonrpc":"2.0","id":%s,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":%s,"method":"no/such-method"}`,
	`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"health","arguments":{"action":"liveness"}}}`,
}

// checkEchoedID fails unless answer (one JSON-RPC message) carries id as
// its id, byte for byte.
func checkEchoedID(t *testing.T, request, id string, answer []byte) {
	t.Helper()
	start, end, ok := core.TopLevelMember(answer, "id")
	if !ok || string(answer[start:end]) != id {
		got := "(none)"
		if ok {
			got = string(answer[start:end])
		}
		t.Errorf("%s: answered with id %s, want %s: %.200s", request, got, id, answer)
	}
}

// TestRequestIDsEchoedExactly: every answer carries the request's id
// exactly as sent, over stdio (the built binary) and over streamable HTTP
// (the built binary's shared server).
func TestRequestIDsEchoedExactly(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		s := startRawStdio(t)
		for _, id := range rpcIDs {
			for _, r := range rpcIDRequests {
				req := fmt.Sprintf(r, id)
				s.send(t, req)
				checkEchoedID(t, req, id, s.nextRaw(t))
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		s := startShared(t, nil)
		resp, _ := s.post(t, "", "", initBody)
		sid := resp.Header.Get("Mcp-Session-Id")
		for _, id := range rpcIDs {
			for _, r := range rpcIDRequests {
				req := fmt.Sprintf(r, id)
				resp, body := s.post(t, "", sid, req)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d %s", req, resp.StatusCode, body)
				}
				if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					_, body, _ = strings.Cut(body, "data: ")
				}
				checkEchoedID(t, req, id, []byte(strings.TrimSpace(body)))
			}
		}
	})
}
