package tests

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestSharedServerAutonomySessionBelongsToItsKey: over HTTP with keys, an
// autonomy session is driven only under the key that started it (any MCP
// session of that key) or by an admin key: another maintainer key's
// session-step (next, report, replay, heartbeat), session pause, resume,
// rebase, end, reset, start with force over it and review fidelity-gate
// are FORBIDDEN naming the session, its key and holder, with task session
// status (which shows them) as a recovery that runs; the session is
// unchanged. Reads (status, session-events, list) stay open; the admin
// key ends it, after which the other key starts its own.
func TestSharedServerAutonomySessionBelongsToItsKey(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer", "bob:maintainer", "root:admin"})
	ann, bob, root := s.client(t, "ann"), s.client(t, "bob"), s.client(t, "root")
	clk := &steppedClock{wall: true}
	spec, ids := autonomySpec(t, ann)
	started := ok(t, ann, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec, "idempotency_key": "ann-run"})
	sid := started["session_id"].(string)
	holder, _ := started["started_by"].(string)
	if !regexp.MustCompile(`^ann/specd-tests#[0-9a-f]{12}$`).MatchString(holder) || started["owner_key_id"] != "ann" {
		t.Fatalf("start names no owner (started_by %q, owner_key_id %v): %v", holder, started["owner_key_id"], started)
	}
	next := map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}
	st := stepOf(t, ok(t, ann, "task", next))
	version := ok(t, ann, "task", map[string]any{"action": "session", "command": "status", "spec_id": spec})["state_version"]

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"task", next},
		{"task", map[string]any{"action": "session-step", "command": "report", "spec_id": spec, "step_id": st["step_id"], "step_type": st["type"],
			"task_id": st["task_id"], "step_proof": st["step_proof"], "outcome": "success"}},
		{"task", map[string]any{"action": "session-step", "command": "replay", "spec_id": spec}},
		{"task", map[string]any{"action": "session-step", "command": "heartbeat", "spec_id": spec, "session_id": sid}},
		{"task", map[string]any{"action": "session", "command": "pause", "spec_id": spec}},
		{"task", map[string]any{"action": "session", "command": "resume", "spec_id": spec, "force": true}},
		{"task", map[string]any{"action": "session", "command": "rebase", "spec_id": spec}},
		{"task", map[string]any{"action": "session", "command": "end", "spec_id": spec, "reason_code": "operator_override"}},
		{"task", map[string]any{"action": "session", "command": "reset", "spec_id": spec, "reason_code": "operator_override"}},
		{"task", map[string]any{"action": "session", "command": "start", "spec_id": spec, "force": true}},
		{"task", map[string]any{"action": "session", "command": "start", "spec_id": spec, "idempotency_key": "ann-run"}},
		{"review", map[string]any{"action": "fidelity-gate", "spec_id": spec, "session_id": sid, "phase_id": ids["p1"], "step_id": st["step_id"]}},
	} {
		env := call(t, bob, tc.tool, tc.args)
		d := failsWith(t, bob, "FORBIDDEN", tc.tool, tc.args)
		det, _ := d["details"].(map[string]any)
		if det["session_id"] != sid || det["owner_key_id"] != "ann" || det["started_by"] != holder || det["key_id"] != "bob" {
			t.Errorf("%s %v by bob: details %v", tc.tool, tc.args, det)
		}
		rec, _ := d["recovery"].(map[string]any)
		if args, _ := rec["suggested_args"].(map[string]any); rec["suggested_tool"] != "task" || args["action"] != "session" || args["command"] != "status" || args["session_id"] != sid {
			t.Errorf("%s %v by bob: recovery %v, want task session status of %s", tc.tool, tc.args, rec, sid)
		}
		if msg, _ := env["error"].(string); !strings.Contains(msg, holder) || !strings.Contains(msg, "key ann") {
			t.Errorf("%s %v by bob: the message names no holder: %q", tc.tool, tc.args, msg)
		}
	}
	// Reads stay open; the session did not move.
	status := ok(t, bob, "task", map[string]any{"action": "session", "command": "status", "spec_id": spec})
	if status["state_version"] != version || status["status"] != "running" || status["started_by"] != holder {
		t.Fatalf("ann's session after bob's calls: %v", status)
	}
	ok(t, bob, "task", map[string]any{"action": "session-events", "spec_id": spec})
	ok(t, bob, "task", map[string]any{"action": "session", "command": "list", "spec_id": spec})

	// Another MCP session of ann's key drives it (a reconnected agent).
	ann2 := s.client(t, "ann")
	ok(t, ann2, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true, "last_step_result": reportOf(st, clk)})
	ok(t, ann, "task", map[string]any{"action": "session", "command": "pause", "spec_id": spec})
	ok(t, ann, "task", map[string]any{"action": "session", "command": "resume", "spec_id": spec})
	stepOf(t, ok(t, ann, "task", map[string]any{"action": "session-step", "command": "replay", "spec_id": spec}))

	// Without force or ann's idempotency key, a start is the usual refusal.
	failsWith(t, bob, "SPEC_SESSION_EXISTS", "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})

	// An admin key may drive any key's session: the operator ends it, and
	// the end event names the operator.
	ok(t, root, "task", map[string]any{"action": "session", "command": "end", "spec_id": spec, "session_id": sid, "reason_code": "operator_override"})
	evs := ok(t, bob, "task", map[string]any{"action": "session-events", "spec_id": spec, "session_id": sid, "limit": 1000})["events"].([]any)
	if end := eventsByType(evs)["end"]; end == nil || !regexp.MustCompile(`^root/specd-tests#[0-9a-f]{12}$`).MatchString(fmt.Sprint(end["actor"])) {
		t.Fatalf("the end event does not name the admin who ended it: %v", end)
	}
	mine := ok(t, bob, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})
	if mine["owner_key_id"] != "bob" {
		t.Fatalf("bob's own session: %v", mine)
	}
	ok(t, bob, "task", next)
}

// TestSharedServerAutonomyKeylessUnbound: on a keyless (loopback) server,
// as on stdio, sessions are not bound: another MCP session drives the
// session one started, as before keys bound them.
func TestSharedServerAutonomyKeylessUnbound(t *testing.T) {
	t.Parallel()
	s := startShared(t, nil)
	one, two := s.client(t, ""), s.client(t, "")
	spec, _ := autonomySpec(t, one)
	started := ok(t, one, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})
	if _, bound := started["owner_key_id"]; bound {
		t.Fatalf("a keyless session names an owner key: %v", started)
	}
	stepOf(t, ok(t, two, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}))
	ok(t, two, "task", map[string]any{"action": "session", "command": "pause", "spec_id": spec})
	ok(t, one, "task", map[string]any{"action": "session", "command": "end", "spec_id": spec, "reason_code": "operator_override"})
}
