package tests

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/tools"
)

// TestStreamableHTTP drives the same tools over streamable HTTP (the shared
// server set-up) with both protocol versions.
func TestStreamableHTTP(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			srv, reg := tools.NewMCPServer(newDeps(t, false))
			t.Cleanup(func() { reg.FlushErrors(context.Background()) })
			ts := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp")))
			defer ts.Close()
			tr, err := transport.NewStreamableHTTP(ts.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr, client.WithProtocolVersion(p))
			initialize(t, c, p)
			defer c.Close()
			if env := call(t, c, "health", map[string]any{"action": "readiness"}); data(env)["ready"] != true {
				t.Fatalf("readiness over HTTP: %v", env)
			}
			created := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "over http"})
			if created["success"] != true {
				t.Fatalf("spec-create over HTTP: %v", created)
			}
			if env := call(t, c, "health", map[string]any{"action": "nope"}); errorCode(env) != "UNKNOWN_ACTION" {
				t.Fatalf("error envelope over HTTP: %v", env)
			}
		})
	}
}
