package mcptool

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
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
	mac := hmac.New(sha256.New, holderKey)
	mac.Write([]byte(s.ID))
	h := name + "#" + hex.EncodeToString(mac.Sum(nil)[:6])
	if s.KeyID != "" {
		h = s.KeyID + "/" + h
	}
	return h
}
