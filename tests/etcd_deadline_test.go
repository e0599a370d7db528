package tests

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore/etcdtest"
)

// hangMargin is how long past its deadline a call may still be running before
// it counts as hung: far above noise on a loaded machine, far below what the
// deadline's leaks cost (before the store's dial and the install-id read lived
// within the deadline, specd call --deadline 2s on a dead cluster printed at 11
// s). A bound on a hang, not a latency measurement.
const hangMargin = 5 * time.Second

// TestDeadEtcdCallEndsByItsDeadline: with the etcd member gone, `specd call
// --deadline 2s` (a read and a write), set-up and exit included, ends by its
// deadline with the store's UNAVAILABLE envelope (the cluster is unreachable,
// retry_after_ms, a recovery block), and without --deadline by the store's
// request timeout (3 s); a running `specd serve` answers a write the same way
// by the README's request timeout (3 s), and so does one started after the
// member died.
func TestDeadEtcdCallEndsByItsDeadline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary and an etcd member")
	}
	bin := specdBinary(t)
	addr, stop := etcdtest.StartStoppable(t, 4096)
	store := "etcd://" + addr + "/deadline"
	ws := t.TempDir()
	cli := func(ctx context.Context, tool, args string, extra ...string) (map[string]any, error) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"call", tool, args, "--store", store}, extra...)...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "SPECD_WORKSPACE="+ws)
		out, err := cmd.Output()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var env map[string]any
		if jerr := json.Unmarshal(out, &env); jerr != nil {
			t.Fatalf("%s %s: not an envelope (%v): %s", tool, args, err, out)
		}
		return env, err
	}
	const write = `{"action":"intake-add","title":"while the cluster is down"}`
	const read = `{"action":"list"}`

	// While the member is up: the prefix gets its meta keys, the server its
	// session and its install id.
	url, stderr := httpServer(t, nil, "--store", store)
	c := httpClient(t, url, protocols[0], "deadline-e2e")
	if env, err := cli(context.Background(), "authoring", `{"action":"intake-add","title":"before"}`); err != nil || env["success"] != true {
		t.Fatalf("write while up: %v %v", err, env)
	}
	if env, err := e2eCall(c, 30*time.Second, "authoring", map[string]any{"action": "intake-add", "title": "before"}); err != nil || env["success"] != true {
		t.Fatalf("server write while up: %v %v\n%s", err, env, stderr)
	}

	stop()
	const deadline = 2 * time.Second
	for _, call := range []struct{ what, tool, args string }{{"read", "spec", read}, {"write", "authoring", write}} {
		ctx, cancel := context.WithTimeout(context.Background(), deadline+hangMargin)
		env, err := cli(ctx, call.tool, call.args, "--deadline", deadline.String())
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("specd call %s --deadline %s on a dead cluster was still running after %s", call.what, deadline, deadline+hangMargin)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("%s: want exit status 1 (a failure envelope), got %v", call.what, err)
		}
		checkClusterUnavailable(t, "specd call "+call.what, env)
	}

	// Without --deadline (30 s) a call ends by the store's request
	// timeout, the README's 3 s, set-up and exit included.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second+hangMargin)
	env, err := cli(ctx, "spec", read)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("specd call read on a dead cluster was still running after %s", 3*time.Second+hangMargin)
	}
	checkClusterUnavailable(t, "specd call read (default deadline)", env)

	// The server's write: the README's bound is the request timeout (3 s).
	env, err = e2eCall(c, 3*time.Second+hangMargin, "authoring", map[string]any{"action": "intake-add", "title": "down"})
	if err != nil {
		t.Fatalf("server write on a dead cluster: no answer within %s: %v", 3*time.Second+hangMargin, err)
	}
	checkClusterUnavailable(t, "server write", env)

	// A server started while the cluster is down: its flag identity's
	// install-id read makes no call wait on the store beyond that bound
	// either (before, each call waited for three such reads, 12 s).
	url, stderr = httpServer(t, nil, "--store", store)
	cold := httpClient(t, url, protocols[0], "deadline-e2e-cold")
	for _, args := range []map[string]any{{"action": "intake-add", "title": "down"}, {"action": "intake-list"}} {
		env, err := e2eCall(cold, 3*time.Second+hangMargin, "authoring", args)
		if err != nil {
			t.Fatalf("cold server, %v on a dead cluster: no answer within %s: %v\n%s", args, 3*time.Second+hangMargin, err, stderr)
		}
		checkClusterUnavailable(t, "cold server", env)
	}
}

// checkClusterUnavailable holds env to the store's answer for an
// unreachable cluster: UNAVAILABLE, saying so, with retry_after_ms and a
// recovery block.
func checkClusterUnavailable(t *testing.T, what string, env map[string]any) {
	t.Helper()
	d := data(env)
	msg, _ := env["error"].(string)
	details, _ := d["details"].(map[string]any)
	_, hasRecovery := d["recovery"].(map[string]any)
	if env["success"] != false || errorCode(env) != "UNAVAILABLE" || !strings.Contains(msg, "etcd cluster is unreachable") ||
		details["retry_after_ms"] == nil || !hasRecovery || d["remediation"] == "" {
		b, _ := json.Marshal(env)
		t.Fatalf("%s: want the store's UNAVAILABLE (cluster unreachable, retry_after_ms, recovery), got %s", what, b)
	}
}
