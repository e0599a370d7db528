package tests

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/store/storetest"
)

// TestAutonomySessionSurvivesKill9: the built server is killed with
// SIGKILL while it answers a step's report; a new server on the same store
// gets the same report again (the agent's retry after a lost answer) and
// the run goes on with no lost and no doubled step: the report was either
// stored with its step (the proof's record returns that same step) or not
// at all (it is consumed now), never half. Killed twice, at two steps; the
// run ends with exactly one step_consumed per step, in foundry's order.
func TestAutonomySessionSurvivesKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	ws := t.TempDir()
	clk := &steppedClock{wall: true}
	p := startStdio(t, ws)
	spec, ids := autonomySpec(t, p.c)
	sid := ok(t, p.c, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})["session_id"].(string)
	next := func(report map[string]any) map[string]any {
		args := map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}
		if report != nil {
			args["last_step_result"] = report
		}
		return ok(t, p.c, "task", args)
	}
	a := next(nil)
	var order []string
	for kills := 0; kills < 2; {
		st := stepOf(t, a)
		order = append(order, st["type"].(string))
		rep := reportOf(st, clk)
		if st["type"] == "run_fidelity_gate" {
			ok(t, p.c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
		}
		if st["type"] != "implement_task" {
			a = next(rep)
			continue
		}
		// Send the report and kill the server without waiting for its answer.
		sent := make(chan struct{})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			close(sent)
			_, _ = p.c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "task",
				Arguments: map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "last_step_result": rep}}})
		}()
		<-sent
		must(t, p.cmd.Process.Signal(syscall.SIGKILL))
		err := <-p.exited
		p.exited <- err
		kills++
		p = startStdio(t, ws)
		a = next(rep) // the agent's retry: the same report
		if again := next(rep); stepOf(t, again)["step_id"] != stepOf(t, a)["step_id"] {
			t.Fatalf("the same report got two different steps: %v / %v", again, a)
		}
	}
	for i := 0; i < 20; i++ {
		st := stepOf(t, a)
		order = append(order, st["type"].(string))
		if st["type"] == "complete_spec" {
			break
		}
		if st["type"] == "run_fidelity_gate" {
			ok(t, p.c, "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
		}
		a = next(reportOf(st, clk))
	}
	want := "implement_task implement_task execute_verification run_fidelity_gate implement_task execute_verification run_fidelity_gate complete_spec"
	if got := joinWords(order); got != want {
		t.Fatalf("step order after two kills:\n got %s\nwant %s", got, want)
	}
	consumed := map[string]int{}
	for _, e := range ok(t, p.c, "task", map[string]any{"action": "session-events", "spec_id": spec, "limit": 1000})["events"].([]any) {
		if ev := e.(map[string]any); ev["event_type"] == "step_consumed" {
			consumed[ev["step_id"].(string)]++
		}
	}
	if len(consumed) != 7 {
		t.Fatalf("%d steps consumed, want 7: %v", len(consumed), consumed)
	}
	for step, n := range consumed {
		if n != 1 {
			t.Fatalf("step %s consumed %d times", step, n)
		}
	}
	if d := ok(t, p.c, "task", map[string]any{"action": "progress", "spec_id": spec}); d["completed_tasks"] != 5.0 {
		t.Fatalf("progress after the run: %v (tasks %v)", d, ids)
	}
}

func joinWords(w []string) string {
	out := ""
	for i, s := range w {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}

// TestAutonomyTwoServersOneSession: two server processes on one bbolt
// store drive one session. Asked for the first step at once, exactly one
// issues it (the other answers STEP_RESULT_REQUIRED); every report, sent to
// both at once, gets the same next step from both (one consumes it, the
// other gets the proof's stored answer); the run ends with one
// step_consumed per step.
func TestAutonomyTwoServersOneSession(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary twice")
	}
	db := storetest.Open(t).Path()
	cs := []*client.Client{stdioOnStore(t, db, protocols[0]), stdioOnStore(t, db, protocols[1])}
	clk := &steppedClock{wall: true}
	spec, _ := autonomySpec(t, cs[0])
	sid := ok(t, cs[0], "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})["session_id"].(string)
	both := func(args map[string]any) [2]map[string]any {
		var out [2]map[string]any
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for try := 0; try < 50; try++ {
					env := call(t, c, "task", args)
					if errorCode(env) != "LOCK_TIMEOUT" {
						out[i] = env
						return
					}
				}
			}()
		}
		wg.Wait()
		return out
	}
	first := both(map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true})
	var a map[string]any
	codes := []string{errorCode(first[0]), errorCode(first[1])}
	switch {
	case codes[0] == "" && codes[1] == "STEP_RESULT_REQUIRED":
		a = data(first[0])
	case codes[1] == "" && codes[0] == "STEP_RESULT_REQUIRED":
		a = data(first[1])
	default:
		t.Fatalf("two first steps asked at once: %v / %v", first[0], first[1])
	}
	steps := 0
	for ; steps < 20; steps++ {
		st := stepOf(t, a)
		if st["type"] == "complete_spec" {
			break
		}
		if st["type"] == "run_fidelity_gate" {
			ok(t, cs[0], "review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": st["phase_id"], "step_id": st["step_id"]})
		}
		got := both(map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true, "last_step_result": reportOf(st, clk)})
		if got[0]["success"] != true || got[1]["success"] != true {
			t.Fatalf("the same report to both servers: %v / %v", got[0], got[1])
		}
		a = data(got[0])
		if stepOf(t, a)["step_id"] != stepOf(t, data(got[1]))["step_id"] {
			t.Fatalf("two servers issued two steps for one report: %v / %v", a, data(got[1]))
		}
	}
	consumed := map[string]int{}
	for _, e := range ok(t, cs[1], "task", map[string]any{"action": "session-events", "spec_id": spec, "limit": 1000})["events"].([]any) {
		if ev := e.(map[string]any); ev["event_type"] == "step_consumed" {
			consumed[ev["step_id"].(string)]++
		}
	}
	if steps != 7 || len(consumed) != 7 {
		t.Fatalf("%d steps reported, %d consumed: %v", steps, len(consumed), consumed)
	}
	for step, n := range consumed {
		if n != 1 {
			t.Fatalf("step %s consumed %d times", step, n)
		}
	}
}
