package tests

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/tools"
)

// TestSubscriptionAcrossServers: a client subscribed to a spec on server B
// is notified when the spec changes through server A (two specd servers on
// one etcd prefix): B's watch moves its change stamp, its subscription
// watcher reads the versions and sends notifications/resources/updated.
// A change to another spec notifies nothing.
func TestSubscriptionAcrossServers(t *testing.T) {
	ep := etcdtest.Start(t, 4096)
	a, b := openEtcd(t, ep, "/subscribe"), openEtcd(t, ep, "/subscribe")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ca, cb := etcdClient(t, ctx, a), etcdClient(t, ctx, b)
	watched, other := etcdSpecCreate(t, ctx, ca, "watched"), etcdSpecCreate(t, ctx, ca, "other")
	updates := make(chan string, 16)
	cb.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			updates <- uri
		}
	})
	req := mcp.SubscribeRequest{}
	req.Params.URI = "specd://specs/" + watched
	//lint:ignore SA1019 resources/subscribe is the 2025-11-25 protocol's subscription, the one under test
	if err := cb.Subscribe(ctx, req); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * tools.SubscriptionPollInterval) // the watcher has read the versions once
	etcdToolCall(t, ctx, ca, "authoring", map[string]any{"action": "phase-add", "spec_id": other, "title": "elsewhere"})
	etcdToolCall(t, ctx, ca, "authoring", map[string]any{"action": "phase-add", "spec_id": watched, "title": "through A"})
	select {
	case uri := <-updates:
		if uri != req.Params.URI {
			t.Fatalf("notified for %s, want %s", uri, req.Params.URI)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change through server A never reached the subscriber on server B")
	}
	select {
	case uri := <-updates:
		t.Fatalf("unexpected second notification %s", uri)
	case <-time.After(3 * tools.SubscriptionPollInterval):
	}
}

// openEtcd opens a store on the member at ep under prefix, closed when t
// ends.
func openEtcd(t testing.TB, ep, prefix string) *etcdstore.Store {
	t.Helper()
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, Prefix: prefix, MaxTxnOps: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// etcdClient is an in-process client of a server over st.
func etcdClient(t testing.TB, ctx context.Context, st *etcdstore.Store) *client.Client {
	t.Helper()
	deps := &tools.Deps{Version: "test", Workspace: t.TempDir(),
		ConfigSource: "test", Transports: []string{"stdio"}, Started: time.Now(), TokenBudget: core.DefaultTokenBudget,
		Runtime: mcptool.Runtime{Deadline: 10 * time.Second}}
	deps.OverStore(st)
	srv, _ := tools.NewMCPServer(deps)
	c, err := client.NewInProcessClientWithOptions(srv, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "subscriber", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func etcdToolCall(t *testing.T, ctx context.Context, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := res.StructuredContent.(map[string]any)
	if env == nil || env["success"] != true {
		t.Fatalf("%s %v: %+v", tool, args, res)
	}
	return env["data"].(map[string]any)
}

func etcdSpecCreate(t *testing.T, ctx context.Context, c *client.Client, name string) string {
	t.Helper()
	return etcdToolCall(t, ctx, c, "authoring", map[string]any{"action": "spec-create", "name": name})["spec_id"].(string)
}
