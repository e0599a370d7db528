package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// connections runs fn against the in-process server and the built binary
// over stdio, under both protocol versions.
func connections(t *testing.T, fn func(t *testing.T, c *client.Client)) {
	for _, p := range protocols {
		t.Run("inprocess/"+p, func(t *testing.T) {
			c, _ := inProcess(t, newDeps(t, false), p)
			fn(t, c)
		})
		t.Run("stdio/"+p, func(t *testing.T) {
			if testing.Short() {
				t.Skip("stdio runs the built binary")
			}
			fn(t, overStdio(t, p))
		})
	}
}

func TestListToolsCarriesEnvelopeSchemaAndHonestAnnotations(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]mcp.Tool{}
		for _, tool := range res.Tools {
			names[tool.Name] = tool
		}
		for _, want := range []string{"health", "server"} {
			tool, ok := names[want]
			if !ok {
				t.Fatalf("tools/list lacks %q", want)
			}
			a := tool.Annotations
			if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("%s: all four annotations must be set explicitly: %+v", want, a)
			}
			if !*a.ReadOnlyHint || *a.DestructiveHint || *a.OpenWorldHint {
				t.Fatalf("%s is read-only and closed-world, annotations say %+v", want, a)
			}
		}
	})
}

func TestHealthAndServerEndToEnd(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		live := call(t, c, "health", map[string]any{"action": "liveness"})
		if live["success"] != true || data(live)["status"] != "alive" {
			t.Fatalf("liveness: %v", live)
		}
		ready := call(t, c, "health", map[string]any{"action": "readiness"})
		if data(ready)["ready"] != true {
			t.Fatalf("readiness: %v", ready)
		}
		check := call(t, c, "health", map[string]any{"action": "check"})
		st := data(check)["store"].(map[string]any)
		if st["schema_version"].(float64) != 3 || st["install_id"] == "" {
			t.Fatalf("check: %v", check)
		}
		sch := call(t, c, "server", map[string]any{"action": "schema", "tool_name": "health"})
		if len(data(sch)["actions"].([]any)) != 3 {
			t.Fatalf("schema: %v", sch)
		}
		ctxEnv := call(t, c, "server", map[string]any{"action": "context"})
		sess := data(ctxEnv)["session"].(map[string]any)
		if sess["client_name"] != "specd-tests" {
			t.Fatalf("client identity not seen by the server: %v", sess)
		}

		bad := call(t, c, "health", map[string]any{"action": "livenes"})
		if bad["success"] != false || errorCode(bad) != "UNKNOWN_ACTION" {
			t.Fatalf("unknown action: %v", bad)
		}
		rec := data(bad)["recovery"].(map[string]any)
		if m := rec["fuzzy_matches"].([]any); len(m) == 0 || m[0] != "liveness" {
			t.Fatalf("fuzzy matches: %v", rec)
		}
		missing := call(t, c, "server", map[string]any{"action": "schema"})
		if errorCode(missing) != "MISSING_REQUIRED" || data(missing)["details"].(map[string]any)["field"] != "tool_name" {
			t.Fatalf("missing tool_name: %v", missing)
		}
		nosuch := call(t, c, "server", map[string]any{"action": "schema", "tool_name": "helth"})
		if errorCode(nosuch) != "NOT_FOUND" {
			t.Fatalf("unknown tool: %v", nosuch)
		}
	})
}

func TestServerToolsPagesWithCursor(t *testing.T) {
	t.Parallel()
	c, reg := inProcess(t, newDeps(t, false), protocols[0])
	var seen []string
	args := map[string]any{"action": "tools", "limit": 1}
	for i := 0; i < 2*len(reg.Names()); i++ {
		env := call(t, c, "server", args)
		for _, it := range data(env)["tools"].([]any) {
			seen = append(seen, it.(map[string]any)["name"].(string))
		}
		pg := env["meta"].(map[string]any)["pagination"].(map[string]any)
		if pg["has_more"] != true {
			if pg["cursor"] != nil {
				t.Fatalf("last page has a cursor: %v", pg)
			}
			break
		}
		args = map[string]any{"action": "tools", "limit": 1, "cursor": pg["cursor"]}
	}
	if len(seen) != len(reg.Names()) {
		t.Fatalf("paged %v, want %v", seen, reg.Names())
	}
	bad := call(t, c, "server", map[string]any{"action": "tools", "cursor": "garbage!"})
	if errorCode(bad) != "INVALID_CURSOR" {
		t.Fatalf("corrupt cursor: %v", bad)
	}
	// Over the maximum is clamped with a warning (as foundry does), not refused.
	over := call(t, c, "server", map[string]any{"action": "tools", "limit": 5000})
	if over["success"] != true || !strings.Contains(fmt.Sprint(over["meta"].(map[string]any)["warnings"]), "limit 5000 is over the maximum") {
		t.Fatalf("limit over max: %v", over["meta"])
	}
	if errorCode(call(t, c, "server", map[string]any{"action": "tools", "limit": 0})) != "INVALID_FORMAT" {
		t.Fatal("limit 0 must still be refused")
	}
}
