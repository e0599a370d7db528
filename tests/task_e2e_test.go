package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// stdioOnStore starts the built binary on the store file db (shared with
// other processes) and connects a client.
func stdioOnStore(t testing.TB, db, protocol string, extraArgs ...string) *client.Client {
	t.Helper()
	args := append([]string{"serve", "--db", db, "--log-level", "warn"}, extraArgs...)
	logw := &testLogWriter{t: t}
	t.Cleanup(logw.stop)
	tr := transport.NewStdioWithOptions(specdBinary(t), []string{"SPECD_WORKSPACE=" + filepath.Dir(filepath.Dir(db))}, args,
		transport.WithCommandStderrWriter(logw))
	if err := tr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(protocol))
	initialize(t, c, protocol)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// taskOK calls and fails the test unless the call succeeded; it returns data.
func taskOK(t testing.TB, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	env := call(t, c, tool, args)
	if env["success"] != true {
		t.Fatalf("%s %v: %v", tool, args, env["data"])
	}
	return data(env)
}

// seedWorkSpec creates, through c, an active spec of three phases with 17,
// 17 and 16 tasks (50) plus each phase's verify scaffold, and dependencies:
// inside each phase every third task waits for the task two before it, and
// task-3-1 waits for task-2-5 (phases are chained by default). It returns
// the spec id and the ids of every work leaf.
func seedWorkSpec(t testing.TB, c *client.Client) (string, []string) {
	t.Helper()
	id := taskOK(t, c, "authoring", map[string]any{"action": "spec-create", "name": "agent loop"})["spec_id"].(string)
	var leaves []string
	for p, n := range []int{17, 17, 16} {
		var tasks []any
		for i := 0; i < n; i++ {
			tasks = append(tasks, map[string]any{"title": fmt.Sprintf("Task %d.%d", p+1, i+1), "task_category": "implementation",
				"file_path": fmt.Sprintf("pkg/p%d/f%d.go", p+1, i+1), "description": "work"})
		}
		d := taskOK(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": fmt.Sprintf("Phase %d", p+1)}, "tasks": tasks, "verify_scaffold": true})
		for _, x := range d["task_ids"].([]any) {
			leaves = append(leaves, x.(string))
		}
		for _, x := range d["verify_ids"].([]any) {
			leaves = append(leaves, x.(string))
		}
		for i := 3; i <= n; i += 3 {
			taskOK(t, c, "task", map[string]any{"action": "add-dependency", "spec_id": id,
				"task_id": fmt.Sprintf("task-%d-%d", p+1, i-2), "target_id": fmt.Sprintf("task-%d-%d", p+1, i)})
		}
	}
	taskOK(t, c, "task", map[string]any{"action": "add-dependency", "spec_id": id, "task_id": "task-3-1", "target_id": "task-2-5", "dependency_type": "blocked_by"})
	taskOK(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": id})
	return id, leaves
}

// agentResult is what one scripted agent did.
type agentResult struct {
	name      string
	completed []string
	waits     int
	err       error
}

// agentWork is how long a scripted agent "works" on a task between prepare
// and complete. Real agents think for seconds; a few tens of milliseconds,
// longer than the store's idle linger (20 ms), is enough for the file to be
// released while an agent works, as it is in real use. With no work time at
// all an in-process agent, far faster than a stdio one, claims every task
// the moment it becomes free and the other agent finds nothing to do.
const agentWork = 25 * time.Millisecond

// runAgent is a scripted agent: next(claim) → prepare → work → (verify
// nodes: verification add) → complete, until next says spec_complete.
// found=false with work left (blocked or held by the other agent) makes it
// wait and ask again. It returns an error instead of failing so it can run
// in a goroutine.
func runAgent(t testing.TB, name string, c *client.Client, specID string) (res agentResult) {
	res.name = name
	for step := 0; step < 2000; step++ {
		env := call(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
		if env["success"] != true {
			res.err = fmt.Errorf("%s next: %v", name, env["data"])
			return res
		}
		d := data(env)
		if d["found"] != true {
			if d["spec_complete"] == true {
				return res
			}
			if len(d["in_progress"].([]any)) == 0 && len(d["blocked"].([]any)) == 0 {
				res.err = fmt.Errorf("%s: found=false with nothing blocked or in progress: %v", name, d)
				return res
			}
			res.waits++
			time.Sleep(2 * time.Millisecond)
			continue
		}
		id := d["task_id"].(string)
		if d["claimed"] != true || d["status"] != "in_progress" {
			res.err = fmt.Errorf("%s: claim of %s: %v", name, id, d)
			return res
		}
		prep := call(t, c, "task", map[string]any{"action": "prepare", "spec_id": specID, "task_id": id})
		if prep["success"] != true || data(prep)["dependencies"].(map[string]any)["can_start"] != true {
			res.err = fmt.Errorf("%s prepare %s: %v", name, id, prep["data"])
			return res
		}
		time.Sleep(agentWork)
		if d["type"] == "verify" {
			if env := call(t, c, "verification", map[string]any{"action": "add", "spec_id": specID, "verify_id": id, "result": "PASSED", "output": "ok"}); env["success"] != true {
				res.err = fmt.Errorf("%s verification add %s: %v", name, id, env["data"])
				return res
			}
		}
		env = call(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": name + " did " + id})
		if env["success"] != true || data(env)["status"] != "completed" {
			res.err = fmt.Errorf("%s complete %s: %v", name, id, env["data"])
			return res
		}
		if _, warned := env["meta"].(map[string]any)["warnings"]; warned {
			res.err = fmt.Errorf("%s: %s was already completed by someone else", name, id)
			return res
		}
		res.completed = append(res.completed, id)
	}
	res.err = fmt.Errorf("%s did not reach spec_complete", name)
	return res
}

// TestTaskAgentLoopTwoProcesses: a scripted agent drives a 50-task,
// 3-phase spec with dependencies from the first next to spec_complete
// through a real MCP client (in-process server), while a second agent in
// another process (the built binary over stdio, same store file) works on
// the same spec. Every leaf is completed exactly once, by one of them, and
// every invariant holds at the end.
func TestTaskAgentLoopTwoProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			t.Parallel() // each protocol on a store of its own
			deps := newDeps(t, false)
			st := deps.Specs.(*specstore.Repo)
			a, _ := inProcess(t, deps, p)
			specID, leaves := seedWorkSpec(t, a)
			b := stdioOnStore(t, deps.Store.Path(), p)

			var wg sync.WaitGroup
			results := make([]agentResult, 2)
			for i, c := range []*client.Client{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = runAgent(t, []string{"in-process", "stdio"}[i], c, specID)
				}()
			}
			wg.Wait()
			done := map[string]string{}
			for _, r := range results {
				if r.err != nil {
					t.Fatal(r.err)
				}
				for _, id := range r.completed {
					if other, dup := done[id]; dup {
						t.Fatalf("%s completed by %s and %s", id, other, r.name)
					}
					done[id] = r.name
				}
				t.Logf("%s completed %d tasks (waited %d times)", r.name, len(r.completed), r.waits)
			}
			if len(done) != len(leaves) || len(leaves) != 56 {
				t.Fatalf("completed %d of %d leaves", len(done), len(leaves))
			}
			if len(results[1].completed) == 0 {
				t.Error("the second agent never got work: the test did not exercise two processes")
			}
			// Both agents see the end state.
			for _, c := range []*client.Client{a, b} {
				d := taskOK(t, c, "task", map[string]any{"action": "next", "spec_id": specID})
				if d["found"] != false || d["spec_complete"] != true {
					t.Fatalf("next at the end: %v", d)
				}
				pr := taskOK(t, c, "task", map[string]any{"action": "progress", "spec_id": specID})
				if pr["percentage"] != 100.0 || pr["completed_tasks"] != 56.0 {
					t.Fatalf("progress: %v", pr)
				}
			}
			checkFinishedSpec(t, st, specID, leaves, map[string]int{"Task Started": 56, "Task Completed": 56})
		})
	}
}

// checkFinishedSpec opens the store in-test and checks every invariant,
// that every leaf is completed with started_by, completed_at and one
// started and one completed journal entry, and the journal's totals.
func checkFinishedSpec(t *testing.T, st *specstore.Repo, specID string, leaves []string, wantTitles map[string]int) {
	t.Helper()
	err := st.ReadSpec(context.Background(), specID, func(sp *specs.Spec, j specs.JournalReader) error {
		if vs := specs.CheckInvariants(sp); len(vs) > 0 {
			return fmt.Errorf("invariants: %v", vs)
		}
		for _, id := range leaves {
			n := sp.Node(id)
			if n.Status != specs.StatusCompleted || n.StartedBy() == "" || n.MetaString("completed_at") == "" {
				return fmt.Errorf("%s: %s started_by=%q", id, n.Status, n.StartedBy())
			}
		}
		if sp.Header.ProgressPercentage != 100 || sp.Header.Status != specs.StatusCompleted {
			return fmt.Errorf("header: %+v", sp.Header)
		}
		entries, _, err := j.Entries(0, 100_000, nil)
		if err != nil {
			return err
		}
		perTask := map[string]map[string]int{}
		titles := map[string]int{}
		for _, e := range entries {
			kind := strings.SplitN(e.Title, ":", 2)[0]
			titles[kind]++
			if e.TaskID != "" {
				if perTask[e.TaskID] == nil {
					perTask[e.TaskID] = map[string]int{}
				}
				perTask[e.TaskID][kind]++
			}
		}
		for kind, n := range wantTitles {
			if titles[kind] != n {
				return fmt.Errorf("journal has %d %q entries, want %d (%v)", titles[kind], kind, n, titles)
			}
		}
		for _, id := range leaves {
			if perTask[id]["Task Started"] != 1 || perTask[id]["Task Completed"] != 1 {
				return fmt.Errorf("%s journal: %v", id, perTask[id])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTaskClaimsAreAtomicAcrossSessions: many in-process sessions claim at
// once on one server, more often than there are claimable tasks. Every
// answer must be a success: a claim (found, claimed, in_progress, started
// by the claimer) or found:false once nothing is claimable; any error or
// other shape fails the test. The successful claims are exactly the
// claimable tasks, each claimed once. A start of a held task by another
// session is CONFLICT with started_by.
func TestTaskClaimsAreAtomicAcrossSessions(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	owner, _ := inProcess(t, deps, protocols[0])
	specID, _ := seedWorkSpec(t, owner)
	// Claimable in the seeded spec, from its construction: phase 1's 17
	// tasks except every third (each waits for the task two before it);
	// phase 1's verify nodes wait for its tasks, and phases 2 and 3 wait
	// for phase 1.
	claimable := map[string]bool{}
	for i := 1; i <= 17; i++ {
		if i%3 != 0 {
			claimable[fmt.Sprintf("task-1-%d", i)] = true
		}
	}
	const agents, attempts = 8, 3 // 24 claims for 12 tasks
	clients := make([]*client.Client, agents)
	for i := range clients {
		clients[i], _ = inProcess(t, deps, protocols[i%2])
	}
	var mu sync.Mutex
	claimedBy := map[string][]int{}
	notFound := 0
	var unexpected []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for k := 0; k < attempts; k++ {
				env := call(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
				d := data(env)
				mu.Lock()
				switch {
				case env["success"] != true:
					unexpected = append(unexpected, fmt.Sprintf("agent %d: %s %v", i, errorCode(env), d))
				case d["found"] == true && d["claimed"] == true && d["status"] == "in_progress":
					claimedBy[d["task_id"].(string)] = append(claimedBy[d["task_id"].(string)], i)
				case d["found"] == false && d["claimed"] == false && d["spec_complete"] == false:
					notFound++
				default:
					unexpected = append(unexpected, fmt.Sprintf("agent %d: %v", i, d))
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, u := range unexpected {
		t.Errorf("unexpected answer: %s", u)
	}
	for id, who := range claimedBy {
		if len(who) != 1 {
			t.Errorf("%s claimed %d times (agents %v)", id, len(who), who)
		}
		if !claimable[id] {
			t.Errorf("%s was claimed but is not claimable", id)
		}
	}
	if len(claimedBy) != len(claimable) || notFound != agents*attempts-len(claimable) {
		t.Errorf("%d tasks claimed and %d found:false answers; want the %d claimable tasks and %d found:false",
			len(claimedBy), notFound, len(claimable), agents*attempts-len(claimable))
	}
	// Every claim is in the store under its claimer's session.
	if err := deps.Specs.(*specstore.Repo).ReadSpec(context.Background(), specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		for id := range claimable {
			if n := sp.Node(id); n.Status != specs.StatusInProgress || n.StartedBy() == "" {
				return fmt.Errorf("%s: %s started_by %q", id, n.Status, n.StartedBy())
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Another session's start of a claimed task: CONFLICT naming the holder.
	env := call(t, owner, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": "task-1-1"})
	det, _ := data(env)["details"].(map[string]any)
	if errorCode(env) != "CONFLICT" || det["started_by"] == "" || det["started_at"] == "" {
		t.Fatalf("start of a held task: %v", env)
	}
	checkStoreInvariants(t, deps.Specs.(*specstore.Repo), specID)
}

func checkStoreInvariants(t *testing.T, st *specstore.Repo, specID string) {
	t.Helper()
	if err := st.ReadSpec(context.Background(), specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		if vs := specs.CheckInvariants(sp); len(vs) > 0 {
			return fmt.Errorf("invariants: %v", vs)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestVerificationExecuteOverStdio: the server option is a ceiling and the
// verification_execute flag (default off) decides under it: execute runs
// only with both; otherwise the answer is FEATURE_DISABLED.
func TestVerificationExecuteOverStdio(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	db := storetest.Open(t).Path() // never opened here: the binaries use it; storetest checks it at the end
	flagOn := writeFlagFile(t, map[string]string{"verification_execute": "on"})
	off := stdioOnStore(t, db, protocols[0])
	specID, _ := seedWorkSpec(t, off)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no option, default flags", nil},
		{"flag on without the option", []string{"--flags", flagOn}},
		{"option with the flag off (its default)", []string{"--enable-verification-execute"}},
	} {
		cl := off
		if c.args != nil {
			cl = stdioOnStore(t, db, protocols[0], c.args...)
		}
		env := call(t, cl, "verification", map[string]any{"action": "execute", "spec_id": specID, "verify_id": "verify-1-1"})
		if errorCode(env) != "FEATURE_DISABLED" || data(env)["details"].(map[string]any)["feature"] != "verification_execute" {
			t.Fatalf("execute, %s: %v", c.name, env)
		}
	}
	on := stdioOnStore(t, db, protocols[1], "--enable-verification-execute", "--flags", flagOn)
	taskOK(t, on, "task", map[string]any{"action": "update-metadata", "spec_id": specID, "task_id": "verify-1-1", "command": "pwd; exit 0"})
	// Without record (default false, as in foundry-mcp) the result is
	// answered, not stored.
	d := taskOK(t, on, "verification", map[string]any{"action": "execute", "spec_id": specID, "verify_id": "verify-1-1", "timeout_seconds": 30})
	if d["result"] != "PASSED" || d["recorded"] != false {
		t.Fatalf("execute without record: %v", d)
	}
	info := taskOK(t, on, "task", map[string]any{"action": "info", "spec_id": specID, "task_id": "verify-1-1"})
	if meta := info["task"].(map[string]any)["metadata"].(map[string]any); meta["last_result"] != nil {
		t.Fatalf("execute without record stored %v", meta["last_result"])
	}
	d = taskOK(t, on, "verification", map[string]any{"action": "execute", "spec_id": specID, "verify_id": "verify-1-1", "timeout_seconds": 30, "record": true})
	ws, _ := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(db)))
	if d["result"] != "PASSED" || strings.TrimSpace(d["output"].(string)) != ws || d["recorded"] != true {
		t.Fatalf("execute: %v (workspace %s)", d, ws)
	}
}

// TestStartConflictAcrossProcesses: two specd processes over stdio on one
// store are two sessions (mcp-go names every stdio session "stdio"; specd
// uses its per-process id instead), so the second start of a task is
// CONFLICT naming the first process.
func TestStartConflictAcrossProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	db := storetest.Open(t).Path()
	a := stdioOnStore(t, db, protocols[0])
	b := stdioOnStore(t, db, protocols[1])
	specID, _ := seedWorkSpec(t, a)
	d := taskOK(t, a, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": "task-1-1"})
	holder := d["task"].(map[string]any)["metadata"].(map[string]any)["started_by"].(string)
	env := call(t, b, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": "task-1-1"})
	det, _ := data(env)["details"].(map[string]any)
	if errorCode(env) != "CONFLICT" || det["started_by"] != holder || holder == "stdio" {
		t.Fatalf("second process's start: %v (holder %q)", env, holder)
	}
	if env := call(t, a, "task", map[string]any{"action": "start", "spec_id": specID, "task_id": "task-1-1"}); env["success"] != true {
		t.Fatalf("the holder's own second start must succeed with a warning: %v", env)
	}
}
