package tests

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestResourceSubscriptions subscribes to two specs through the built
// binary, over stdio and over streamable HTTP, and changes them from a
// second process (specd call on the same store file) and through the
// server itself: each change of a subscribed spec arrives as
// notifications/resources/updated for the subscribed URI; after
// unsubscribe, a change notifies nothing. Protocol 2025-11-25 subscribes
// with resources/subscribe; 2026-07-28 with the resourceSubscriptions of a
// subscriptions/listen stream (unsubscribing = listening again without).
func TestResourceSubscriptions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	t.Parallel()
	for _, tr := range []string{"stdio", "http"} {
		for _, protocol := range protocols {
			t.Run(tr+"/"+protocol, func(t *testing.T) {
				t.Parallel()
				subscriptionsOver(t, tr, protocol)
			})
		}
	}
}

func subscriptionsOver(t *testing.T, tr, protocol string) {
	{
		{
			db := filepath.Join(t.TempDir(), ".specd", "specd.db")
			ws := t.TempDir()
			other := func(tool, args string) {
				t.Helper()
				cmd := exec.Command(specdBinary(t), "call", tool, args, "--db", db)
				cmd.Env = append(cmd.Environ(), "SPECD_WORKSPACE="+ws)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("second process: specd call %s %s: %v\n%s", tool, args, err, out)
				}
			}
			// Specs created by another process before the server starts.
			other("authoring", `{"action":"spec-create","name":"alpha"}`)
			other("authoring", `{"action":"spec-create","name":"beta"}`)
			c := startServer(t, tr, protocol, db, ws)
			updates, acks := make(chan string, 64), make(chan struct{}, 8)
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				switch n.Method {
				case mcp.MethodNotificationResourceUpdated:
					uri, _ := n.Params.AdditionalFields["uri"].(string)
					updates <- uri
				case mcp.MethodNotificationSubscriptionsAcknowledged:
					acks <- struct{}{}
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			ids := map[string]string{}
			for _, row := range data(call(t, c, "spec", map[string]any{"action": "list"}))["specs"].([]any) {
				r := row.(map[string]any)
				ids[r["title"].(string)] = r["spec_id"].(string)
			}
			alpha, beta := "specd://specs/"+ids["alpha"], "specd://specs/"+ids["beta"]+"/journal"
			modern := protocol != mcp.ProtocolVersion20251125
			stop := func() {}
			listen := func(uris ...string) {
				t.Helper()
				stop()
				var err error
				stop, err = c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: uris}, func(err error) { t.Errorf("listen: %v", err) })
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-acks:
				case <-ctx.Done():
					t.Fatal("subscriptions/listen was not acknowledged")
				}
			}
			defer func() { stop() }()
			if modern {
				listen(alpha, beta, "test://not-a-spec")
			}
			for _, uri := range []string{alpha, beta, "test://not-a-spec"} {
				if modern {
					break
				}
				req := mcp.SubscribeRequest{}
				req.Params.URI = uri
				//lint:ignore SA1019 resources/subscribe is the 2025-11-25 protocol's subscription, the one under test
				if err := c.Subscribe(ctx, req); err != nil {
					t.Fatalf("subscribe %s: %v", uri, err)
				}
			}
			expect := func(want string) {
				t.Helper()
				select {
				case got := <-updates:
					if got != want {
						t.Fatalf("notification for %s, want %s", got, want)
					}
				case <-ctx.Done():
					t.Fatalf("no notification for %s", want)
				}
			}

			// A change by a second process.
			other("authoring", `{"action":"phase-add","spec_id":"`+ids["alpha"]+`","title":"from another process"}`)
			expect(alpha)
			// A change through this server.
			call(t, c, "journal", map[string]any{"action": "add", "spec_id": ids["beta"], "title": "from this server"})
			expect(beta)

			// Unsubscribed from alpha: its change notifies nothing, so the
			// next notification is beta's (a change made after alpha's: the
			// watcher sends alpha's first if it sends one at all).
			if modern {
				listen(beta)
			} else {
				req := mcp.UnsubscribeRequest{}
				req.Params.URI = alpha
				//lint:ignore SA1019 resources/unsubscribe is the 2025-11-25 protocol's, the one under test
				if err := c.Unsubscribe(ctx, req); err != nil {
					t.Fatal(err)
				}
			}
			other("authoring", `{"action":"phase-add","spec_id":"`+ids["alpha"]+`","title":"unwatched"}`)
			other("journal", `{"action":"add","spec_id":"`+ids["beta"]+`","title":"watched"}`)
			expect(beta)
		}
	}
}

// startServer starts the built binary on db (serve over stdio, or over
// streamable HTTP on a free loopback port) and connects a client speaking
// protocol (with 2025-11-25 over HTTP, listening on the GET stream).
func startServer(t *testing.T, tr, protocol, db, ws string) *client.Client {
	t.Helper()
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	if tr == "stdio" {
		st := transport.NewStdioWithOptions(specdBinary(t), []string{"SPECD_WORKSPACE=" + ws}, []string{"serve", "--db", db, "--log-level", "debug"},
			transport.WithCommandStderrWriter(logw))
		if err := st.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(st, client.WithProtocolVersion(protocol))
		initialize(t, c, protocol)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(specdBinary(t), "serve", "--transport", "http", "--addr", addr, "--db", db, "--log-level", "debug")
	cmd.Env = append(cmd.Environ(), "SPECD_WORKSPACE="+ws)
	cmd.Stderr = logw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
			break
		}
		if i == 200 || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("the HTTP server did not listen on %s: %v", addr, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	var opts []transport.StreamableHTTPCOption
	if protocol == mcp.ProtocolVersion20251125 {
		//lint:ignore SA1019 the 2025-11-25 protocol delivers notifications on the listening GET stream
		opts = append(opts, transport.WithContinuousListening())
	}
	ht, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(ht, client.WithProtocolVersion(protocol))
	// The listening GET stream lives as long as the context given to Start
	// (initialize's is cancelled when it returns).
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	initialize(t, c, protocol)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
