package mcptool_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core/mcptool"
)

// testSession is a client session whose notifications the test reads.
type testSession struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func (s *testSession) Initialize()                                         {}
func (s *testSession) Initialized() bool                                   { return true }
func (s *testSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }
func (s *testSession) SessionID() string                                   { return s.id }

// versionSource is a Watch's source: versions and a stamp the test moves,
// and how often Versions was read.
type versionSource struct {
	mu       sync.Mutex
	versions map[string]int64
	token    string
	reads    atomic.Int32
}

func (v *versionSource) set(key string, version int64, token string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.versions[key], v.token = version, token
}

func (v *versionSource) watch() mcptool.Watch {
	return mcptool.Watch{
		Key: func(uri string) string {
			if uri == "test://a" || uri == "test://b" {
				return uri[len("test://"):]
			}
			return ""
		},
		Versions: func(_ context.Context, keys []string) (map[string]int64, error) {
			v.reads.Add(1)
			v.mu.Lock()
			defer v.mu.Unlock()
			out := map[string]int64{}
			for _, k := range keys {
				if n, ok := v.versions[k]; ok {
					out[k] = n
				}
			}
			return out, nil
		},
		Stamp: func() (string, bool) {
			v.mu.Lock()
			defer v.mu.Unlock()
			return v.token, false
		},
		Interval: 5 * time.Millisecond,
	}
}

// TestSubscriptionsNotifyOnVersionMoves subscribes a real server session
// (resources/subscribe through the server's hooks) to a watched URI and an
// unwatched one: nothing is read while the stamp stands still, a version
// that moves with the stamp notifies the watched URI only, and after
// unsubscribe a move notifies nothing.
func TestSubscriptionsNotifyOnVersionMoves(t *testing.T) {
	src := &versionSource{versions: map[string]int64{"a": 1, "b": 1}, token: "t1"}
	srv := server.NewMCPServer("test", "0", server.WithResourceCapabilities(true, false))
	mcptool.InstallSubscriptions(srv, src.watch())
	sess := &testSession{id: "s1", ch: make(chan mcp.JSONRPCNotification, 16)}
	ctx := context.Background()
	if err := srv.RegisterSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	sctx := srv.WithContext(ctx, sess)
	send := func(method, uri string) {
		t.Helper()
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": map[string]any{"uri": uri}})
		if resp := srv.HandleMessage(sctx, msg); resp == nil {
			t.Fatalf("%s: no response", method)
		} else if e, ok := resp.(mcp.JSONRPCError); ok {
			t.Fatalf("%s: %+v", method, e.Error)
		}
	}
	next := func(wait time.Duration) string {
		select {
		case n := <-sess.ch:
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			return uri
		case <-time.After(wait):
			return ""
		}
	}
	send("resources/subscribe", "test://a")
	send("resources/subscribe", "test://elsewhere")
	if uri := next(100 * time.Millisecond); uri != "" {
		t.Fatalf("notified %s before any change", uri)
	}
	if n := src.reads.Load(); n > 2 { // the baseline and the first poll
		t.Fatalf("Versions read %d times while the stamp stood still", n)
	}
	src.set("b", 2, "t2") // a key nobody subscribes to
	if uri := next(100 * time.Millisecond); uri != "" {
		t.Fatalf("notified %s for an unsubscribed key", uri)
	}
	src.set("a", 2, "t3")
	if uri := next(5 * time.Second); uri != "test://a" {
		t.Fatalf("notified %q, want test://a", uri)
	}
	send("resources/unsubscribe", "test://a")
	src.set("a", 3, "t4")
	if uri := next(100 * time.Millisecond); uri != "" {
		t.Fatalf("notified %s after unsubscribe", uri)
	}
}

// TestSubscriptionsLookOnWake: with a live change feed the watcher looks
// when the feed says so, not on the poll interval (an hour here, so only the
// feed can deliver the notification); when Wake fails, or its channel
// closes, it polls every Interval again.
func TestSubscriptionsLookOnWake(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		wake     func(feed chan struct{}) func(context.Context) (<-chan struct{}, error)
		move     func(src *versionSource, feed chan struct{})
	}{
		{"feed wakes the watcher", time.Hour,
			func(feed chan struct{}) func(context.Context) (<-chan struct{}, error) {
				return func(context.Context) (<-chan struct{}, error) { return feed, nil }
			},
			func(src *versionSource, feed chan struct{}) { src.set("a", 2, "t2"); feed <- struct{}{} }},
		{"no feed: polling", 5 * time.Millisecond,
			func(chan struct{}) func(context.Context) (<-chan struct{}, error) {
				return func(context.Context) (<-chan struct{}, error) { return nil, context.Canceled }
			},
			func(src *versionSource, _ chan struct{}) { src.set("a", 2, "t2") }},
		{"feed stops: polling", 5 * time.Millisecond,
			func(feed chan struct{}) func(context.Context) (<-chan struct{}, error) {
				return func(context.Context) (<-chan struct{}, error) { return feed, nil }
			},
			func(src *versionSource, feed chan struct{}) { close(feed); src.set("a", 2, "t2") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &versionSource{versions: map[string]int64{"a": 1}, token: "t1"}
			feed := make(chan struct{})
			w := src.watch()
			w.Interval, w.WakeInterval, w.Wake = tc.interval, time.Hour, tc.wake(feed)
			srv := server.NewMCPServer("test", "0", server.WithResourceCapabilities(true, false))
			mcptool.InstallSubscriptions(srv, w)
			sess := &testSession{id: "s1", ch: make(chan mcp.JSONRPCNotification, 16)}
			ctx := context.Background()
			if err := srv.RegisterSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
			msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": map[string]any{"uri": "test://a"}})
			if resp := srv.HandleMessage(srv.WithContext(ctx, sess), msg); resp == nil {
				t.Fatal("subscribe: no response")
			}
			tc.move(src, feed)
			n := <-sess.ch // the test's deadline fails it if nothing comes
			if uri, _ := n.Params.AdditionalFields["uri"].(string); uri != "test://a" {
				t.Fatalf("notified %q, want test://a", uri)
			}
		})
	}
}

// TestSubscriptionsWatchCallsInProcessSubscriber follows a key with Watch
// (the board's way in): a move of its version calls the function with the
// URI, a move of another key does not, and once the context ends a move
// calls nothing.
func TestSubscriptionsWatchCallsInProcessSubscriber(t *testing.T) {
	src := &versionSource{versions: map[string]int64{"a": 1, "b": 1}, token: "t1"}
	srv := server.NewMCPServer("test", "0", server.WithResourceCapabilities(true, false))
	subs := mcptool.InstallSubscriptions(srv, src.watch())
	got := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	subs.Watch(ctx, "test://a", func(uri string) { got <- uri })
	next := func(wait time.Duration) string {
		select {
		case uri := <-got:
			return uri
		case <-time.After(wait):
			return ""
		}
	}
	src.set("b", 2, "t2")
	if uri := next(100 * time.Millisecond); uri != "" {
		t.Fatalf("called for %s, an unwatched key", uri)
	}
	src.set("a", 2, "t3")
	if uri := next(5 * time.Second); uri != "test://a" {
		t.Fatalf("called with %q, want test://a", uri)
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // the forgetting goroutine runs
	src.set("a", 3, "t4")
	if uri := next(100 * time.Millisecond); uri != "" {
		t.Fatalf("called for %s after the context ended", uri)
	}
}
