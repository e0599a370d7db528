package tests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/tools"
)

// boardEventWait bounds the wait for a board event: a hang bound on a
// loaded machine, not a latency measurement (BenchmarkBoardLiveUpdateEtcd
// measures that).
const boardEventWait = 15 * time.Second

// boardStream is an open board event stream (GET /events?spec=…): the
// "change" events' data (spec ids), in order, on its channel.
type boardStream struct {
	changes <-chan string
}

// openBoardStream opens the board event stream of server s for the spec
// ids, as an open page does, and returns once the server says it is open
// (its subscriptions then hold the specs' versions, so every later change
// is sent). It is closed when tb ends.
func openBoardStream(tb testing.TB, s *sharedServer, ids ...string) *boardStream {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/events?"+url.Values{"spec": ids}.Encode(), nil)
	must(tb, err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	must(tb, err)
	tb.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		tb.Fatalf("GET /events: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	open := make(chan struct{})
	changes := make(chan string, 64)
	go func() {
		defer close(changes)
		sc := bufio.NewScanner(resp.Body)
		event, opened := "", false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == ": open" && !opened:
				opened = true
				close(open)
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "change":
				select {
				case changes <- strings.TrimPrefix(line, "data: "):
				case <-ctx.Done():
					return
				}
			case line == "":
				event = ""
			}
		}
	}()
	select {
	case <-open:
	case <-time.After(boardEventWait):
		tb.Fatalf("the board stream of %s did not open within %s", s.URL, boardEventWait)
	}
	return &boardStream{changes: changes}
}

// next waits for the next change event and returns its spec id; "" when
// none arrived within boardEventWait or the stream ended.
func (b *boardStream) next() string {
	select {
	case id := <-b.changes:
		return id
	case <-time.After(boardEventWait):
		return ""
	}
}

// boardPct is the overall progress text of the spec page's main part on
// server s (what the open page fetches on a change), e.g. "50%".
func boardPct(tb testing.TB, s *sharedServer, id string) string {
	tb.Helper()
	resp, err := http.Get(boardURL(s, id) + "?part=main")
	must(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(tb, err)
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s?part=main: %d\n%s", boardURL(s, id), resp.StatusCode, body)
	}
	_, rest, ok := strings.Cut(string(body), `id="overall"`)
	if ok {
		_, rest, ok = strings.Cut(rest, `<span class="pct">`)
	}
	pct, _, found := strings.Cut(rest, "</span>")
	if !ok || !found {
		tb.Fatalf("no overall progress in the spec page's main part:\n%s", body)
	}
	return pct
}

// TestBoardLiveAcrossEtcdServers: two `specd serve --transport http`
// servers on one etcd prefix (two machines of a fleet). A board page open
// on server A follows a spec; a task completed through MCP on server B
// sends the page's stream on A a change event for that spec (A's watcher
// learns of B's commit from its etcd watch), and A's spec page then shows
// the new progress.
func TestBoardLiveAcrossEtcdServers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary and an etcd member")
	}
	store := "etcd://" + etcdtest.Start(t, 4096) + "/board"
	a := startShared(t, nil, "--store", store)
	b := startShared(t, nil, "--store", store)
	mb := b.client(t, "")
	id := seedBoardSpec(t, mb, "Board on etcd")
	if pct := boardPct(t, a, id); pct != "0%" {
		t.Fatalf("server A's spec page before the change: %q, want 0%%", pct)
	}

	stream := openBoardStream(t, a, id)
	// The watcher has looked once (its first look reads the versions
	// whatever the feed says), so only the store feed can report what
	// follows.
	time.Sleep(2 * tools.SubscriptionPollInterval)
	if env := call(t, mb, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": "task-1-1", "completion_note": "through server B"}); env["success"] != true {
		t.Fatalf("complete through B: %v", env)
	}
	got := stream.next()
	if got == "" {
		t.Fatalf("no change event on server A's board stream within %s of a change through server B\nA's log:\n%s", boardEventWait, a.Log())
	}
	if got != id {
		t.Fatalf("change event for %q, want %q", got, id)
	}
	if pct := boardPct(t, a, id); pct != "50%" {
		t.Fatalf("server A's spec page after the change event: %q, want 50%%", pct)
	}

	// The next change arrives too (the feed keeps going).
	if env := call(t, mb, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": "task-1-2", "completion_note": "through server B"}); env["success"] != true {
		t.Fatalf("second complete through B: %v", env)
	}
	if got := stream.next(); got != id {
		t.Fatalf("second change: event %q, want %q", got, id)
	}
	if pct := boardPct(t, a, id); pct != "100%" {
		t.Fatalf("server A's spec page after the second change event: %q, want 100%%", pct)
	}
}

// BenchmarkBoardLiveUpdateEtcd measures, on etcd, the time from a change
// made through MCP on server B (the call's start) to the change event on
// a board stream open on server A (two servers on one etcd prefix), over
// 20 changes per iteration: median-ms and max-ms. The browser's fetch of
// the page part that follows is BenchmarkBoardLiveUpdate's. Run: make
// build, then
// SPECD_BIN=$PWD/bin/specd go test ./tests -run '^$' -bench BoardLiveUpdateEtcd -benchtime 1x
func BenchmarkBoardLiveUpdateEtcd(b *testing.B) {
	const changes = 20
	store := "etcd://" + etcdtest.Start(b, 4096) + "/board-bench"
	sa := startShared(b, nil, "--store", store)
	sb := startShared(b, nil, "--store", store, "--rate", "100000", "--rate-burst", "1000000") // measure the work, not the rate limit
	mc := sb.client(b, "")
	id := seedManyTasks(b, mc, changes*b.N+1)
	stream := openBoardStream(b, sa, id)
	time.Sleep(2 * tools.SubscriptionPollInterval) // the watcher's first look is behind us
	var lat []time.Duration
	task := 0
	for b.Loop() {
		for range changes {
			task++
			start := time.Now()
			if env := call(b, mc, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": fmt.Sprintf("task-1-%d", task), "completion_note": "measured"}); env["success"] != true {
				b.Fatalf("complete: %v", env)
			}
			if got := stream.next(); got != id {
				b.Fatalf("change %d: event %q, want %q", task, got, id)
			}
			lat = append(lat, time.Since(start))
			// Spread the changes over the watcher's interval (a fixed pause
			// would lock every change to one phase of its ticker).
			time.Sleep(time.Duration(task*131%500) * time.Millisecond)
		}
	}
	med, mx := millis(lat)
	b.ReportMetric(med, "median-ms")
	b.ReportMetric(mx, "max-ms")
}
