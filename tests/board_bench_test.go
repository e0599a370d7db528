package tests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
)

// seedManyTasks creates a spec of n tasks through MCP and returns its id.
func seedManyTasks(tb testing.TB, c *client.Client, n int) string {
	tb.Helper()
	env := call(tb, c, "authoring", map[string]any{"action": "spec-create", "name": "Measured board"})
	id, _ := data(env)["spec_id"].(string)
	var tasks []any
	for i := 1; i <= n; i++ {
		tasks = append(tasks, map[string]any{"title": fmt.Sprintf("Task %d", i), "task_category": "implementation", "file_path": fmt.Sprintf("f%d.go", i)})
	}
	if env := call(tb, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Work"}, "tasks": tasks}); env["success"] != true {
		tb.Fatalf("seed: %v", env)
	}
	return id
}

// openBoardTab opens the spec page in tab ctx, waits until its stream is
// open and starts recording, in the page, the wall-clock time of every
// update of its main part (window.updates).
func openBoardTab(tb testing.TB, ctx context.Context, url string) {
	tb.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url), chromedp.WaitVisible(`#overall .pct`)); err != nil {
		tb.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-status").textContent === "Live"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		tb.Fatal(err)
	}
	const record = `window.updates = []; new MutationObserver(() => window.updates.push(Date.now())).observe(document.getElementById("main"), {childList: true}); true`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](record)); err != nil {
		tb.Fatal(err)
	}
}

func millis(d []time.Duration) (median, maximum float64) {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / 1e6, float64(s[len(s)-1]) / 1e6
}

// BenchmarkBoardLiveUpdate measures the time from a change made through
// MCP (the call's start) to the open board page's update in chromium (the
// page's own clock when its main part is replaced), over 20 changes per
// iteration: median-ms and max-ms. Run: make build, then
// SPECD_BIN=$PWD/bin/specd go test ./tests -run '^$' -bench BoardLiveUpdate -benchtime 1x
func BenchmarkBoardLiveUpdate(b *testing.B) {
	const changes = 20
	ctx, _ := browser(b)
	s := startShared(b, nil, "--rate", "100000", "--rate-burst", "1000000") // measure the work, not the rate limit
	mc := s.client(b, "")
	id := seedManyTasks(b, mc, changes*b.N+1)
	openBoardTab(b, ctx, boardURL(s, id))
	var lat []time.Duration
	task := 0
	for b.Loop() {
		for range changes {
			task++
			seen, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.updates.length`))
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			if env := call(b, mc, "task", map[string]any{"action": "complete", "spec_id": id, "task_id": fmt.Sprintf("task-1-%d", task), "completion_note": "measured"}); env["success"] != true {
				b.Fatalf("complete: %v", env)
			}
			at, err := chromedp.Run(ctx, chromedp.Poll[float64](fmt.Sprintf(`window.updates.length > %d && window.updates[%d]`, seen, seen),
				chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(5*time.Millisecond)))
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.UnixMilli(int64(at)).Sub(start))
			// Let the page settle (one change may bring a second refresh).
			time.Sleep(300 * time.Millisecond)
		}
	}
	med, mx := millis(lat)
	b.ReportMetric(med, "median-ms")
	b.ReportMetric(mx, "max-ms")
}

// vmRSS is a process's resident set in MiB (Linux).
func vmRSS(tb testing.TB, pid int) float64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

// BenchmarkBoardServerCost measures what open boards cost the server: its
// RSS and the latency of MCP calls (spec get, and journal add, a write
// every open board follows) with no board open, then with 10 chromium boards
// on the spec page, each in a browser of its own. Run: make build, then
// SPECD_BIN=$PWD/bin/specd go test ./tests -run '^$' -bench BoardServerCost -benchtime 1x
func BenchmarkBoardServerCost(b *testing.B) {
	const calls, boards = 200, 10
	_ = chromiumPath(b)
	s := startShared(b, nil, "--rate", "100000", "--rate-burst", "1000000") // measure the work, not the rate limit
	mc := s.client(b, "")
	id := seedManyTasks(b, mc, 40)
	measure := func(label string) {
		var reads, writes []time.Duration
		for i := range calls {
			start := time.Now()
			call(b, mc, "spec", map[string]any{"action": "get", "spec_id": id})
			reads = append(reads, time.Since(start))
			if i%4 == 0 { // a write every fourth call: each one refreshes every open board
				start = time.Now()
				call(b, mc, "journal", map[string]any{"action": "add", "spec_id": id, "title": "measured", "content": "x"})
				writes = append(writes, time.Since(start))
			}
		}
		time.Sleep(time.Second) // the boards' refreshes finish
		rm, rx := millis(reads)
		wm, wx := millis(writes)
		rss := vmRSS(b, s.cmd.Process.Pid)
		b.ReportMetric(rm, label+"-read-median-ms")
		b.ReportMetric(rx, label+"-read-max-ms")
		b.ReportMetric(wm, label+"-write-median-ms")
		b.ReportMetric(wx, label+"-write-max-ms")
		b.ReportMetric(rss, label+"-rss-MiB")
	}
	for b.Loop() {
		measure("boards0")
		// One browser per board, as ten people would have: a browser keeps
		// at most six HTTP/1.1 connections per server, and each open board
		// holds one for its event stream.
		for range boards {
			tab, _ := browser(b)
			openBoardTab(b, tab, boardURL(s, id))
		}
		measure("boards10")
	}
}
