package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// The 3-member cluster end-to-end run (README "Tested on real clusters"). It
// needs real processes: an etcd binary ($SPECD_ETCD_BIN; make e2e-etcd builds
// it from the etcd module at the version go.mod pins) and specd ($SPECD_BIN).
// Without SPECD_ETCD_E2E=1 it is skipped (make unit stays fast).

type etcdMember struct {
	name, client, peer, dir string
	cmd                     *exec.Cmd
}

// freeAddr is a loopback host:port free at the time of asking.
func freeAddr(t testing.TB) string { return fmt.Sprintf("127.0.0.1:%d", freePort(t)) }

func (m *etcdMember) start(t testing.TB, bin, cluster string, logs string) {
	t.Helper()
	log, err := os.OpenFile(filepath.Join(logs, m.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	m.cmd = exec.Command(bin, "--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", "http://"+m.client, "--advertise-client-urls", "http://"+m.client,
		"--listen-peer-urls", "http://"+m.peer, "--initial-advertise-peer-urls", "http://"+m.peer,
		"--initial-cluster", cluster, "--initial-cluster-state", "new", "--max-txn-ops", "4096", "--log-level", "warn")
	m.cmd.Stdout, m.cmd.Stderr = log, log
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

func (m *etcdMember) kill() {
	if m.cmd != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Signal(syscall.SIGKILL)
		_ = m.cmd.Wait()
		m.cmd = nil
	}
}

type specdServer struct {
	url string
	cmd *exec.Cmd
}

func (s *specdServer) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// e2eCall is one tool call that reports transport failures as errors (an
// agent whose server died sees them) instead of failing the test.
func e2eCall(c *client.Client, timeout time.Duration, tool string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(res.Content) != 1 {
		return nil, fmt.Errorf("%d content items", len(res.Content))
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		return nil, fmt.Errorf("content is %T", res.Content[0])
	}
	var env map[string]any
	return env, json.Unmarshal([]byte(text.Text), &env)
}

func e2eClient(t testing.TB, url string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	initialize(t, c, protocols[0])
	return c
}

// failureLog is a testing.TB that also keeps its Error and Fatal messages,
// so a long run can repeat them at the very end of its output (after the
// members' and servers' logs), where a reader of only the output's tail
// (a CI summary) still sees why it failed.
type failureLog struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (f *failureLog) keep(msg string) {
	f.mu.Lock()
	f.msgs = append(f.msgs, msg)
	f.mu.Unlock()
}

func (f *failureLog) Errorf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Errorf(format, args...)
}

func (f *failureLog) Fatalf(format string, args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprintf(format, args...))
	f.TB.Fatalf(format, args...)
}

func (f *failureLog) Fatal(args ...any) {
	f.TB.Helper()
	f.keep(fmt.Sprint(args...))
	f.TB.Fatal(args...)
}

// failures is every kept message, one per line.
func (f *failureLog) failures() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.msgs, "\n")
}

func TestEtcdClusterEndToEnd(tt *testing.T) {
	t := &failureLog{TB: tt}
	if os.Getenv("SPECD_ETCD_E2E") != "1" {
		t.Skip("set SPECD_ETCD_E2E=1 (make e2e-etcd) to run the 3-member cluster run")
	}
	etcdBin := os.Getenv("SPECD_ETCD_BIN")
	if etcdBin == "" {
		t.Fatal("SPECD_ETCD_BIN: the etcd binary (make e2e-etcd builds bin/etcd)")
	}
	specdBin := specdBinary(t)
	logs := t.TempDir()
	defer func() {
		if t.Failed() {
			for _, n := range []string{"m1", "m2", "m3", "s1", "s2", "s3"} {
				b, _ := os.ReadFile(filepath.Join(logs, n+".log"))
				if len(b) > 1500 {
					b = b[len(b)-1500:]
				}
				t.Logf("--- %s.log ---\n%s", n, b)
			}
			t.Logf("--- why it failed (each message above, again) ---\n%s", t.failures())
		}
	}()

	// Three members on loopback.
	setupStart := time.Now()
	members := make([]*etcdMember, 3)
	var cluster, eps []string
	for i := range members {
		members[i] = &etcdMember{name: fmt.Sprintf("m%d", i+1), client: freeAddr(t), peer: freeAddr(t), dir: filepath.Join(t.TempDir(), "data")}
		cluster = append(cluster, members[i].name+"=http://"+members[i].peer)
		eps = append(eps, members[i].client)
	}
	for _, m := range members {
		m.start(t, etcdBin, strings.Join(cluster, ","), logs)
	}
	defer func() {
		for _, m := range members {
			m.kill()
		}
	}()
	storeURL := "etcd://" + strings.Join(eps, ",") + "/e2e?max_txn_ops=4096"

	// The spec: 600 tasks in one phase, written straight to the cluster.
	directStore, err := etcdstore.Open(etcdstore.Options{Endpoints: eps, Prefix: "/e2e", MaxTxnOps: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer directStore.Close()
	direct := specstore.New(directStore, nil)
	var specID string
	for deadline := time.Now().Add(30 * time.Second); ; {
		h, err := direct.CreateSpec(context.Background(), specs.RepoWriteOptions{Action: "authoring.spec-create"}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: "fleet run", Mission: "600 tasks"}, time.Now, exists)
			return sp, nil, err
		})
		if err == nil {
			specID = h.SpecID
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster never served: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	const tasks = 600
	if _, err := direct.MutateSpec(context.Background(), specID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		in := make([]specs.TaskInput, tasks)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("task %03d", i)}
		}
		_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "work"}, in)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// Three specd servers over HTTP on the cluster.
	servers := make([]*specdServer, 3)
	for i := range servers {
		addr := freeAddr(t)
		log, _ := os.Create(filepath.Join(logs, fmt.Sprintf("s%d.log", i+1)))
		cmd := exec.Command(specdBin, "serve", "--transport", "http", "--addr", addr, "--store", storeURL, "--workspace", t.TempDir(), "--log-level", "warn")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		servers[i] = &specdServer{url: "http://" + addr + "/mcp", cmd: cmd}
	}
	defer func() {
		for _, s := range servers {
			s.kill()
		}
	}()
	for _, s := range servers {
		for deadline := time.Now().Add(20 * time.Second); ; {
			if c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/mcp")); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("specd server never listened")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// 12 agents, 4 per server: next(claim) → complete until the spec is done.
	var (
		mu        sync.Mutex
		claims    = map[string][]int{} // task → agents that claimed it
		completes = map[string]int{}
		done      atomic.Int64
		idle      [12]atomic.Bool
		dead      [12]atomic.Bool
		stopped   atomic.Bool
		refusals  sync.Map // error code → *atomic.Int64: calls the agents retried
	)
	refused := func(code string) {
		n, _ := refusals.LoadOrStore(code, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	agent := func(n int, c *client.Client) error {
		for !stopped.Load() {
			env, err := e2eCall(c, 40*time.Second, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
			if err != nil {
				return err // the server is gone
			}
			d := data(env)
			if env["success"] != true {
				if code := errorCode(env); code == "UNAVAILABLE" || code == "CONFLICT" || code == "RATE_LIMIT_EXCEEDED" {
					// Idle agents poll every 50 ms, 80 calls/s per server:
					// past the default burst the rate limit answers, and a
					// real agent waits as told.
					refused("next " + code)
					time.Sleep(retryAfter(env))
					continue
				}
				return fmt.Errorf("next: %v", env)
			}
			if d["found"] != true {
				if d["spec_complete"] == true {
					return nil
				}
				idle[n].Store(true)
				time.Sleep(50 * time.Millisecond)
				continue
			}
			idle[n].Store(false)
			id, _ := d["task_id"].(string)
			mu.Lock()
			claims[id] = append(claims[id], n)
			mu.Unlock()
			for try := 0; ; try++ {
				env, err := e2eCall(c, 40*time.Second, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": "done by agent " + fmt.Sprint(n)})
				if err != nil {
					return err
				}
				if env["success"] == true {
					mu.Lock()
					completes[id]++
					mu.Unlock()
					done.Add(1)
					break
				}
				if code := errorCode(env); (code == "UNAVAILABLE" || code == "CONFLICT" || code == "RATE_LIMIT_EXCEEDED") && try < 100 {
					refused("complete " + code)
					time.Sleep(retryAfter(env))
					continue
				}
				return fmt.Errorf("complete %s: %v", id, env)
			}
		}
		return nil
	}
	start := time.Now()
	errs := make([]error, 12)
	var wg sync.WaitGroup
	for n := 0; n < 12; n++ {
		c := e2eClient(t, servers[n/4].url)
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[n] = agent(n, c)
			if errs[n] != nil {
				dead[n].Store(true)
			} else {
				// Finished (spec complete): nothing actionable left for it,
				// so the reset below need not wait for it.
				idle[n].Store(true)
			}
		}()
	}
	waitDone := func(n int64) {
		for done.Load() < n && time.Since(start) < 7*time.Minute {
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A third of the way: kill one etcd member; the run goes on.
	waitDone(tasks / 3)
	members[0].kill()
	t.Logf("killed etcd member m1 after %d completions", done.Load())

	// Half way: kill specd server 3; its agents' claims go stale.
	waitDone(tasks / 2)
	servers[2].kill()
	t.Logf("killed specd server s3 after %d completions", done.Load())

	// When every surviving agent is idle (nothing actionable left but the
	// dead agents' claims), reset them and let the survivors finish.
	control := e2eClient(t, servers[0].url)
	defer control.Close()
	var resetIDs []string
	for time.Since(start) < 7*time.Minute {
		all := true
		for n := 0; n < 8; n++ {
			if !idle[n].Load() && !dead[n].Load() {
				all = false
			}
		}
		if all {
			env, err := waitedCall(control, "task", map[string]any{"action": "reset-batch", "spec_id": specID, "threshold_hours": 0}, "RATE_LIMIT_EXCEEDED", "UNAVAILABLE", "CONFLICT")
			if err != nil || env["success"] != true {
				t.Fatalf("reset-batch: %v %v", err, env)
			}
			for _, r := range data(env)["reset"].([]any) {
				resetIDs = append(resetIDs, r.(map[string]any)["task_id"].(string))
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("reset-batch freed %d stale claims of the killed server", len(resetIDs))
	wg.Wait()
	elapsed := time.Since(start)
	var retried []string
	refusals.Range(func(k, v any) bool {
		retried = append(retried, fmt.Sprintf("%s×%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	sort.Strings(retried)
	t.Logf("set-up %v (cluster, 600-task spec, 3 servers); agents retried %v", start.Sub(setupStart).Round(time.Millisecond), retried)
	for n := 0; n < 8; n++ {
		if errs[n] != nil {
			t.Errorf("agent %d (server s%d): %v", n, n/4+1, errs[n])
		}
	}

	// Every task completed exactly once; claimed once, except the reset ones
	// (claimed by a killed server's agent, then by a survivor).
	reset := map[string]bool{}
	for _, id := range resetIDs {
		reset[id] = true
	}
	var twice []string
	for id, who := range claims {
		if len(who) > 1 && !(len(who) == 2 && reset[id]) {
			twice = append(twice, fmt.Sprintf("%s by %v", id, who))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("tasks claimed twice: %v", twice)
	}
	for id, n := range completes {
		if n != 1 {
			t.Errorf("task %s completed %d times", id, n)
		}
	}
	// No acknowledged write lost: the store holds every completion, and the
	// journal and history agree with the header. The one completion no
	// agent saw may be a killed server's: its agent's complete committed
	// and the server died before answering (a write never acknowledged,
	// not one lost). Such a task was claimed by that server's agents only
	// and so not reset (a reset task is completed by a survivor, which
	// sees it).
	killedOnly := func(id string) bool {
		for _, n := range claims[id] {
			if n/4 != 2 {
				return false
			}
		}
		return len(claims[id]) > 0 && !reset[id]
	}
	if err := direct.ReadSpec(context.Background(), specID, func(sp *specs.Spec, j specs.JournalReader) error {
		completed, unseen := 0, 0
		for _, id := range sp.IDs() {
			n := sp.Node(id)
			if n.IsWorkLeaf() && n.Status == specs.StatusCompleted {
				completed++
				if _, ok := completes[id]; !ok {
					if !killedOnly(id) {
						t.Errorf("task %s completed in the store but no agent saw it (claimed by agents %v)", id, claims[id])
					}
					unseen++
				}
			}
		}
		if completed != len(completes)+unseen {
			t.Errorf("store has %d completed leaves, agents acknowledged %d", completed, len(completes))
		}
		if unseen > 4 {
			t.Errorf("%d unanswered completions; the killed server had 4 agents", unseen)
		}
		if unseen > 0 {
			t.Logf("%d completion(s) committed by the killed server without an answer", unseen)
		}
		if sp.Header.CompletedTasks != sp.Header.TotalTasks {
			t.Errorf("header: %d of %d tasks completed", sp.Header.CompletedTasks, sp.Header.TotalTasks)
		}
		hist, _, err := direct.History(context.Background(), specID, 0, 1)
		if err != nil || len(hist) != 1 || hist[0].Version != sp.Header.Version {
			t.Errorf("history newest %v (err %v), header version %d", hist, err, sp.Header.Version)
		}
		entries, _, err := j.Entries(0, 5000, nil)
		if err != nil {
			t.Errorf("journal: %v", err)
		}
		t.Logf("%d completions by %d agents in %v; header v%d, %d journal entries", len(completes), 12, elapsed.Round(time.Millisecond), sp.Header.Version, len(entries))
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// Kill a second member: no quorum. Calls answer UNAVAILABLE (not hang).
	members[1].kill()
	t0 := time.Now()
	env, err := waitedCall(control, "task", map[string]any{"action": "next", "spec_id": specID}, "RATE_LIMIT_EXCEEDED")
	if err != nil || errorCode(env) != "UNAVAILABLE" {
		t.Fatalf("without quorum: want UNAVAILABLE, got %v %v", err, env)
	}
	t.Logf("without quorum: UNAVAILABLE after %v: %v", time.Since(t0).Round(time.Millisecond), data(env))
	if h, _ := waitedCall(control, "health", map[string]any{"action": "readiness"}, "RATE_LIMIT_EXCEEDED"); data(h)["ready"] == true {
		t.Errorf("health reports ready without quorum: %v", h)
	}
	// The members return: the servers recover by themselves.
	for _, m := range members[:2] {
		m.start(t, etcdBin, strings.Join(cluster, ","), logs)
	}
	t0 = time.Now()
	for {
		env, err := e2eCall(control, 40*time.Second, "task", map[string]any{"action": "next", "spec_id": specID})
		if err == nil && env["success"] == true {
			break
		}
		if time.Since(t0) > 60*time.Second {
			t.Fatalf("no recovery after the members returned: %v %v", err, env)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("recovered %v after the members were restarted", time.Since(t0).Round(time.Millisecond))
}

// waitedCall is e2eCall that, like an agent told to, waits out the refusals
// whose error code is in retry (up to 100 of them) and sends the same call
// again. The control client shares its server's rate bucket (key anonymous)
// with that server's polling agents, so even a single control call can be
// refused RATE_LIMIT_EXCEEDED and must wait as told.
func waitedCall(c *client.Client, tool string, args map[string]any, retry ...string) (map[string]any, error) {
	for try := 0; ; try++ {
		env, err := e2eCall(c, 40*time.Second, tool, args)
		if err != nil || env["success"] == true || try == 100 || !slices.Contains(retry, errorCode(env)) {
			return env, err
		}
		time.Sleep(retryAfter(env))
	}
}

// retryAfter is how long an agent waits before retrying a refused call: the
// answer's retry_after_seconds (rate limit) or 50 ms.
func retryAfter(env map[string]any) time.Duration {
	if s, ok := data(env)["retry_after_seconds"].(float64); ok && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 50 * time.Millisecond
}
