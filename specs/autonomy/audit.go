package autonomy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// GenesisHash is the prev_hash of a ledger's first event.
var GenesisHash = strings.Repeat("0", 64)

// Event is one audit ledger entry. EventHash is the sha256 (hex) of the
// event's canonical JSON without event_hash (encoding/json of EventBody:
// fixed field order, map keys sorted), which includes PrevHash, the hash of
// the event before (GenesisHash for the first): changing, removing or
// reordering any stored event breaks the chain from there on.
//
// Actor names who made the change when the event records a session's
// start or a caller's override (a gate waiver, a write-lock bypass, a
// session's end or reset): the caller's holder identity,
// "[<key id>/]<client name>#<label>", never a transport session id or a
// secret. It is omitted when empty, so an event without one (every event
// written before actors were recorded) hashes as it always did and old
// chains still verify.
type Event struct {
	EventBody
	EventHash string `json:"event_hash"`
}

// EventBody is an Event without its EventHash: what the hash covers. Its
// fields come first in an Event's JSON, in this order.
type EventBody struct {
	Sequence  int64          `json:"sequence"`
	Timestamp string         `json:"timestamp"`
	EventType string         `json:"event_type"`
	SpecID    string         `json:"spec_id"`
	SessionID string         `json:"session_id,omitempty"`
	StepID    string         `json:"step_id,omitempty"`
	PhaseID   string         `json:"phase_id,omitempty"`
	TaskID    string         `json:"task_id,omitempty"`
	Action    string         `json:"action"`
	Actor     string         `json:"actor,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	PrevHash  string         `json:"prev_hash"`
}

// Hash computes e's event hash.
func (e Event) Hash() string {
	raw, _ := json.Marshal(e.EventBody)
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])
}

type auditHead struct {
	Sequence int64  `json:"sequence"`
	Hash     string `json:"hash"`
}

// appendEvent chains e after the ledger's last event and stores it (in the
// caller's transaction, beside the change it records).
func appendEvent(r Records, e Event, now time.Time) (Event, error) {
	var head auditHead
	if _, err := getJSON(r, keyAuditHead, &head); err != nil {
		return e, err
	}
	if head.Hash == "" {
		head.Hash = GenesisHash
	}
	e.Sequence = head.Sequence + 1
	e.Timestamp = stamp(now)
	e.PrevHash = head.Hash
	meta, err := decoded(e.Metadata)
	if err != nil {
		return e, err
	}
	e.Metadata = meta
	e.EventHash = e.Hash()
	if err := putJSON(r, auditKey(e.Sequence), e); err != nil {
		return e, err
	}
	return e, putJSON(r, keyAuditHead, auditHead{Sequence: e.Sequence, Hash: e.EventHash})
}

// decoded round-trips metadata through JSON so a stored event hashes as
// its decoded form will (numbers become float64 either way); nil stays
// nil.
func decoded(meta map[string]any) (map[string]any, error) {
	if meta == nil {
		return nil, nil
	}
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, core.Internal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, core.Internal(err)
	}
	return out, nil
}

// audit appends an event about session s.
func audit(r Records, s *Session, now time.Time, eventType, action string, step *IssuedStep, meta map[string]any) error {
	return auditAs(r, s, now, "", eventType, action, step, meta)
}

// auditAs appends an event about session s made by actor (a holder
// identity; "" records none).
func auditAs(r Records, s *Session, now time.Time, actor, eventType, action string, step *IssuedStep, meta map[string]any) error {
	e := Event{EventBody: EventBody{EventType: eventType, SpecID: s.SpecID, SessionID: s.ID, Action: action, Actor: actor, Metadata: meta}}
	if step != nil {
		e.StepID, e.PhaseID, e.TaskID = step.StepID, step.PhaseID, step.TaskID
	}
	_, err := appendEvent(r, e, now)
	return err
}

// ChainReport is the result of verifying a spec's ledger.
type ChainReport struct {
	Valid           bool   `json:"valid"`
	TotalEntries    int64  `json:"total_entries"`
	DivergencePoint int64  `json:"divergence_point,omitempty"`
	DivergenceType  string `json:"divergence_type,omitempty"`
	Detail          string `json:"divergence_detail,omitempty"`
}

// VerifyChain walks the spec's ledger from the genesis: sequences 1, 2, …
// without gaps, each prev_hash the hash of the event before, each
// event_hash the event's own hash, and the head naming the last event.
func VerifyChain(r Records) (ChainReport, error) {
	w := &chainWalk{rep: ChainReport{Valid: true}, prev: GenesisHash, want: 1}
	if err := r.Scan(prefixAudit, "", w.visit); err != nil {
		return w.rep, err
	}
	var head auditHead
	if _, err := getJSON(r, keyAuditHead, &head); err != nil {
		return w.rep, err
	}
	w.checkHead(head)
	return w.rep, nil
}

// chainWalk is VerifyChain's walk: the report so far, the hash of the
// event before and the sequence expected next.
type chainWalk struct {
	rep  ChainReport
	prev string
	want int64
}

// fail records the first divergence (later ones are consequences).
func (w *chainWalk) fail(seq int64, typ, detail string) {
	if w.rep.Valid {
		w.rep.Valid, w.rep.DivergencePoint, w.rep.DivergenceType, w.rep.Detail = false, seq, typ, detail
	}
}

// visit checks the stored event at key against the chain so far; it stops
// the walk (false) at the first divergence or an entry that does not
// decode.
func (w *chainWalk) visit(key string, v []byte) bool {
	var e Event
	if err := json.Unmarshal(v, &e); err != nil {
		w.fail(w.want, "corrupted_entry", fmt.Sprintf("%s: %v", key, err))
		return false
	}
	w.rep.TotalEntries++
	switch {
	case e.Sequence != w.want || key != auditKey(e.Sequence):
		w.fail(w.want, "sequence_gap", fmt.Sprintf("expected sequence %d, found %d", w.want, e.Sequence))
	case e.PrevHash != w.prev:
		w.fail(e.Sequence, "prev_hash_mismatch", fmt.Sprintf("event %d does not chain to event %d", e.Sequence, e.Sequence-1))
	case e.Hash() != e.EventHash:
		w.fail(e.Sequence, "hash_mismatch", fmt.Sprintf("event %d's content does not match its event_hash", e.Sequence))
	}
	w.prev, w.want = e.EventHash, e.Sequence+1
	return w.rep.Valid
}

// checkHead checks, after a valid walk, that the ledger head names the
// last stored event.
func (w *chainWalk) checkHead(head auditHead) {
	if w.rep.Valid && (head.Sequence != w.want-1 || (head.Sequence > 0 && head.Hash != w.prev)) {
		w.fail(head.Sequence, "head_mismatch", fmt.Sprintf("the ledger head names event %d, the last stored event is %d", head.Sequence, w.want-1))
	}
}

// ChainError is the AUDIT_CHAIN_BROKEN error of a failed report.
func (rep ChainReport) ChainError(specID string) *core.Error {
	return core.NewError(errcode.AuditChainBroken, fmt.Sprintf("The autonomy audit ledger of spec %s does not verify at event %d (%s).", specID, rep.DivergencePoint, rep.DivergenceType),
		map[string]any{"spec_id": specID, "divergence_point": rep.DivergencePoint, "divergence_type": rep.DivergenceType, "detail": rep.Detail})
}

// Events pages session's audit events in ledger order after sequence after
// (0 = from the start); more says whether events remain.
func Events(r Records, sessionID string, after int64, limit int) (out []Event, more bool, err error) {
	out = []Event{}
	var ferr error
	start := ""
	if after > 0 {
		start = auditKey(after)
	}
	err = r.Scan(prefixAudit, start, func(key string, v []byte) bool {
		var e Event
		if err := json.Unmarshal(v, &e); err != nil {
			ferr = core.Internal(fmt.Errorf("autonomy record %s: %w", key, err))
			return false
		}
		if e.SessionID != sessionID {
			return true
		}
		if len(out) == limit {
			more = true
			return false
		}
		out = append(out, e)
		return true
	})
	if err == nil {
		err = ferr
	}
	return out, more, err
}
