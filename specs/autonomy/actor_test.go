package autonomy

import (
	"encoding/json"
	"testing"
	"time"
)

// TestChainWrittenBeforeActorsVerifies: a ledger stored before events had
// an actor (bytes as the earlier code wrote them: a gate waiver and a
// lock bypass) still verifies, and appending an event with an actor after
// it keeps the chain valid: an event without an actor hashes as before.
func TestChainWrittenBeforeActorsVerifies(t *testing.T) {
	r := memRecords{
		auditKey(1):  []byte(`{"sequence":1,"timestamp":"2026-01-01T00:07:00Z","event_type":"gate_waived","spec_id":"auto-1","session_id":"sess_0123456789abcdef0123456789","action":"gate_waiver","metadata":{"phase_id":"phase-1","reason_code":"operator_override","reason_detail":"","role":"maintainer"},"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000","event_hash":"bd825191f8fc71b51bfcfcf21956041660d8f500ef266f8eecd83a573000e596"}`),
		auditKey(2):  []byte(`{"sequence":2,"timestamp":"2026-01-01T00:08:00Z","event_type":"bypass","spec_id":"auto-1","session_id":"sess_0123456789abcdef0123456789","action":"write_lock_bypass","metadata":{"action":"task update-metadata","bypass_reason":"operator fix"},"prev_hash":"bd825191f8fc71b51bfcfcf21956041660d8f500ef266f8eecd83a573000e596","event_hash":"eec7eb3c9efe8124554532e16289d4381a95f5cb7c1136b91522000cbf852a11"}`),
		keyAuditHead: []byte(`{"sequence":2,"hash":"eec7eb3c9efe8124554532e16289d4381a95f5cb7c1136b91522000cbf852a11"}`),
	}
	if rep, err := VerifyChain(r); err != nil || !rep.Valid || rep.TotalEntries != 2 {
		t.Fatalf("the chain written before actors: %+v %v", rep, err)
	}
	s := &Session{ID: "sess_0123456789abcdef0123456789", SpecID: "auto-1"}
	if err := RecordBypass(r, s, "lifecycle move", "hotfix", "ann/claude-code#3f9a1c2b7d4e", time.Date(2026, 1, 1, 0, 9, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if rep, err := VerifyChain(r); err != nil || !rep.Valid || rep.TotalEntries != 3 {
		t.Fatalf("the chain after an event with an actor: %+v %v", rep, err)
	}
	var e Event
	if err := json.Unmarshal(r[auditKey(3)], &e); err != nil || e.Actor != "ann/claude-code#3f9a1c2b7d4e" {
		t.Fatalf("event 3: %+v %v", e, err)
	}
	// The actor is hashed: changing who acted breaks the chain.
	e.Actor = "bob/claude-code#000000000000"
	raw, _ := json.Marshal(e)
	r[auditKey(3)] = raw
	if rep, _ := VerifyChain(r); rep.Valid || rep.DivergencePoint != 3 || rep.DivergenceType != "hash_mismatch" {
		t.Fatalf("a forged actor: %+v", rep)
	}
}

// TestWaiverRecordsItsActor: a gate waiver names who waived in its audit
// event and in the gate record.
func TestWaiverRecordsItsActor(t *testing.T) {
	no := false
	ru := newRun(t, StartInput{AutoRetryFidelityGate: &no})
	ans := ru.mustNext(nil)
	for ans.NextStep.Type != StepRunFidelityGate {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	s, _ := LoadSession(ru.r, ru.sid)
	g, err := GateWaiver(ru.r, s, "phase-1", "operator_override", "by hand", "maintainer", "max/cli#0123456789ab", ru.now)
	if err != nil {
		t.Fatal(err)
	}
	if g.WaivedBy != "max/cli#0123456789ab" {
		t.Fatalf("gate record: %+v", g)
	}
	evs, _, _ := Events(ru.r, ru.sid, 0, 1000)
	last := evs[len(evs)-1]
	if last.EventType != EventGateWaived || last.Actor != "max/cli#0123456789ab" {
		t.Fatalf("the waiver's event: %+v", last)
	}
	if rep, _ := VerifyChain(ru.r); !rep.Valid {
		t.Fatalf("chain: %+v", rep)
	}
}

// TestSessionDrivableBy: a session started under a key is driven under
// that key only; one started without a key, or a caller without one (stdio,
// the CLI), is not bound.
func TestSessionDrivableBy(t *testing.T) {
	for _, tc := range []struct {
		owner, caller string
		want          bool
	}{
		{"ann", "ann", true},
		{"ann", "bob", false},
		{"ann", "", true},
		{"", "bob", true},
		{"", "", true},
	} {
		s := &Session{OwnerKeyID: tc.owner}
		if got := s.DrivableBy(tc.caller); got != tc.want {
			t.Errorf("session of key %q driven by key %q: %v, want %v", tc.owner, tc.caller, got, tc.want)
		}
	}
}
