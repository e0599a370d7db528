package mcptool

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxHolderClientName bounds the client name a holder carries (bytes).
const maxHolderClientName = 64

// holderKey keys the label of HolderOf. It is random and lives only in this
// process: a label can be neither reversed into the session id it was made
// from nor recomputed by anyone who learns that id, and the sessions it
// labels (transport sessions, the per-process stdio session) end with the
// process anyway.
var holderKey = func() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("specd: no randomness for the holder key: " + err.Error())
	}
	return b
}()

// HolderOf is the agent identity a claim records (task start, next with
// claim: started_by) and that decides whether a later transition is the
// holder's own: "[<key id>/]<client name>#<label>". The key id is the API
// key's id (never the key) on a server with keys; the client name is the
// MCP initialize clientInfo name ("agent" when the client sent none, cut to
// 64 bytes); the label is 12 hex digits of an HMAC-SHA-256 of the session id
// under a per-process random key. It names the session without being it:
// the transport session id is a credential (it addresses the session on
// /mcp) and must never be readable by observers of the store. The same
// session always gets the same holder; two sessions of one process get two
// labels but for a 2^-48 chance. An empty session id has no holder ("").
func HolderOf(s Session) string {
	if s.ID == "" {
		return ""
	}
	name := s.ClientName
	if name == "" {
		name = "agent"
	}
	if len(name) > maxHolderClientName {
		cut := maxHolderClientName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
	}
	m := holderMACs.Get().(*holderMAC)
	defer holderMACs.Put(m)
	m.h.Reset()
	m.in = append(m.in[:0], s.ID...)
	m.h.Write(m.in)
	var label [12]byte
	hex.Encode(label[:], m.h.Sum(m.sum[:0])[:6])
	var b strings.Builder
	b.Grow(len(s.KeyID) + 1 + len(name) + 1 + len(label))
	if s.KeyID != "" {
		b.WriteString(s.KeyID)
		b.WriteByte('/')
	}
	b.WriteString(name)
	b.WriteByte('#')
	b.Write(label[:])
	return b.String()
}

// holderMAC is one HMAC-SHA-256 under holderKey with its input and sum
// buffers, kept in holderMACs: a call labels its holder without keying a
// new HMAC (two SHA-256 states and their pads) for every call.
type holderMAC struct {
	h   hash.Hash
	in  []byte
	sum [sha256.Size]byte
}

var holderMACs = sync.Pool{New: func() any { return &holderMAC{h: hmac.New(sha256.New, holderKey)} }}
