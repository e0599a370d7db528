package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/flags"
	"github.com/specd/specd/flags/registry"
	"github.com/specd/specd/tools"
)

// BenchmarkHTTPCall is the server's side of one tool call over streamable
// HTTP (protocol 2025-11-25, in a session, as `make load`'s clients send
// it): the raw JSON-RPC request through the shared server's handler chain
// (front door, id and number guard, mcp-go's streamable HTTP server, the
// dispatcher, the store) into a recorder, without a network or a client;
// flags on, as a server reads its flag file. task-add is the write of `make
// load`; task-progress a read of a small spec of its own, whose cost is
// mostly that transport and envelope path. allocs/op and B/op are stable;
// cpu-ns/op is the process's CPU time (user + system, GC included) per
// call, which ns/op is not (a write mostly waits for its fsync).
func BenchmarkHTTPCall(b *testing.B) {
	st := storetest.Open(b, func(o *store.Options) { o.MaxHold = time.Hour })
	deps := depsOn(st, nil)
	// the server's call log (--log-format json, info), written nowhere
	deps.Runtime.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	deps.Runtime.Flags = httpBenchFlags(b)
	metrics := httpguard.NewMetrics()
	deps.Runtime.Access = &httpguard.Access{Rate: httpguard.NewRateLimiter(100_000, 1_000_000, nil), Metrics: metrics}
	srv, reg := tools.NewMCPServer(deps)
	b.Cleanup(func() { reg.FlushErrors(context.Background()) })
	sessions := httpguard.NewSessions(metrics.Sessions)
	h := httpguard.Handler(httpguard.Config{MaxBodyBytes: core.MaxMessageBytes, MaxSessionsPerKey: 1000, Endpoint: "/mcp", Sessions: sessions, Metrics: metrics},
		mcptool.HTTPInput(server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp"), server.WithSessionIdManagerResolver(sessions)), core.MaxMessageBytes))

	post := func(session, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewBufferString(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
			r.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusAccepted {
			b.Fatalf("%s: %d %s", body, w.Code, w.Body)
		}
		return w
	}
	init := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+mcp.ProtocolVersion20251125+`","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	sid := init.Header().Get("Mcp-Session-Id")
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	callTool := func(id int, args string) map[string]any {
		w := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}`, id, "authoring", args))
		return httpEnvelope(b, w.Body.Bytes())
	}
	spec := data(callTool(1, `{"action":"spec-create","name":"http bench"}`))
	phase := data(callTool(2, fmt.Sprintf(`{"action":"phase-add","spec_id":%q,"title":"load","link_previous":false}`, spec["spec_id"])))
	add := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task","arguments":{"action":"add","spec_id":%q,"parent":%q,"title":"load task"}}}`,
		spec["spec_id"], phase["phase_id"])
	if env := httpEnvelope(b, post(sid, add).Body.Bytes()); env["success"] != true {
		b.Fatalf("task add: %v", env)
	}
	read := data(callTool(4, `{"action":"spec-create","name":"http bench read"}`)) // adds do not grow it
	progress := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"task","arguments":{"action":"progress","spec_id":%q}}}`, read["spec_id"])
	if env := httpEnvelope(b, post(sid, progress).Body.Bytes()); env["success"] != true {
		b.Fatalf("task progress: %v", env)
	}
	for _, bc := range []struct{ name, body string }{{"task-add", add}, {"task-progress", progress}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				post(sid, bc.body)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// httpBenchFlags is a flag service with every flag on for everyone (a
// static variant), as a server reads its flag file.
func httpBenchFlags(b *testing.B) *flags.Service {
	file := filepath.Join(b.TempDir(), "flags.json")
	raw := map[string]string{}
	for _, f := range registry.Flags {
		raw[f.Name] = `{"state":"ENABLED","variants":{"on":true,"off":false},"defaultVariant":"on"}`
	}
	must(b, os.WriteFile(file, []byte(flagFile(nil, raw)), 0o644))
	svc, err := flags.Open(context.Background(), flags.Options{Path: file, InstallID: "bench", Transport: "http"})
	must(b, err)
	b.Cleanup(func() { svc.Close() })
	return svc
}

// httpEnvelope is the envelope (structuredContent) of the JSON-RPC answer
// body.
func httpEnvelope(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var msg struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Result.StructuredContent == nil {
		t.Fatalf("not a tool answer (%v): %s", err, body)
	}
	return msg.Result.StructuredContent
}
