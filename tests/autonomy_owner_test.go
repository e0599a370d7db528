package tests

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// eventsByType indexes session-events' events by type (the last of each).
func eventsByType(all []any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range all {
		m := e.(map[string]any)
		out[m["event_type"].(string)] = m
	}
	return out
}

// TestSharedServerAutonomyAuditNamesTheActor: over HTTP with keys, the
// audit events of a gate waiver and of a write-lock bypass name who did
// it, as the holder identity claims record (key id / client # label),
// never the transport session id; an observer reads them in
// session-events, and the gate record names the waiver's actor too.
func TestSharedServerAutonomyAuditNamesTheActor(t *testing.T) {
	t.Parallel()
	s := startShared(t, []string{"ann:maintainer", "max:maintainer", "eve:observer"}, "--allow-gate-waiver", "--allow-lock-bypass")
	ann, mx, eve := s.client(t, "ann"), s.client(t, "max"), s.client(t, "eve")
	clk := &steppedClock{wall: true}
	spec, ids := autonomySpec(t, ann)
	sid := ok(t, ann, "task", map[string]any{"action": "session", "command": "start", "spec_id": spec})["session_id"].(string)
	a, _ := drive(t, ann, spec, sid, clk, ok(t, ann, "task", map[string]any{"action": "session-step", "command": "next", "spec_id": spec, "heartbeat": true}), "run_fidelity_gate")
	if stepOf(t, a)["phase_id"] != ids["p1"] {
		t.Fatalf("no gate step of phase one: %v", a)
	}
	ok(t, mx, "task", map[string]any{"action": "update-metadata", "spec_id": spec, "task_id": ids["t3"], "status_note": "x",
		"bypass_autonomy_lock": true, "bypass_reason": "operator fix"})
	w := ok(t, mx, "task", map[string]any{"action": "gate-waiver", "spec_id": spec, "phase_id": ids["p1"], "reason_code": "operator_override", "reason_detail": "reviewed by hand"})

	holder := regexp.MustCompile(`^max/specd-tests#[0-9a-f]{12}$`)
	if by, _ := w["gate"].(map[string]any)["waived_by"].(string); !holder.MatchString(by) {
		t.Errorf("the gate record's waived_by %q, want max/specd-tests#<label>: %v", by, w)
	}
	evs := ok(t, eve, "task", map[string]any{"action": "session-events", "spec_id": spec, "limit": 1000})["events"].([]any)
	byType := eventsByType(evs)
	for _, typ := range []string{"gate_waived", "bypass"} {
		e := byType[typ]
		if e == nil {
			t.Fatalf("no %s event: %v", typ, evs)
		}
		if actor, _ := e["actor"].(string); !holder.MatchString(actor) {
			t.Errorf("%s event's actor %q, want max/specd-tests#<label>: %v", typ, e["actor"], e)
		}
	}
	if actor, _ := byType["start"]["actor"].(string); !strings.HasPrefix(actor, "ann/specd-tests#") {
		t.Errorf("start event's actor %q, want ann's holder", actor)
	}
	raw, _ := json.Marshal(evs)
	for _, c := range map[string]interface{ GetSessionId() string }{"ann": ann, "max": mx} {
		if id := c.GetSessionId(); strings.Contains(string(raw), strings.TrimPrefix(id, "mcp-session-")) {
			t.Fatalf("session-events carry a transport session id %s:\n%s", id, raw)
		}
	}
}
