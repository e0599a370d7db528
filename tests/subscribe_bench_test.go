package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// BenchmarkSubscriptionLatency measures the built binary serving stdio with
// one resources/subscribe: the time from a commit made by another process
// (this one, through its own store on the same file) to the
// notifications/resources/updated it causes, over 20 commits spaced at
// uneven intervals (reported as latency-median-ms and latency-max-ms), and
// the server's CPU time over 20 idle seconds with the subscription held
// (idle-cpu-ms, from /proc's schedstat). One iteration is the whole
// run: use -benchtime=1x.
func BenchmarkSubscriptionLatency(b *testing.B) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		b.Skip("needs /proc for the server's CPU time")
	}
	for b.Loop() {
		lat, idle := subscriptionLatency(b)
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "latency-median-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "latency-max-ms")
		b.ReportMetric(float64(idle.Microseconds())/1000, "idle-cpu-ms")
	}
}

func subscriptionLatency(b *testing.B) (lat []time.Duration, idle time.Duration) {
	db := filepath.Join(b.TempDir(), ".specd", "specd.db")
	ws := b.TempDir()
	st, err := store.Open(store.Options{Path: db, LockTimeout: 5 * time.Second, Linger: -1, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	repo := specstore.New(st, nil)
	id := seedSpec(b, repo, 10)

	var server *exec.Cmd
	tr := transport.NewStdioWithOptions(specdBinary(b), []string{"SPECD_WORKSPACE=" + ws}, []string{"serve", "--db", db},
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			server = exec.CommandContext(ctx, command, args...)
			server.Env = append(os.Environ(), env...)
			return server, nil
		}))
	if err := tr.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	defer c.Close()
	initialize(b, c, mcp.ProtocolVersion20251125)
	arrived := make(chan time.Time, 64)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationResourceUpdated {
			arrived <- time.Now()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := mcp.SubscribeRequest{}
	req.Params.URI = "specd://specs/" + id
	//lint:ignore SA1019 resources/subscribe is the 2025-11-25 protocol's subscription
	if err := c.Subscribe(ctx, req); err != nil {
		b.Fatal(err)
	}
	lat = notifyLatencies(ctx, b, repo, id, arrived)
	time.Sleep(3 * time.Second) // past the last commit's fresh window
	before := cpuTime(b, server.Process.Pid)
	time.Sleep(20 * time.Second)
	return lat, cpuTime(b, server.Process.Pid) - before
}

// cpuTime is the CPU time a process's threads have run, in nanoseconds
// (the first field of /proc/PID/task/TID/schedstat, summed).
func cpuTime(b *testing.B, pid int) time.Duration {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no schedstat for %d: %v", pid, err)
	}
	var sum time.Duration
	for _, f := range tasks {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended
		}
		ns, _ := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}

// notifyLatencies makes 20 changes to spec id through repo, unevenly
// spaced so polling phases vary, and returns the delay from each commit to
// its notification (a receive on arrived, which the subscriber's
// resources/updated handler feeds).
func notifyLatencies(ctx context.Context, b *testing.B, repo specs.Repo, id string, arrived <-chan time.Time) []time.Duration {
	b.Helper()
	var lat []time.Duration
	for i := range 20 {
		time.Sleep(time.Duration(100+(i*137)%400) * time.Millisecond)
		if _, err := repo.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "bench"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			_, err := specs.AddPhase(sp, specs.PhaseInput{Title: "change " + strconv.Itoa(i)})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		select {
		case at := <-arrived:
			lat = append(lat, max(at.Sub(committed), 0))
		case <-ctx.Done():
			b.Fatalf("change %d: no notification", i)
		}
	}
	return lat
}
