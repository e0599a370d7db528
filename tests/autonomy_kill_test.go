package tests

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
