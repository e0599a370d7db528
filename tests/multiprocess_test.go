package tests

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// mpLedger is what the test saw the processes do, from their answers.
// mpSeed creates the contended spec the multi-process test and the fairness
// benchmark run on: two phases of 20 implementation tasks with distinct
// files, activated. It returns the spec id, a ledger that knows the task ids
// (and the verify ids, with verify), and the version after activation.
func mpSeed(tb testing.TB, c *client.Client, name string, verify bool) (string, *mpLedger, float64) {
	tb.Helper()
	specID := taskOK(tb, c, "authoring", map[string]any{"action": "spec-create", "name": name})["spec_id"].(string)
	l := &mpLedger{versions: map[float64]string{}, errors: map[string]int{}}
	for p := 1; p <= 2; p++ {
		var tasks []any
		for i := 0; i < 20; i++ {
			tasks = append(tasks, map[string]any{"title": fmt.Sprintf("T%d.%d", p, i), "file_path": fmt.Sprintf("p%d/%d.go", p, i), "task_category": "implementation"})
		}
		d := taskOK(tb, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": specID, "phase": map[string]any{"title": fmt.Sprint("P", p)},
			"tasks": tasks, "link_previous": false, "verify_scaffold": verify})
		ids := d["task_ids"].([]any)
		if verify {
			ids = append(ids, d["verify_ids"].([]any)...)
		}
		for _, x := range ids {
			l.known = append(l.known, x.(string))
		}
	}
	v := taskOK(tb, c, "lifecycle", map[string]any{"action": "activate", "spec_id": specID})["version"].(float64)
	return specID, l, v
}

// mpRun runs one mpWorker per client at once (ops operations each, worker i
// named proc<i> with seed i+1) and returns their errors, indexed like clients.
func mpRun(tb testing.TB, l *mpLedger, clients []*client.Client, specID string, ops int) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(clients))
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = mpWorker(tb, l, fmt.Sprintf("proc%d", i), c, specID, int64(i+1), ops)
		}()
	}
	wg.Wait()
	return errs
}

type mpLedger struct {
	mu                                 sync.Mutex
	known                              []string // task ids that exist (seeded + added)
	events                             []mpEvent
	versions                           map[float64]string
	claims, completes, completesFromIP int
	blocks, blocksFromIP, unblocks     int
	adds, depsAdded, lockTimeouts      int
	errors                             map[string]int
	clientMS, serverMS                 []float64
}

// mpCall calls and retries LOCK_TIMEOUT after its details.retry_after_ms,
// recording latencies. It returns the final envelope.
func (l *mpLedger) call(t testing.TB, c *client.Client, tool string, args map[string]any) map[string]any {
	for attempt := 0; ; attempt++ {
		start := time.Now()
		env := call(t, c, tool, args)
		ms := float64(time.Since(start).Microseconds()) / 1000
		server, _ := env["meta"].(map[string]any)["telemetry"].(map[string]any)["duration_ms"].(float64)
		l.mu.Lock()
		l.clientMS = append(l.clientMS, ms)
		l.serverMS = append(l.serverMS, server)
		if errorCode(env) == "LOCK_TIMEOUT" {
			l.lockTimeouts++
		}
		l.mu.Unlock()
		if errorCode(env) != "LOCK_TIMEOUT" || attempt == 20 {
			return env
		}
		wait, _ := data(env)["details"].(map[string]any)["retry_after_ms"].(float64)
		time.Sleep(time.Duration(wait) * time.Millisecond)
	}
}

// mpEvent is one successful, changing mutation as its answer reported it.
// The spec version orders events as the store serialised them.
type mpEvent struct {
	version    float64
	kind, task string
	proc, from string
}

// changed records the version a successful, changing mutation produced; a
// version seen twice would be a lost update.
func (l *mpLedger) changed(t testing.TB, env map[string]any, proc, kind, task string) {
	d := data(env)
	v := d["version"].(float64)
	from, _ := d["from"].(string)
	what := proc + " " + kind + " " + task
	l.mu.Lock()
	defer l.mu.Unlock()
	if prev, dup := l.versions[v]; dup {
		t.Errorf("version %v produced by both %s and %s: lost update", v, prev, what)
	}
	l.versions[v] = what
	l.events = append(l.events, mpEvent{version: v, kind: kind, task: task, proc: proc, from: from})
}

// replay applies the events in version order to the seeded tasks (all
// pending) and checks each against the state it found: a claim only of a
// pending task (never one in progress: no double start), a reported "from"
// equal to the replayed status, unblock only of a blocked task. It returns
// the replayed status of every task, to compare with the store.
func (l *mpLedger) replay(seeded []string) (map[string]specs.Status, []string) {
	sort.Slice(l.events, func(i, j int) bool { return l.events[i].version < l.events[j].version })
	state := map[string]specs.Status{}
	holder := map[string]string{}
	for _, id := range seeded {
		state[id] = specs.StatusPending
	}
	var bad []string
	for _, e := range l.events {
		cur, ok := state[e.task]
		if !ok && e.kind != "add" && e.kind != "dep" {
			bad = append(bad, fmt.Sprintf("v%v %s %s on unknown %s", e.version, e.proc, e.kind, e.task))
			continue
		}
		if e.from != "" && e.from != string(cur) {
			bad = append(bad, fmt.Sprintf("v%v %s %s %s: answered from %s, replay says %s", e.version, e.proc, e.kind, e.task, e.from, cur))
		}
		switch e.kind {
		case "claim":
			if cur != specs.StatusPending {
				bad = append(bad, fmt.Sprintf("v%v %s claimed %s while %s (held by %q): started twice", e.version, e.proc, e.task, cur, holder[e.task]))
			}
			state[e.task], holder[e.task] = specs.StatusInProgress, e.proc
		case "complete", "block":
			// Only the holder moves a task in progress (no force here).
			if cur == specs.StatusInProgress && holder[e.task] != e.proc {
				bad = append(bad, fmt.Sprintf("v%v %s %s %s held by %s", e.version, e.proc, e.kind, e.task, holder[e.task]))
			}
			state[e.task] = map[string]specs.Status{"complete": specs.StatusCompleted, "block": specs.StatusBlocked}[e.kind]
			if e.kind == "complete" {
				holder[e.task] = ""
			}
		case "unblock":
			if cur != specs.StatusBlocked {
				bad = append(bad, fmt.Sprintf("v%v %s unblocked %s while %s", e.version, e.proc, e.task, cur))
			}
			if h := holder[e.task]; h != "" && h != e.proc {
				bad = append(bad, fmt.Sprintf("v%v %s unblocked %s, blocked while %s held it", e.version, e.proc, e.task, h))
			}
			state[e.task], holder[e.task] = specs.StatusPending, "" // unblock releases the claim
		case "add":
			state[e.task] = specs.StatusPending
		}
	}
	return state, bad
}

// mpWorker runs ops mixed operations as process name on the spec.
func mpWorker(t testing.TB, l *mpLedger, name string, c *client.Client, specID string, seed int64, ops int) error {
	rng := rand.New(rand.NewSource(seed))
	var mine []string    // claimed by this process, not yet completed
	var blocked []string // blocked by this process, not yet unblocked
	pick := func() string {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.known[rng.Intn(len(l.known))]
	}
	allowed := func(env map[string]any, op string, codes ...string) error {
		if env["success"] == true {
			return nil
		}
		code := errorCode(env)
		for _, c := range codes {
			if c == code {
				l.mu.Lock()
				l.errors[op+":"+code]++
				l.mu.Unlock()
				return nil
			}
		}
		return fmt.Errorf("%s %s: unexpected %s: %v", name, op, code, data(env))
	}
	for i := 0; i < ops; i++ {
		r := rng.Intn(100)
		switch {
		case r < 35 || (r < 60 && len(mine) == 0):
			env := l.call(t, c, "task", map[string]any{"action": "next", "spec_id": specID, "claim": true})
			if err := allowed(env, "claim"); err != nil {
				return err
			}
			if d := data(env); d["found"] == true {
				id := d["task_id"].(string)
				l.mu.Lock()
				l.claims++
				l.mu.Unlock()
				l.changed(t, env, name, "claim", id)
				mine = append(mine, id)
			}
		case r < 60:
			k := rng.Intn(len(mine))
			id := mine[k]
			mine = append(mine[:k], mine[k+1:]...)
			env := l.call(t, c, "task", map[string]any{"action": "complete", "spec_id": specID, "task_id": id, "completion_note": name})
			// CONFLICT: after this process blocked and unblocked its task,
			// another one claimed it and now holds it.
			if err := allowed(env, "complete", "INVALID_TRANSITION", "TASK_BLOCKED", "CONFLICT"); err != nil {
				return err
			}
			if env["success"] == true {
				if _, warned := env["meta"].(map[string]any)["warnings"]; warned {
					// Already completed: after a block/unblock cycle another
					// process claimed and completed it. Nothing changed.
					if data(env)["from"] != "completed" {
						return fmt.Errorf("%s complete %s: warning without being completed: %v", name, id, env)
					}
					continue
				}
				l.mu.Lock()
				l.completes++
				if data(env)["from"] == "in_progress" {
					l.completesFromIP++
				}
				l.mu.Unlock()
				l.changed(t, env, name, "complete", id)
			}
		case r < 70:
			id := pick()
			if len(mine) > 0 && rng.Intn(2) == 0 {
				id = mine[rng.Intn(len(mine))]
			}
			env := l.call(t, c, "task", map[string]any{"action": "block", "spec_id": specID, "task_id": id, "reason": name + " waits", "blocker_type": "technical"})
			if err := allowed(env, "block", "INVALID_TRANSITION", "CONFLICT"); err != nil { // CONFLICT: another process holds it
				return err
			}
			if env["success"] == true {
				l.mu.Lock()
				l.blocks++
				if data(env)["from"] == "in_progress" {
					l.blocksFromIP++
				}
				l.mu.Unlock()
				l.changed(t, env, name, "block", id)
				blocked = append(blocked, id)
			}
		case r < 80:
			id := pick()
			if len(blocked) > 0 {
				k := rng.Intn(len(blocked))
				id = blocked[k]
				blocked = append(blocked[:k], blocked[k+1:]...)
			}
			env := l.call(t, c, "task", map[string]any{"action": "unblock", "spec_id": specID, "task_id": id, "resolution": name + " resolved"})
			if err := allowed(env, "unblock", "INVALID_TRANSITION", "CONFLICT"); err != nil { // CONFLICT: blocked while another process held it
				return err
			}
			if env["success"] == true {
				l.mu.Lock()
				l.unblocks++
				l.mu.Unlock()
				l.changed(t, env, name, "unblock", id)
			}
		case r < 90:
			parent := []string{"phase-1", "phase-2"}[rng.Intn(2)]
			env := l.call(t, c, "task", map[string]any{"action": "add", "spec_id": specID, "parent": parent, "title": fmt.Sprintf("%s added %d", name, i),
				"file_path": fmt.Sprintf("added/%s/%d.go", name, i)})
			if err := allowed(env, "add"); err != nil {
				return err
			}
			l.mu.Lock()
			l.adds++
			l.known = append(l.known, data(env)["task_id"].(string))
			l.mu.Unlock()
			l.changed(t, env, name, "add", data(env)["task_id"].(string))
		default:
			a, b := pick(), pick()
			env := l.call(t, c, "task", map[string]any{"action": "add-dependency", "spec_id": specID, "task_id": a, "target_id": b})
			if err := allowed(env, "add-dependency", "CIRCULAR_DEPENDENCY", "DUPLICATE_ENTRY", "SELF_REFERENCE"); err != nil {
				return err
			}
			if env["success"] == true {
				l.mu.Lock()
				l.depsAdded++
				l.mu.Unlock()
				l.changed(t, env, name, "dep", a+"→"+b)
			}
		}
	}
	return nil
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

// TestMultiProcessOneSpec: 4 specd processes (the built binary over stdio)
// on one store file run 50 mixed operations each on one spec at once —
// claim (next claim:true), complete, block, unblock, add, add-dependency.
// Then the store is opened in-test and every invariant and every count is
// checked against what the processes were told: no task claimed or started
// twice, no lost update (every changing mutation got its own version and
// the final version counts them all), status counts and journal entries
// match the successful operations. Client latency and the server's
// duration (telemetry.duration_ms, which includes the wait for the file
// lock) are reported for the same operations run by one process alone
// (baseline) and by four at once.
func TestMultiProcessOneSpec(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary 4 times")
	}
	const procs, ops = 4, 50
	db := storetest.Open(t).Path() // opened in-test only after the processes are done
	clients := make([]*client.Client, procs)
	for i := range clients {
		clients[i] = stdioOnStore(t, db, protocols[i%2])
	}
	specID, l, v0 := mpSeed(t, clients[0], "contended", true)
	seededIDs := append([]string(nil), l.known...)
	seeded := len(seededIDs)

	// Baseline: one process alone, on a copy of the same workload.
	base := &mpLedger{versions: map[float64]string{}, errors: map[string]int{}}
	baseSpec := taskOK(t, clients[0], "authoring", map[string]any{"action": "spec-create", "name": "baseline"})["spec_id"].(string)
	d := taskOK(t, clients[0], "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": baseSpec, "phase": map[string]any{"title": "P1"},
		"tasks": []any{map[string]any{"title": "a", "file_path": "a.go", "task_category": "implementation"}, map[string]any{"title": "b", "file_path": "b.go", "task_category": "implementation"}}})
	taskOK(t, clients[0], "authoring", map[string]any{"action": "phase-add", "spec_id": baseSpec, "title": "P2"})
	for _, x := range d["task_ids"].([]any) {
		base.known = append(base.known, x.(string))
	}
	taskOK(t, clients[0], "lifecycle", map[string]any{"action": "activate", "spec_id": baseSpec})
	if err := mpWorker(t, base, "base", clients[0], baseSpec, 99, ops); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	errs := mpRun(t, l, clients, specID, ops)
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		_ = c.Close()
	}
	report := fmt.Sprintf("4 processes × %d ops in %s; claims %d, completes %d, blocks %d, unblocks %d, adds %d, dependencies %d, LOCK_TIMEOUT retries %d; expected errors %v\n"+
		"latency ms (client round trip | server duration incl. lock wait): baseline 1 process p50 %.2f | %.2f, p99 %.2f | %.2f; contended p50 %.2f | %.2f, p99 %.2f | %.2f, max %.2f | %.2f",
		ops, elapsed.Round(time.Millisecond), l.claims, l.completes, l.blocks, l.unblocks, l.adds, l.depsAdded, l.lockTimeouts, l.errors,
		percentile(base.clientMS, 50), percentile(base.serverMS, 50), percentile(base.clientMS, 99), percentile(base.serverMS, 99),
		percentile(l.clientMS, 50), percentile(l.serverMS, 50), percentile(l.clientMS, 99), percentile(l.serverMS, 99),
		percentile(l.clientMS, 100), percentile(l.serverMS, 100))
	t.Log(report)
	if p := os.Getenv("SPECD_MP_REPORT"); p != "" {
		_ = os.WriteFile(p, []byte(report+"\n"), 0o644)
	}
	if l.claims == 0 || l.completes == 0 || l.blocks == 0 || l.unblocks == 0 || l.adds == 0 || l.depsAdded == 0 {
		t.Fatalf("the mix did not exercise every operation: %s", report)
	}

	st, err := store.Open(store.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = specstore.New(st, nil).ReadSpec(context.Background(), specID, func(sp *specs.Spec, j specs.JournalReader) error {
		var problems []string
		bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
		for _, v := range specs.CheckInvariants(sp) {
			bad("invariant %s", v)
		}
		if got, want := sp.Header.Version, int64(v0)+int64(len(l.versions)); got != want {
			bad("version %d, want %d + %d changing mutations = %d", got, int64(v0), len(l.versions), want)
		}
		status := map[specs.Status]int{}
		leaves := 0
		for n := range specs.ExecutionOrder(sp, specs.RootID) {
			if n.IsWorkLeaf() {
				leaves++
				status[n.Status]++
			}
		}
		if leaves != seeded+l.adds || sp.Header.TotalTasks != leaves {
			bad("%d leaves (header %d), want %d seeded + %d added", leaves, sp.Header.TotalTasks, seeded, l.adds)
		}
		if status[specs.StatusCompleted] != l.completes || sp.Header.CompletedTasks != l.completes {
			bad("%d completed (header %d), want %d", status[specs.StatusCompleted], sp.Header.CompletedTasks, l.completes)
		}
		if status[specs.StatusBlocked] != l.blocks-l.unblocks {
			bad("%d blocked, want %d blocks − %d unblocks", status[specs.StatusBlocked], l.blocks, l.unblocks)
		}
		if want := l.claims - l.completesFromIP - l.blocksFromIP; status[specs.StatusInProgress] != want {
			bad("%d in progress, want %d claims − %d completed − %d blocked from in_progress", status[specs.StatusInProgress], l.claims, l.completesFromIP, l.blocksFromIP)
		}
		replayed, replayProblems := l.replay(seededIDs)
		problems = append(problems, replayProblems...)
		for id, want := range replayed {
			if n := sp.Node(id); n == nil || n.Status != want {
				bad("%s: stored %v, replay of the answers says %s", id, n.Status, want)
			}
		}
		entries, _, err := j.Entries(0, 100_000, nil)
		if err != nil {
			return err
		}
		kinds := map[string]int{}
		started := map[string]int{}
		for _, e := range entries {
			kind := strings.SplitN(e.Title, ":", 2)[0]
			kinds[kind]++
			if kind == "Task Started" {
				started[e.TaskID]++
			}
		}
		claimsOf := map[string]int{}
		for _, e := range l.events {
			if e.kind == "claim" {
				claimsOf[e.task]++
			}
		}
		for kind, want := range map[string]int{"Task Started": l.claims, "Task Completed": l.completes, "Task Blocked": l.blocks, "Task Unblocked": l.unblocks} {
			if kinds[kind] != want {
				bad("journal: %d %q, want %d", kinds[kind], kind, want)
			}
		}
		for id, n := range started {
			if n != claimsOf[id] {
				bad("%s started %d times in the journal, claimed %d times", id, n, claimsOf[id])
			}
			if who := sp.Node(id).StartedBy(); sp.Node(id).Status == specs.StatusInProgress && who == "" {
				bad("%s in progress without started_by", id)
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%d problems:\n%s", len(problems), strings.Join(problems, "\n"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMultiProcessFairness runs N specd processes (the built binary
// over stdio; 1, 4 and 8) on one store file, each doing 200 mixed
// operations (mpWorker's claim/complete/block/unblock/add/add-dependency
// mix) on one spec at once, and reports the client round-trip latency of
// every call — which includes the wait for the store's file lock — as
// p50-ms, p99-ms and max-ms, plus LOCK_TIMEOUT retries. Run it with
// -benchtime=1x; one iteration is the whole scenario.
func BenchmarkMultiProcessFairness(b *testing.B) {
	const ops = 200
	for _, procs := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("procs=%d", procs), func(b *testing.B) {
			var all []float64
			timeouts := 0
			b.StopTimer()
			for range b.N {
				db := filepath.Join(b.TempDir(), ".specd", "specd.db")
				clients := make([]*client.Client, procs)
				for i := range clients {
					clients[i] = stdioOnStore(b, db, protocols[i%2])
				}
				specID, l, _ := mpSeed(b, clients[0], "fairness", false)
				b.StartTimer()
				errs := mpRun(b, l, clients, specID, ops)
				b.StopTimer()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, c := range clients {
					_ = c.Close()
				}
				all = append(all, l.clientMS...)
				timeouts += l.lockTimeouts
			}
			b.ReportMetric(percentile(all, 50), "p50-ms")
			b.ReportMetric(percentile(all, 99), "p99-ms")
			b.ReportMetric(percentile(all, 100), "max-ms")
			b.ReportMetric(float64(timeouts), "lock-timeouts")
		})
	}
}
