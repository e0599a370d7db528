package autonomy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// Records is one spec's autonomy records inside a spec transaction
// (specs.JournalReader.Records(Space)): beside the spec's journal, read and
// written in the transaction of the spec change they go with, on both
// engines. Keys are the package's (see the key functions).
type Records = specs.Records

// Space is the name of the record space the sessions live in.
const Space = "autonomy"

// Record keys.
const (
	keyActive    = "active"     // the id of the spec's non-terminal session
	keySecret    = "secret"     // the HMAC key of gate evidence (hex)
	keyAuditHead = "audit_head" // {sequence, hash} of the ledger's last event
	prefixSess   = "session/"
	prefixProof  = "proof/"
	prefixAudit  = "audit/"
)

func sessionKey(id string) string { return prefixSess + id }
func proofKey(p string) string    { return prefixProof + p }
func auditKey(seq int64) string   { return fmt.Sprintf("%s%020d", prefixAudit, seq) }

func getJSON(r Records, key string, v any) (bool, error) {
	raw := r.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, core.Internal(fmt.Errorf("autonomy record %s: %w", key, err))
	}
	return true, nil
}

func putJSON(r Records, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return core.Internal(err)
	}
	return r.Put(key, raw)
}

// LoadSession reads session id. SESSION_NOT_FOUND.
func LoadSession(r Records, id string) (*Session, error) {
	var s Session
	ok, err := getJSON(r, sessionKey(id), &s)
	if err != nil {
		return nil, err
	}
	if !ok || id == "" {
		return nil, core.NewError(errcode.SessionNotFound, fmt.Sprintf("No autonomy session %q for this spec.", id),
			map[string]any{"field": "session_id", "received": id})
	}
	return &s, nil
}

// ActiveSession returns the spec's non-terminal session, nil when none.
func ActiveSession(r Records) (*Session, error) {
	id := string(r.Get(keyActive))
	if id == "" {
		return nil, nil
	}
	s, err := LoadSession(r, id)
	if err != nil {
		return nil, err
	}
	if Terminal(s.Status) {
		return nil, nil
	}
	return s, nil
}

// Resolve returns session id, or, when id is "", the spec's active
// session, else its newest (a completed or ended session still answers
// status, replay and the replayed report of its last step).
// SESSION_NOT_FOUND, NO_ACTIVE_SESSION (the spec never had one).
func Resolve(r Records, id string) (*Session, error) {
	if id != "" {
		return LoadSession(r, id)
	}
	s, err := ActiveSession(r)
	if err != nil || s != nil {
		return s, err
	}
	all, err := Sessions(r)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, core.NewError(errcode.NoActiveSession, "This spec has no autonomy session.", map[string]any{"field": "session_id"})
	}
	return all[0], nil
}

// Sessions lists every session of the spec, newest first.
func Sessions(r Records) ([]*Session, error) {
	var out []*Session
	var ferr error
	err := r.Scan(prefixSess, "", func(key string, v []byte) bool {
		var s Session
		if err := json.Unmarshal(v, &s); err != nil {
			ferr = core.Internal(fmt.Errorf("autonomy record %s: %w", key, err))
			return false
		}
		out = append(out, &s)
		return true
	})
	if err == nil {
		err = ferr
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt > out[j].CreatedAt
		}
		return out[i].ID > out[j].ID
	})
	return out, err
}

// save stores s and keeps the active pointer in step with its status.
func save(r Records, s *Session) error {
	if err := putJSON(r, sessionKey(s.ID), s); err != nil {
		return err
	}
	if Terminal(s.Status) {
		if string(r.Get(keyActive)) == s.ID {
			return r.Delete(keyActive)
		}
		return nil
	}
	return r.Put(keyActive, []byte(s.ID))
}

// secret returns the spec's gate-evidence HMAC key, made on first use and
// kept in the store (so every server process of the store shares it).
func secret(r Records) ([]byte, error) {
	if v := r.Get(keySecret); v != nil {
		return hex.DecodeString(string(v))
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, core.Internal(err)
	}
	return b, r.Put(keySecret, []byte(hex.EncodeToString(b)))
}

// newID is prefix followed by 26 random lowercase hex digits.
func newID(prefix string) string {
	b := make([]byte, 13)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + hex.EncodeToString(b)
}

// newProof is a one-time step proof: 64 hex digits of randomness.
func newProof() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// SHA256Hex is the lowercase hex sha256 of s: a receipt's command_hash of
// the command and output_digest of the output.
func SHA256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
