package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs/autonomy"
	"github.com/specd/specd/specs/specstore"
)

// steppedClock is a settable clock for the runtime (heartbeat staleness
// without waiting): every reading advances it one second.
type steppedClock struct {
	mu   sync.Mutex
	t    time.Time
	wall bool // read the wall clock (a built server's)
}

func (c *steppedClock) now() time.Time {
	if c.wall {
		return time.Now().UTC()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func (c *steppedClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// autonomySpec makes a spec of two phases: phase one has two tasks (the
// second blocked by the first) and a verify node running "go test ./one";
// phase two one task and a verify node running "go test ./two". It returns
// the spec id and the node ids by name.
func autonomySpec(t *testing.T, c *client.Client) (string, map[string]string) {
	t.Helper()
	spec := ok(t, c, "authoring", map[string]any{"action": "spec-create", "name": "autonomy run"})["spec_id"].(string)
	ids := map[string]string{}
	for i, ph := range []struct {
		title string
		tasks []string
		cmd   string
	}{{"Phase one", []string{"t1", "t2"}, "go test ./one"}, {"Phase two", []string{"t3"}, "go test ./two"}} {
		var tasks []any
		for _, name := range ph.tasks {
			tasks = append(tasks, map[string]any{"title": "Task " + name, "task_category": "implementation", "description": "do " + name})
		}
		d := ok(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": spec, "phase": map[string]any{"title": ph.title}, "tasks": tasks})
		ids[fmt.Sprintf("p%d", i+1)] = d["phase_id"].(string)
		for j, id := range d["task_ids"].([]any) {
			ids[ph.tasks[j]] = id.(string)
		}
		v := ok(t, c, "task", map[string]any{"action": "add", "spec_id": spec, "parent": d["phase_id"], "title": "Tests " + ph.title,
			"task_type": "verify", "verification_type": "run-tests", "command": ph.cmd})
		ids[fmt.Sprintf("v%d", i+1)] = v["task_id"].(string)
	}
	ok(t, c, "task", map[string]any{"action": "add-dependency", "spec_id": spec, "task_id": ids["t1"], "target_id": ids["t2"]})
	return spec, ids
}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// stepOf is the answer's next_step.
func stepOf(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	st, _ := d["next_step"].(map[string]any)
	if st == nil {
		t.Fatalf("no next_step: %v", d)
	}
	return st
}

// reportOf is the success report of step st (a receipt of cmd for a
// verification, the gate_attempt_id for a gate).
func reportOf(st map[string]any, clk *steppedClock) map[string]any {
	r := map[string]any{"step_id": st["step_id"], "step_type": st["type"], "outcome": "success", "step_proof": st["step_proof"],
		"note": "done", "files_touched": []any{"a.go"}}
	for _, k := range []string{"task_id", "phase_id", "gate_attempt_id"} {
		if v, ok := st[k]; ok {
			r[k] = v
		}
	}
	if st["type"] == autonomy.StepExecuteVerification {
		cmd := st["verification_command"].(string)
		r["verification_receipt"] = map[string]any{"command_hash": sha(cmd), "exit_code": 0, "output_digest": sha("PASS\n"),
			"issued_at": clk.now().Format(time.RFC3339Nano), "step_id": st["step_id"]}
	}
	return r
}

// TestAutonomySessionWholeRun drives a whole autonomy session of a
// two-phase spec with verify nodes through a real MCP client: start (one
// session per spec, idempotency), the exact step order, reports with
// proofs and receipts (missing, mismatched, conflicting, replayed), the
// write lock, pause/resume, heartbeat and its staleness, the evidence gate,
// the audit events and their hash chain, to complete_spec.
func TestAutonomySessionWholeRun(t *testing.T) {
	t.Parallel()
	st0 := storetest.Open(t)
	deps := depsOn(st0, nil)
	clk := &steppedClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	deps.Runtime.Now = clk.now
	c, _ := inProcess(t, deps, protocols[0])
	spec, ids := autonomySpec(t, c)
	task := func(args map[string]any) map[string]any { args["spec_id"] = spec; return call(t, c, "task", args) }
	okTask := func(args map[string]any) map[string]any {
		args["spec_id"] = spec
		d := ok(t, c, "task", args)
		if a := args["action"].(string); strings.HasPrefix(a, "session") {
			checkActionAnswer(t, c, "task", a, d)
		}
		return d
	}
	failTask := func(code string, args map[string]any) map[string]any {
		args["spec_id"] = spec
		return failsWith(t, c, code, "task", args)
	}

	// Legacy names are refused as foundry refuses them, naming the canonical call.
	d := failTask("INVALID_FORMAT", map[string]any{"action": "session-start"})
	if d["details"].(map[string]any)["replacement"] != `task(action="session", command="start")` {
		t.Fatalf("legacy refusal: %v", d)
	}

	s := okTask(map[string]any{"action": "session", "command": "start", "idempotency_key": "run-1"})
	sid := s["session_id"].(string)
	lim := s["limits"].(map[string]any)
	if s["status"] != "running" || s["gate_policy"] != "strict" || lim["max_tasks_per_session"] != 100.0 || lim["max_consecutive_errors"] != 3.0 ||
		lim["context_threshold_pct"] != 85.0 || lim["heartbeat_stale_minutes"] != 10.0 || lim["heartbeat_grace_minutes"] != 5.0 ||
		lim["step_stale_minutes"] != 60.0 || lim["max_fidelity_review_cycles_per_phase"] != 3.0 || s["write_lock_enforced"] != true {
		t.Fatalf("start: %v", s)
	}
	d = failTask("SPEC_SESSION_EXISTS", map[string]any{"action": "session", "command": "start"})
	if d["details"].(map[string]any)["existing_session_id"] != sid {
		t.Fatalf("SPEC_SESSION_EXISTS: %v", d)
	}
	if again := okTask(map[string]any{"action": "session", "command": "start", "idempotency_key": "run-1"}); again["session_id"] != sid || again["reused"] != true {
		t.Fatalf("idempotent start: %v", again)
	}

	next := func(report map[string]any) map[string]any {
		t.Helper()
		args := map[string]any{"action": "session-step", "command": "next", "heartbeat": true}
		if report != nil {
			args["last_step_result"] = report
		}
		return okTask(args)
	}
	var order []string
	seq := func(st map[string]any) {
		id, _ := st["task_id"].(string)
		if id == "" {
			id, _ = st["phase_id"].(string)
		}
		order = append(order, st["type"].(string)+":"+id)
	}

	a := next(nil)
	st := stepOf(t, a)
	seq(st)
	if st["type"] != "implement_task" || st["task_id"] != ids["t1"] || len(st["step_proof"].(string)) != 64 || a["instructions"] == nil {
		t.Fatalf("first step: %v", a)
	}

	// The write lock: task and lifecycle mutations outside the session are refused.
	d = failTask("AUTONOMY_WRITE_LOCK_ACTIVE", map[string]any{"action": "complete", "task_id": ids["t1"]})
	if d["loop_signal"] != "blocked_runtime" {
		t.Errorf("lock refusal without loop_signal: %v", d)
	}
	failsWith(t, c, "AUTONOMY_WRITE_LOCK_ACTIVE", "lifecycle", map[string]any{"action": "activate", "spec_id": spec})
	failTask("AUTONOMY_WRITE_LOCK_ACTIVE", map[string]any{"action": "update-metadata", "task_id": ids["t2"], "title": "x",
		"bypass_autonomy_lock": true, "bypass_reason": "hotfix"}) // the server does not allow bypasses

	// A step is outstanding: its report is required, with its proof.
	failTask("STEP_RESULT_REQUIRED", map[string]any{"action": "session-step", "command": "next"})
	rep := reportOf(st, clk)
	noProof := copyMap(rep)
	delete(noProof, "step_proof")
	failTask("STEP_PROOF_MISSING", map[string]any{"action": "session-step", "command": "next", "last_step_result": noProof})
	wrong := copyMap(rep)
	wrong["step_proof"] = strings.Repeat("0", 64)
	if d := failTask("STEP_PROOF_MISMATCH", map[string]any{"action": "session-step", "command": "next", "last_step_result": wrong}); d["loop_signal"] != "blocked_runtime" || d["recommended_actions"] == nil {
		t.Errorf("proof refusal: %v", d)
	}

	// report: the same fields at the top level (foundry's report drops most of them).
	args := copyMap(rep)
	args["action"], args["command"] = "session-step", "report"
	a = okTask(args)
	st2 := stepOf(t, a)
	seq(st2)
	events := func() []any {
		return okTask(map[string]any{"action": "session-events", "limit": 1000})["events"].([]any)
	}
	n := len(events())
	// The same report again: the same answer, no second effect.
	args2 := copyMap(rep)
	args2["action"], args2["command"] = "session-step", "report"
	b := okTask(args2)
	if stepOf(t, b)["step_id"] != st2["step_id"] || stepOf(t, b)["step_proof"] != st2["step_proof"] || len(events()) != n {
		t.Fatalf("replayed report: %v (events %d → %d)", b, n, len(events()))
	}
	other := copyMap(rep)
	other["note"] = "another payload"
	failTask("STEP_PROOF_CONFLICT", map[string]any{"action": "session-step", "command": "next", "last_step_result": other})
	if r := okTask(map[string]any{"action": "session-step", "command": "replay"}); stepOf(t, r)["step_id"] != st2["step_id"] {
		t.Fatalf("replay: %v", r)
	}

	// Pause and resume keep the outstanding step.
	okTask(map[string]any{"action": "session", "command": "pause"})
	if p := next(nil); p["status"] != "paused" || p["loop_signal"] != "paused_needs_attention" {
		t.Fatalf("next while paused: %v", p)
	}
	failTask("INVALID_STATE_TRANSITION", map[string]any{"action": "session", "command": "pause"})
	okTask(map[string]any{"action": "session", "command": "resume"})
	a = next(reportOf(st2, clk))
	st = stepOf(t, a)
	seq(st)
	if st["type"] != "execute_verification" || st["verification_command"] != "go test ./one" {
		t.Fatalf("verification step: %v (reported %v)", a, st2)
	}
	rep = reportOf(st, clk)
	noReceipt := copyMap(rep)
	delete(noReceipt, "verification_receipt")
	failTask("VERIFICATION_RECEIPT_MISSING", map[string]any{"action": "session-step", "command": "next", "last_step_result": noReceipt})
	bad := copyMap(rep)
	bad["verification_receipt"] = copyMap(rep["verification_receipt"].(map[string]any))
	bad["verification_receipt"].(map[string]any)["command_hash"] = sha("true")
	failTask("VERIFICATION_RECEIPT_INVALID", map[string]any{"action": "session-step", "command": "next", "last_step_result": bad})
	hb := okTask(map[string]any{"action": "session-step", "command": "heartbeat", "context_usage_pct": 40})
	if hb["context_usage_pct"] != 40.0 || hb["last_heartbeat_at"] == "" {
		t.Fatalf("heartbeat: %v", hb)
	}
	a = next(rep)
	st = stepOf(t, a)
	seq(st)

	// The gate: a verdict from evidence with its integrity checksum.
	g := ok(t, c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
	checkActionAnswer(t, c, "review", "fidelity-gate", g)
	if g["verdict"] != "pass" || g["gate_passed_preview"] != true || len(g["integrity_checksum"].(string)) != 64 || g["gate_attempt_id"] != st["gate_attempt_id"] {
		t.Fatalf("fidelity gate: %v", g)
	}
	a = next(reportOf(st, clk))
	if fmt.Sprint(a["satisfied_gates"]) != fmt.Sprintf("[%s]", ids["p1"]) {
		t.Fatalf("after the gate: %v", a)
	}
	// A dead agent's heartbeat goes stale: the next call pauses the session.
	st = stepOf(t, a)
	seq(st)
	clk.advance(11 * time.Minute)
	if s := okTask(map[string]any{"action": "session", "command": "status"}); s["effective_status"] != "paused" || s["stale_reason"] != "heartbeat_stale" {
		t.Fatalf("stale status: %v", s)
	}
	p := okTask(map[string]any{"action": "session-step", "command": "next", "last_step_result": reportOf(st, clk)})
	if stepOf(t, p)["reason"] != "heartbeat_stale" || p["loop_signal"] != "paused_needs_attention" || p["recommended_actions"] == nil {
		t.Fatalf("heartbeat staleness: %v", p)
	}
	okTask(map[string]any{"action": "session", "command": "resume"})
	a = next(nil)
	for i := 0; i < 10; i++ {
		st = stepOf(t, a)
		seq(st)
		if st["type"] == "complete_spec" {
			break
		}
		if st["type"] == "run_fidelity_gate" {
			ok(t, c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
		}
		a = next(reportOf(st, clk))
	}
	want := []string{"implement_task:" + ids["t1"], "implement_task:" + ids["t2"], "execute_verification:" + ids["v1"], "run_fidelity_gate:" + ids["p1"],
		"implement_task:" + ids["t3"], "execute_verification:" + ids["v2"], "run_fidelity_gate:" + ids["p2"], "complete_spec:"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("step order:\n got %v\nwant %v", order, want)
	}
	if a["status"] != "completed" || a["loop_signal"] != "spec_complete" {
		t.Fatalf("end: %v", a)
	}
	for _, name := range []string{"t1", "t2", "t3", "v1", "v2"} {
		if n := okTask(map[string]any{"action": "info", "task_id": ids[name]})["task"].(map[string]any); n["status"] != "completed" {
			t.Errorf("%s is %v after the run", name, n["status"])
		}
	}
	// The lock went with the session.
	okTask(map[string]any{"action": "update-metadata", "task_id": ids["t1"], "status_note": "after the run"})

	// The audit events: paged by a cursor bound to the session, one chain.
	var all []any
	cursor, first := "", ""
	for i := 0; i < 100; i++ {
		args := map[string]any{"action": "session-events", "session_id": sid, "limit": 4}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := task(args)
		if env["success"] != true {
			t.Fatalf("events page: %v", env)
		}
		all = append(all, data(env)["events"].([]any)...)
		cursor, _ = env["meta"].(map[string]any)["pagination"].(map[string]any)["cursor"].(string)
		if cursor == "" {
			break
		}
		if i == 0 {
			first = cursor
		}
	}
	prev := strings.Repeat("0", 64)
	types := map[string]int{}
	for i, x := range all {
		e := x.(map[string]any)
		au := e["audit"].(map[string]any)
		ev := autonomy.Event{EventBody: autonomy.EventBody{Sequence: int64(au["sequence"].(float64)), Timestamp: e["timestamp"].(string), EventType: e["event_type"].(string), SpecID: spec,
			SessionID: sid, Action: e["action"].(string), PrevHash: au["prev_hash"].(string)}}
		ev.StepID, _ = e["step_id"].(string)
		ev.PhaseID, _ = e["phase_id"].(string)
		ev.TaskID, _ = e["task_id"].(string)
		ev.Actor, _ = e["actor"].(string)
		ev.Metadata, _ = e["metadata"].(map[string]any)
		if ev.Sequence != int64(i+1) || ev.PrevHash != prev || ev.Hash() != au["event_hash"] {
			t.Fatalf("event %d does not chain: %v", i+1, e)
		}
		prev = au["event_hash"].(string)
		types[ev.EventType]++
	}
	for _, typ := range []string{"start", "step_issued", "step_consumed", "pause", "resume", "gate_passed", "spec_complete"} {
		if types[typ] == 0 {
			t.Errorf("no %s event in %v", typ, types)
		}
	}
	if types["step_consumed"] != 7 {
		t.Errorf("%d steps consumed, want 7 (a replay or a refusal consumed one): %v", types["step_consumed"], types)
	}
	// A second session: the first one's cursor is not its own.
	s2 := okTask(map[string]any{"action": "session", "command": "start"})["session_id"].(string)
	failTask("INVALID_CURSOR", map[string]any{"action": "session-events", "session_id": s2, "cursor": first})
	okTask(map[string]any{"action": "session", "command": "end", "reason_code": "testing"})
	if l := okTask(map[string]any{"action": "session", "command": "list"}); l["count"] != 2.0 {
		t.Fatalf("list: %v", l)
	}
	// specd check (bbolt's page checks, then the spec checks, the audit
	// chains among them), while the recorder may still write.
	if findings, err := st0.Verify(context.Background(), specstore.New(st0, nil).CheckSpecs); err != nil || len(findings) != 0 {
		t.Fatalf("specd check: %v %v", findings, err)
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// drive reports every step of the session of spec (running the gate of
// each gate step) until a step of type until or a pause; it returns the
// answer that issued it and the step types issued on the way.
func drive(t *testing.T, c *client.Client, spec, sid string, clk *steppedClock, a map[string]any, until string) (map[string]any, []string) {
	t.Helper()
	var seen []string
	for i := 0; i < 20; i++ {
		st := stepOf(t, a)
		seen = append(seen, st["type"].(string))
		if st["type"] == until || st["type"] == "pause" {
			return a, seen
		}
		if st["type"] == "run_fidelity_gate" {
			ok(t, c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
		}
		a = ok(t, c, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true, "last_step_result": reportOf(st, clk)})
	}
	t.Fatalf("no %s step after 20 steps: %v", until, seen)
	return nil, nil
}

// TestAutonomyStopOnPhaseCompletion: with stop_on_phase_completion the
// session pauses once with phase_complete after phase one's gate, and the
// resume reaches phase two (foundry pauses again after every resume) and
// the end of the spec.
func TestAutonomyStopOnPhaseCompletion(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	clk := &steppedClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	deps.Runtime.Now = clk.now
	c, _ := inProcess(t, deps, protocols[0])
	spec, ids := autonomySpec(t, c)
	sid := ok(t, c, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec, "stop_on_phase_completion": true})["session_id"].(string)
	next := map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}
	a, seen := drive(t, c, spec, sid, clk, ok(t, c, "task", next), "complete_spec")
	if st := stepOf(t, a); st["type"] != "pause" || st["reason"] != "phase_complete" || a["loop_signal"] != "phase_complete" || a["status"] != "paused" {
		t.Fatalf("after phase one (%v): %v", seen, a)
	}
	if fmt.Sprint(a["satisfied_gates"]) != fmt.Sprintf("[%s]", ids["p1"]) {
		t.Fatalf("phase one's gate: %v", a["satisfied_gates"])
	}
	if again := ok(t, c, "task", next); again["loop_signal"] != "phase_complete" || stepOf(t, again)["step_id"] != stepOf(t, a)["step_id"] {
		t.Fatalf("next while paused is not the same pause: %v", again)
	}
	ok(t, c, "task", map[string]any{"action": "session", "command": "resume", "spec_id": spec})
	a = ok(t, c, "task", next)
	if st := stepOf(t, a); st["type"] != "implement_task" || st["task_id"] != ids["t3"] {
		t.Fatalf("after resume: %v", a)
	}
	a, seen = drive(t, c, spec, sid, clk, a, "complete_spec")
	if a["loop_signal"] != "spec_complete" || strings.Join(seen, " ") != "implement_task execute_verification run_fidelity_gate complete_spec" {
		t.Fatalf("phase two (%v): %v", seen, a)
	}
}

// TestAutonomyManualGateWaiverAndBypass: a manual gate pauses for review
// and its acknowledgement is recorded; a maintainer's gate waiver (with
// phase_id) closes a phase; a write-lock bypass needs the server setting
// and a reason and is audited; waivers are off unless enabled.
func TestAutonomyManualGateWaiverAndBypass(t *testing.T) {
	t.Parallel()
	off := newDeps(t, false)
	cOff, _ := inProcess(t, off, protocols[0])
	specOff, _ := autonomySpec(t, cOff)
	ok(t, cOff, "task", map[string]any{"action": "session", "command": "start", "spec_id": specOff})
	if env := call(t, cOff, "task", map[string]any{"action": "gate-waiver", "spec_id": specOff, "phase_id": "phase-1", "reason_code": "testing"}); errorCode(env) != "GATE_WAIVER_DISABLED" {
		t.Fatalf("waiver on a server without --allow-gate-waiver: %v", env)
	}

	deps := newDeps(t, false)
	deps.AllowGateWaiver, deps.AllowLockBypass = true, true
	clk := &steppedClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	deps.Runtime.Now = clk.now
	c, _ := inProcess(t, deps, protocols[0])
	spec, ids := autonomySpec(t, c)
	sid := ok(t, c, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec, "gate_policy": "manual"})["session_id"].(string)
	next := map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}
	a, _ := drive(t, c, spec, sid, clk, ok(t, c, "task", next), "run_fidelity_gate")
	gate := stepOf(t, a)
	ok(t, c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": gate["phase_id"], "step_id": gate["step_id"]})
	a = ok(t, c, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "last_step_result": reportOf(gate, clk)})
	if st := stepOf(t, a); st["reason"] != "gate_review_required" || a["loop_signal"] != "paused_needs_attention" {
		t.Fatalf("manual gate: %v", a)
	}
	// The refusal's recovery is the acknowledgement itself: failsWith runs it.
	d := failsWith(t, c, "MANUAL_GATE_ACK_REQUIRED", "task", map[string]any{"action": "session", "command": "resume", "spec_id": spec})
	if d["details"].(map[string]any)["gate_attempt_id"] != gate["gate_attempt_id"] {
		t.Fatalf("ack refusal: %v", d)
	}
	s := ok(t, c, "task", map[string]any{"action": "session", "command": "status", "spec_id": spec})
	g := s["phase_gates"].(map[string]any)[ids["p1"]].(map[string]any)
	if s["status"] != "running" || g["status"] != "passed" || g["acknowledged_at"] == nil {
		t.Fatalf("the acknowledgement is not recorded: %v", s)
	}

	// Bypass: the setting is on; a reason is still needed; it is audited.
	failsWith(t, c, "AUTONOMY_WRITE_LOCK_ACTIVE", "task", map[string]any{"action": "update-metadata", "spec_id": spec, "task_id": ids["t3"],
		"status_note": "x", "bypass_autonomy_lock": true})
	ok(t, c, "task", map[string]any{"action": "update-metadata", "spec_id": spec, "task_id": ids["t3"], "status_note": "x",
		"bypass_autonomy_lock": true, "bypass_reason": "operator fix"})

	a = ok(t, c, "task", next)
	a, _ = drive(t, c, spec, sid, clk, a, "run_fidelity_gate")
	gate2 := stepOf(t, a)
	failsWith(t, c, "GATE_NOT_FOUND", "task", map[string]any{"action": "gate-waiver", "spec_id": spec, "phase_id": "phase-9", "reason_code": "operator_override"})
	w := ok(t, c, "task", map[string]any{"action": "gate-waiver", "spec_id": spec, "phase_id": gate2["phase_id"], "reason_code": "operator_override", "reason_detail": "reviewed by hand"})
	checkActionAnswer(t, c, "task", "gate-waiver", w)
	if w["gate"].(map[string]any)["status"] != "waived" || w["phase_id"] != ids["p2"] {
		t.Fatalf("waiver: %v", w)
	}
	rep := reportOf(gate2, clk)
	rep["outcome"] = "skipped"
	a = ok(t, c, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "last_step_result": rep})
	if a["loop_signal"] != "spec_complete" {
		t.Fatalf("after the waiver: %v", a)
	}
	types := map[string]bool{}
	for _, e := range ok(t, c, "task", map[string]any{"action": "session-events", "spec_id": spec, "limit": 1000})["events"].([]any) {
		types[e.(map[string]any)["event_type"].(string)] = true
	}
	if !types["bypass"] || !types["gate_waived"] || !types["gate_passed"] {
		t.Fatalf("events: %v", types)
	}
}

// TestAutonomyRebaseAndReset: a phase added under a running session fails
// it with SPEC_REBASE_REQUIRED at the next step (the report is not
// consumed); the refusal's recovery, rebase, re-plans it and resume goes on
// with the same report; a session failed again is reset (deleted) with a
// reason code, which frees the spec's write lock.
func TestAutonomyRebaseAndReset(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	clk := &steppedClock{t: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}
	deps.Runtime.Now = clk.now
	c, _ := inProcess(t, deps, protocols[0])
	spec, ids := autonomySpec(t, c)
	ok(t, c, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})
	next := func(rep map[string]any) map[string]any {
		return call(t, c, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true, "last_step_result": rep})
	}
	st := stepOf(t, ok(t, c, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}))
	ok(t, c, "authoring", map[string]any{"action": "phase-add", "spec_id": spec, "title": "Phase three"})
	rep := reportOf(st, clk)
	env := next(rep)
	if errorCode(env) != "SPEC_REBASE_REQUIRED" || data(env)["loop_signal"] != "failed" {
		t.Fatalf("structure change: %v", env)
	}
	rec := data(env)["recovery"].(map[string]any)
	rb := ok(t, c, rec["suggested_tool"].(string), rec["suggested_args"].(map[string]any))
	if rb["rebase_result"].(map[string]any)["result"] != "success" || rb["status"] != "paused" {
		t.Fatalf("rebase: %v", rb)
	}
	ok(t, c, "task", map[string]any{"action": "session", "command": "resume", "spec_id": spec})
	env = next(rep)
	if env["success"] != true || stepOf(t, data(env))["task_id"] != ids["t2"] {
		t.Fatalf("the report after the rebase: %v", env)
	}
	ok(t, c, "authoring", map[string]any{"action": "phase-add", "spec_id": spec, "title": "Phase four"})
	if env := next(reportOf(stepOf(t, data(env)), clk)); errorCode(env) != "SPEC_REBASE_REQUIRED" {
		t.Fatalf("second structure change: %v", env)
	}
	failsWith(t, c, "AUTONOMY_WRITE_LOCK_ACTIVE", "task", map[string]any{"action": "complete", "spec_id": spec, "task_id": ids["t2"]})
	r := ok(t, c, "task", map[string]any{"action": "session", "command": "reset", "spec_id": spec, "reason_code": "corrupt_state"})
	if r["deleted"] != true || r["status"] != "failed" {
		t.Fatalf("reset: %v", r)
	}
	failsWith(t, c, "NO_ACTIVE_SESSION", "task", map[string]any{"action": "session", "command": "status", "spec_id": spec})
	ok(t, c, "task", map[string]any{"action": "complete", "spec_id": spec, "task_id": ids["t2"]})
}

// checkActionAnswer validates data against the answer_schema server schema
// publishes for tool's action (asked with action_name: the task tool's
// whole description is over the budget and comes without answer schemas).
func checkActionAnswer(t *testing.T, c *client.Client, tool, action string, data any) {
	t.Helper()
	env := call(t, c, "server", map[string]any{"action": "schema", "tool_name": tool, "action_name": action})
	raw, _ := json.Marshal(env["data"])
	var desc struct {
		Actions []struct {
			Name         string             `json:"name"`
			AnswerSchema *jsonschema.Schema `json:"answer_schema"`
		} `json:"actions"`
	}
	must(t, json.Unmarshal(raw, &desc))
	if len(desc.Actions) != 1 || desc.Actions[0].AnswerSchema == nil {
		t.Fatalf("server schema %s %s: no answer_schema: %s", tool, action, raw)
	}
	rs, err := desc.Actions[0].AnswerSchema.Resolve(nil)
	must(t, err)
	if err := rs.Validate(data); err != nil {
		b, _ := json.Marshal(data)
		t.Errorf("%s %s: answer does not match its answer_schema: %v\nanswer: %.2000s", tool, action, err, b)
	}
}

// TestAutonomyLockCoversRollbackAndImport: while a session runs, neither
// a rollback (which rewrites the task statuses the session relies on) nor
// an import that replaces the spec (which would also drop the session and
// its audit) goes through; the completed task stays completed.
func TestAutonomyLockCoversRollbackAndImport(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, _ := inProcess(t, deps, protocols[0])
	spec, ids := autonomySpec(t, c)
	ok(t, c, "task", map[string]any{"action": "start", "spec_id": spec, "task_id": ids["t1"]})
	ok(t, c, "task", map[string]any{"action": "complete", "spec_id": spec, "task_id": ids["t1"]})
	ok(t, c, "spec", map[string]any{"action": "export", "spec_id": spec, "path": "exported"})
	ok(t, c, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})

	refusal := failsWith(t, c, "AUTONOMY_WRITE_LOCK_ACTIVE", "authoring", map[string]any{"action": "spec-rollback", "spec_id": spec, "version": 1})
	if rec, _ := refusal["recovery"].(map[string]any); rec["suggested_tool"] != "task" {
		t.Fatalf("the rollback's lock refusal names no way on: %v", refusal)
	} else {
		ok(t, c, "task", rec["suggested_args"].(map[string]any)) // the session's status, as given
	}
	d := ok(t, c, "spec", map[string]any{"action": "import", "path": "exported", "overwrite": true})
	files, _ := d["files"].([]any)
	if len(files) != 1 {
		t.Fatalf("import: %v", d)
	}
	f := files[0].(map[string]any)
	if f["outcome"] != "failed" || !strings.Contains(fmt.Sprint(f["reason"]), "AUTONOMY_WRITE_LOCK_ACTIVE") {
		t.Fatalf("import over a locked spec: %v", f)
	}
	if got := taskStatus(t, c, spec, ids["t1"]); got != "completed" {
		t.Fatalf("%s is %s after the refused rollback and import, want completed", ids["t1"], got)
	}
	ok(t, c, "task", map[string]any{"action": "session", "command": "status", "spec_id": spec})
}
