package autonomy

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// memRecords is Records over a map, for the domain's unit tests (the
// stores' implementations run the same operations in the conformance
// suite and the end-to-end tests).
type memRecords map[string][]byte

func (m memRecords) Get(k string) []byte { return m[k] }
func (m memRecords) Put(k string, v []byte) error {
	m[k] = append([]byte(nil), v...)
	return nil
}
func (m memRecords) Delete(k string) error { delete(m, k); return nil }
func (m memRecords) Scan(prefix, after string, fn func(string, []byte) bool) error {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !fn(k, m[k]) {
			break
		}
	}
	return nil
}

type memJournal struct{ entries []specs.JournalEntry }

func (j *memJournal) Append(e specs.JournalEntry) { j.entries = append(j.entries, e) }
func (j *memJournal) Entries(uint64, int, func(*specs.JournalEntry) bool) ([]specs.JournalEntry, bool, error) {
	return j.entries, false, nil
}
func (j *memJournal) Records(string) specs.Records { return nil }
func (j *memJournal) TaskEntries(string, uint64, int, func(*specs.JournalEntry) bool) ([]specs.JournalEntry, bool, error) {
	return nil, false, nil
}

const twoPhaseSpec = `{
  "spec_id": "auto-1", "title": "Autonomy", "generated": "2026-01-01T00:00:00Z", "last_updated": "2026-01-01T00:00:00Z",
  "metadata": {}, "status": "pending",
  "hierarchy": {
    "spec-root": {"type": "spec", "title": "Autonomy", "status": "pending", "parent": null, "children": ["phase-1", "phase-2"], "total_tasks": 5, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
    "phase-1": {"type": "phase", "title": "One", "status": "pending", "parent": "spec-root", "children": ["task-1-1", "task-1-2", "verify-1-1"], "total_tasks": 3, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
    "task-1-1": {"type": "task", "title": "First", "status": "pending", "parent": "phase-1", "children": [], "total_tasks": 1, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": ["task-1-2"], "blocked_by": [], "depends": []}},
    "task-1-2": {"type": "task", "title": "Second", "status": "pending", "parent": "phase-1", "children": [], "total_tasks": 1, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": ["task-1-1"], "depends": []}},
    "verify-1-1": {"type": "verify", "title": "Tests one", "status": "pending", "parent": "phase-1", "children": [], "total_tasks": 1, "completed_tasks": 0, "metadata": {"verification_type": "run-tests", "command": "go test ./one"}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
    "phase-2": {"type": "phase", "title": "Two", "status": "pending", "parent": "spec-root", "children": ["task-2-1", "verify-2-1"], "total_tasks": 2, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
    "task-2-1": {"type": "task", "title": "Third", "status": "pending", "parent": "phase-2", "children": [], "total_tasks": 1, "completed_tasks": 0, "metadata": {}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}},
    "verify-2-1": {"type": "verify", "title": "Tests two", "status": "pending", "parent": "phase-2", "children": [], "total_tasks": 1, "completed_tasks": 0, "metadata": {"verification_type": "run-tests", "command": "go test ./two"}, "dependencies": {"blocks": [], "blocked_by": [], "depends": []}}
  },
  "journal": []
}`

// run is one session over the fixture spec with a stepping clock.
type run struct {
	t   *testing.T
	sp  *specs.Spec
	r   memRecords
	j   *memJournal
	now time.Time
	sid string
}

func newRun(t *testing.T, in StartInput) *run {
	t.Helper()
	doc, err := specs.ParseDocument([]byte(twoPhaseSpec))
	if err != nil {
		t.Fatal(err)
	}
	ru := &run{t: t, sp: specs.FromDocument(*doc), r: memRecords{}, j: &memJournal{}, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ru.sp.Clock = func() time.Time { return ru.now }
	s, reused, err := Start(ru.sp, ru.r, in, ru.now)
	if err != nil || reused {
		t.Fatalf("start: %v %v", reused, err)
	}
	ru.sid = s.ID
	return ru
}

func (ru *run) tick() { ru.now = ru.now.Add(time.Minute) }

func (ru *run) next(res *StepResult) (Outcome, error) {
	ru.t.Helper()
	ru.tick()
	return Next(ru.sp, ru.j, ru.r, NextInput{SessionID: ru.sid, Result: res, Heartbeat: true}, ru.now)
}

func (ru *run) mustNext(res *StepResult) StepAnswer {
	ru.t.Helper()
	o, err := ru.next(res)
	if err != nil {
		ru.t.Fatalf("next: %v", err)
	}
	if o.Refusal != nil {
		ru.t.Fatalf("next refused: %v", o.Refusal)
	}
	return o.Answer
}

// report is the success report of st (with a passing receipt for a
// verification, after running the gate for a gate step).
func (ru *run) report(st *NextStep) *StepResult {
	ru.t.Helper()
	res := &StepResult{StepID: st.StepID, StepType: st.Type, Outcome: OutcomeSuccess, TaskID: st.TaskID, PhaseID: st.PhaseID, StepProof: st.StepProof}
	switch st.Type {
	case StepExecuteVerification:
		res.VerificationReceipt = &Receipt{CommandHash: SHA256Hex(st.Command), ExitCode: 0, OutputDigest: SHA256Hex("ok"), IssuedAt: stamp(ru.now), StepID: st.StepID}
	case StepRunFidelityGate:
		g, err := FidelityGate(ru.sp, ru.r, ru.sid, st.PhaseID, st.StepID, ru.now)
		if err != nil {
			ru.t.Fatalf("fidelity gate: %v", err)
		}
		res.GateAttemptID = g.GateAttemptID
	}
	return res
}

func code(t *testing.T, err error, want string) *core.Error {
	t.Helper()
	e := core.AsError(err)
	if err == nil || e.Code != want {
		t.Fatalf("want %s, got %v", want, err)
	}
	return e
}

func stepSeq(ans StepAnswer) string {
	if ans.NextStep == nil {
		return "<none>"
	}
	id := ans.NextStep.TaskID
	if id == "" {
		id = ans.NextStep.PhaseID
	}
	if ans.NextStep.Reason != "" {
		id = ans.NextStep.Reason
	}
	return ans.NextStep.Type + ":" + id
}

func TestWholeRunStepOrderProofsAndChain(t *testing.T) {
	ru := newRun(t, StartInput{})
	var got []string
	ans := ru.mustNext(nil)
	for i := 0; i < 20 && ans.NextStep != nil && ans.NextStep.Type != StepCompleteSpec; i++ {
		got = append(got, stepSeq(ans))
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	got = append(got, stepSeq(ans))
	want := []string{"implement_task:task-1-1", "implement_task:task-1-2", "execute_verification:verify-1-1", "run_fidelity_gate:phase-1",
		"implement_task:task-2-1", "execute_verification:verify-2-1", "run_fidelity_gate:phase-2", "complete_spec:"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("step order:\n got %v\nwant %v", got, want)
	}
	if ans.Status != StatusCompleted || ans.LoopSignal != SignalSpecComplete {
		t.Fatalf("end: %+v", ans)
	}
	for _, id := range []string{"task-1-1", "task-1-2", "verify-1-1", "task-2-1", "verify-2-1"} {
		if n := ru.sp.Node(id); n.Status != specs.StatusCompleted {
			t.Errorf("%s is %s after the run", id, n.Status)
		}
	}
	if n := ru.sp.Node("verify-2-1"); lastResult(n) != "PASSED" {
		t.Errorf("verify-2-1 last result %q", lastResult(n))
	}
	rep, err := VerifyChain(ru.r)
	if err != nil || !rep.Valid || rep.TotalEntries < 16 {
		t.Fatalf("chain: %+v %v", rep, err)
	}
	if _, err := ActiveSession(ru.r); err != nil {
		t.Fatal(err)
	}
	if s, _ := ActiveSession(ru.r); s != nil {
		t.Fatalf("a completed session stays active: %s", s.ID)
	}
}

func TestProofReplayConflictMissingMismatch(t *testing.T) {
	ru := newRun(t, StartInput{})
	first := ru.mustNext(nil)
	rep := ru.report(first.NextStep)

	noProof := *rep
	noProof.StepProof = ""
	_, err := ru.next(&noProof)
	code(t, err, errcode.StepProofMissing)
	wrong := *rep
	wrong.StepProof = strings.Repeat("a", 64)
	_, err = ru.next(&wrong)
	code(t, err, errcode.StepProofMismatch)

	second := ru.mustNext(rep)
	journal := len(ru.j.entries)
	events, _, _ := Events(ru.r, ru.sid, 0, 1000)
	again := ru.mustNext(rep)
	if again.NextStep.StepID != second.NextStep.StepID || again.NextStep.StepProof != second.NextStep.StepProof {
		t.Fatalf("the same report again got another answer: %+v vs %+v", again.NextStep, second.NextStep)
	}
	events2, _, _ := Events(ru.r, ru.sid, 0, 1000)
	if len(ru.j.entries) != journal || len(events2) != len(events) {
		t.Fatalf("the replayed report had an effect: journal %d→%d, events %d→%d", journal, len(ru.j.entries), len(events), len(events2))
	}
	other := *rep
	other.Note = "a different payload"
	_, err = ru.next(&other)
	code(t, err, errcode.StepProofConflict)
	if ans, _ := Replay(ru.r, ru.sid); ans.NextStep.StepID != second.NextStep.StepID {
		t.Fatalf("replay: %+v", ans.NextStep)
	}
	_, err = ru.next(nil)
	code(t, err, errcode.StepResultRequired)
}

func TestVerificationReceiptRequiredAndBound(t *testing.T) {
	ru := newRun(t, StartInput{})
	ans := ru.mustNext(nil)
	ans = ru.mustNext(ru.report(ans.NextStep))
	ans = ru.mustNext(ru.report(ans.NextStep))
	if ans.NextStep.Type != StepExecuteVerification || ans.NextStep.Command != "go test ./one" {
		t.Fatalf("want the verification step, got %+v", ans.NextStep)
	}
	rep := ru.report(ans.NextStep)
	missing := *rep
	missing.VerificationReceipt = nil
	_, err := ru.next(&missing)
	code(t, err, errcode.VerificationReceiptMissing)
	other := *rep
	rc := *rep.VerificationReceipt
	rc.CommandHash = SHA256Hex("true")
	other.VerificationReceipt = &rc
	_, err = ru.next(&other)
	code(t, err, errcode.VerificationReceiptInvalid)
	nonzero := *rep
	rc2 := *rep.VerificationReceipt
	rc2.ExitCode = 1
	nonzero.VerificationReceipt = &rc2
	_, err = ru.next(&nonzero)
	code(t, err, errcode.VerificationReceiptInvalid)
	// A failure with its receipt is recorded FAILED and the verification is issued again.
	nonzero.Outcome = OutcomeFailure
	ans = ru.mustNext(&nonzero)
	if ans.NextStep.Type != StepExecuteVerification || lastResult(ru.sp.Node("verify-1-1")) != "FAILED" {
		t.Fatalf("after a failed verification: %+v, last %q", ans.NextStep, lastResult(ru.sp.Node("verify-1-1")))
	}
	ans = ru.mustNext(ru.report(ans.NextStep))
	if ans.NextStep.Type != StepRunFidelityGate {
		t.Fatalf("want the gate, got %+v", ans.NextStep)
	}
}

func TestGateVerdictFromEvidenceAndChecksum(t *testing.T) {
	ru := newRun(t, StartInput{})
	ans := ru.mustNext(nil)
	for ans.NextStep.Type != StepRunFidelityGate {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	s, _ := LoadSession(ru.r, ru.sid)
	if v, f := PhaseVerdict(ru.sp, s, "phase-1"); v != VerdictPass || len(f) != 0 {
		t.Fatalf("verdict %s %v", v, f)
	}
	// Evidence: a receipt for another command fails the gate.
	bad := s.Receipts["verify-1-1"]
	bad.CommandHash = SHA256Hex("echo ok")
	s.Receipts["verify-1-1"] = bad
	if v, f := PhaseVerdict(ru.sp, s, "phase-1"); v != VerdictFail || f[0].Type != "receipt_command_mismatch" {
		t.Fatalf("verdict with a foreign receipt: %s %v", v, f)
	}
	if v, _ := PhaseVerdict(ru.sp, s, "phase-2"); v != VerdictFail {
		t.Fatalf("an undone phase passes: %s", v)
	}
	rep := ru.report(ans.NextStep)
	// Tampered evidence does not verify.
	s, _ = LoadSession(ru.r, ru.sid)
	s.PendingGateEvidence.Verdict = VerdictPass + "x"
	raw, _ := json.Marshal(s)
	saved := ru.r[sessionKey(ru.sid)]
	ru.r[sessionKey(ru.sid)] = raw
	_, err := ru.next(rep)
	code(t, err, errcode.GateIntegrityChecksum)
	ru.r[sessionKey(ru.sid)] = saved
	ans = ru.mustNext(rep)
	if ans.NextStep.Type != StepImplementTask || ans.NextStep.TaskID != "task-2-1" || len(ans.SatisfiedGates) != 1 {
		t.Fatalf("after the gate: %+v %v", ans.NextStep, ans.SatisfiedGates)
	}
}

func TestStopOnPhaseCompletionReachesTheNextPhase(t *testing.T) {
	yes := true
	ru := newRun(t, StartInput{StopOnPhaseCompletion: &yes})
	ans := ru.mustNext(nil)
	for ans.NextStep.Type != StepPause {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	if ans.NextStep.Reason != PausePhaseComplete || ans.LoopSignal != SignalPhaseComplete {
		t.Fatalf("want phase_complete, got %+v %s", ans.NextStep, ans.LoopSignal)
	}
	s, _ := LoadSession(ru.r, ru.sid)
	if err := Resume(ru.sp, ru.r, s, ResumeInput{}, ru.now); err != nil {
		t.Fatal(err)
	}
	ans = ru.mustNext(nil)
	if ans.NextStep.Type != StepImplementTask || ans.NextStep.TaskID != "task-2-1" {
		t.Fatalf("after resume: %+v (foundry pauses on phase_complete again)", ans.NextStep)
	}
	for ans.NextStep.Type != StepCompleteSpec && ans.NextStep.Type != StepPause {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	if ans.LoopSignal != SignalSpecComplete {
		t.Fatalf("the last phase ends the spec: %+v %s", ans.NextStep, ans.LoopSignal)
	}
}

func TestManualGateAckIsRecorded(t *testing.T) {
	ru := newRun(t, StartInput{GatePolicy: GateManual})
	ans := ru.mustNext(nil)
	for ans.NextStep.Type != StepRunFidelityGate {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	rep := ru.report(ans.NextStep)
	ans = ru.mustNext(rep)
	if ans.NextStep.Reason != PauseGateReviewRequired {
		t.Fatalf("manual gate: %+v", ans.NextStep)
	}
	s, _ := LoadSession(ru.r, ru.sid)
	code(t, Resume(ru.sp, ru.r, s, ResumeInput{}, ru.now), errcode.ManualGateAckRequired)
	code(t, Resume(ru.sp, ru.r, s, ResumeInput{AcknowledgeGateReview: true, AcknowledgedGateAttemptID: "gate_x"}, ru.now), errcode.InvalidGateAck)
	if err := Resume(ru.sp, ru.r, s, ResumeInput{AcknowledgeGateReview: true, AcknowledgedGateAttemptID: rep.GateAttemptID}, ru.now); err != nil {
		t.Fatal(err)
	}
	s, _ = LoadSession(ru.r, ru.sid)
	if g := s.PhaseGates["phase-1"]; g.Status != GatePassed || g.AcknowledgedAt == "" {
		t.Fatalf("the acknowledgement is not recorded: %+v", g)
	}
	if ans = ru.mustNext(nil); ans.NextStep.TaskID != "task-2-1" {
		t.Fatalf("after the acknowledgement: %+v", ans.NextStep)
	}
}

func TestSessionExistsIdempotencyForceAndLock(t *testing.T) {
	ru := newRun(t, StartInput{IdempotencyKey: "k1"})
	_, _, err := Start(ru.sp, ru.r, StartInput{}, ru.now)
	e := code(t, err, errcode.SpecSessionExists)
	if e.Details["existing_session_id"] != ru.sid {
		t.Fatalf("details %v", e.Details)
	}
	s, reused, err := Start(ru.sp, ru.r, StartInput{IdempotencyKey: "k1"}, ru.now)
	if err != nil || !reused || s.ID != ru.sid {
		t.Fatalf("idempotent start: %v %v", reused, err)
	}
	if l, _ := WriteLock(ru.r); l == nil || l.ID != ru.sid {
		t.Fatal("a running session holds no write lock")
	}
	s2, _, err := Start(ru.sp, ru.r, StartInput{Force: true}, ru.now)
	if err != nil || s2.ID == ru.sid {
		t.Fatalf("force: %v", err)
	}
	old, _ := LoadSession(ru.r, ru.sid)
	if old.Status != StatusEnded {
		t.Fatalf("the replaced session is %s", old.Status)
	}
	if err := End(ru.r, s2, "operator_override", "", "", ru.now); err != nil {
		t.Fatal(err)
	}
	if l, _ := WriteLock(ru.r); l != nil {
		t.Fatal("an ended session still locks the spec")
	}
}

func TestHeartbeatStalePausesAndStructureChangeFails(t *testing.T) {
	ru := newRun(t, StartInput{})
	ans := ru.mustNext(nil)
	ru.now = ru.now.Add(11 * time.Minute)
	s, _ := LoadSession(ru.r, ru.sid)
	if v := View(ru.sp, s, ru.now); v.EffectiveStatus != StatusPaused || v.StaleReason != PauseHeartbeatStale {
		t.Fatalf("effective status %+v", v)
	}
	o, err := Next(ru.sp, ru.j, ru.r, NextInput{SessionID: ru.sid, Result: ru.report(ans.NextStep)}, ru.now)
	if err != nil || o.Answer.NextStep.Reason != PauseHeartbeatStale || o.Answer.LoopSignal != SignalPausedNeedsAttention {
		t.Fatalf("stale heartbeat: %+v %v", o.Answer, err)
	}
	s, _ = LoadSession(ru.r, ru.sid)
	if err := Resume(ru.sp, ru.r, s, ResumeInput{}, ru.now); err != nil {
		t.Fatal(err)
	}
	// The structure changes under the session: the next step fails it.
	e := ru.sp.Edit("verify-2-1")
	e.SetMeta("command", "go test ./other")
	o, err = ru.next(nil)
	if err != nil || o.Refusal == nil || o.Refusal.Code != errcode.SpecRebaseRequired || o.Answer.Status != StatusFailed {
		t.Fatalf("structure change: %+v %v", o, err)
	}
	s, _ = LoadSession(ru.r, ru.sid)
	if _, err := Rebase(ru.sp, ru.r, s, false, ru.now); err != nil {
		t.Fatal(err)
	}
	s, _ = LoadSession(ru.r, ru.sid)
	if err := Resume(ru.sp, ru.r, s, ResumeInput{}, ru.now); err != nil {
		t.Fatal(err)
	}
	if ans := ru.mustNext(nil); ans.NextStep.Type != StepImplementTask {
		t.Fatalf("after rebase: %+v", ans.NextStep)
	}
}

func TestAuditChainDetectsTampering(t *testing.T) {
	ru := newRun(t, StartInput{})
	ans := ru.mustNext(nil)
	ru.mustNext(ru.report(ans.NextStep))
	if rep, _ := VerifyChain(ru.r); !rep.Valid {
		t.Fatalf("fresh chain: %+v", rep)
	}
	var e Event
	_ = json.Unmarshal(ru.r[auditKey(2)], &e)
	if e.PrevHash == GenesisHash || e.Sequence != 2 {
		t.Fatalf("event 2: %+v", e)
	}
	var first Event
	_ = json.Unmarshal(ru.r[auditKey(1)], &first)
	if first.PrevHash != GenesisHash {
		t.Fatalf("the first event's prev_hash is %s", first.PrevHash)
	}
	e.Action = "forged"
	raw, _ := json.Marshal(e)
	ru.r[auditKey(2)] = raw
	rep, _ := VerifyChain(ru.r)
	if rep.Valid || rep.DivergencePoint != 2 || rep.DivergenceType != "hash_mismatch" {
		t.Fatalf("tampered chain: %+v", rep)
	}
	delete(ru.r, auditKey(2))
	if rep, _ := VerifyChain(ru.r); rep.Valid || rep.DivergenceType != "sequence_gap" {
		t.Fatalf("chain with a hole: %+v", rep)
	}
}

func TestGateWaiverAndFailedGateFeedback(t *testing.T) {
	no := false
	ru := newRun(t, StartInput{AutoRetryFidelityGate: &no})
	ans := ru.mustNext(nil)
	for ans.NextStep.Type != StepRunFidelityGate {
		ans = ru.mustNext(ru.report(ans.NextStep))
	}
	// The gate step fails (the review could not run): gate failed, pause gate_failed.
	rep := ru.report(ans.NextStep)
	rep.Outcome = OutcomeFailure
	ans = ru.mustNext(rep)
	if ans.NextStep.Reason != PauseGateFailed {
		t.Fatalf("failed gate: %+v", ans.NextStep)
	}
	s, _ := LoadSession(ru.r, ru.sid)
	_, err := GateWaiver(ru.r, s, "phase-9", "operator_override", "", "maintainer", "", ru.now)
	code(t, err, errcode.GateNotFound)
	if _, err := GateWaiver(ru.r, s, "phase-1", "operator_override", "flaky reviewer", "maintainer", "", ru.now); err != nil {
		t.Fatal(err)
	}
	_, err = GateWaiver(ru.r, s, "phase-1", "operator_override", "", "maintainer", "", ru.now)
	code(t, err, errcode.GateAlreadyWaived)
	if err := Resume(ru.sp, ru.r, s, ResumeInput{}, ru.now); err != nil {
		t.Fatal(err)
	}
	if ans = ru.mustNext(nil); ans.NextStep.TaskID != "task-2-1" {
		t.Fatalf("after the waiver: %+v", ans.NextStep)
	}
}

// A PARTIAL verification result makes the verdict warn: lenient passes
// it; strict fails the gate and, with auto-retry, issues
// address_fidelity_feedback, after which the gate runs again.
func TestWarnVerdictLenientPassesStrictRetries(t *testing.T) {
	for _, policy := range []string{GateLenient, GateStrict} {
		ru := newRun(t, StartInput{GatePolicy: policy})
		ans := ru.mustNext(nil)
		for ans.NextStep.Type != StepRunFidelityGate {
			ans = ru.mustNext(ru.report(ans.NextStep))
		}
		if _, err := specs.RecordVerification(ru.sp, "verify-1-1", specs.VerificationRecord{Result: "PARTIAL"}); err != nil {
			t.Fatal(err)
		}
		rep := ru.report(ans.NextStep)
		s, _ := LoadSession(ru.r, ru.sid)
		if s.PendingGateEvidence.Verdict != VerdictWarn {
			t.Fatalf("%s: verdict %s, want warn", policy, s.PendingGateEvidence.Verdict)
		}
		ans = ru.mustNext(rep)
		switch policy {
		case GateLenient:
			if ans.NextStep.TaskID != "task-2-1" {
				t.Fatalf("lenient: %+v", ans.NextStep)
			}
		case GateStrict:
			if ans.NextStep.Type != StepAddressFidelityFeedback || ans.NextStep.PhaseID != "phase-1" {
				t.Fatalf("strict: %+v", ans.NextStep)
			}
			if ans = ru.mustNext(ru.report(ans.NextStep)); ans.NextStep.Type != StepRunFidelityGate {
				t.Fatalf("after the feedback: %+v", ans.NextStep)
			}
		}
	}
}
