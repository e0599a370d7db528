package core

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/specd/specd/core/errcode"
)

// cursorPayload is the JSON inside a cursor: a version, the last key returned
// and the listing's fingerprint. Clients treat cursors as opaque.
type cursorPayload struct {
	V int    `json:"v"`
	K string `json:"k"`
	F string `json:"f"`
}

// Fingerprint binds a cursor to the listing that issued it: the first 8 hex
// of sha256 over tool|action|spec_id|filters. Filters must be given in a fixed
// order by the caller.
func Fingerprint(tool, action, specID string, filters ...string) string {
	h := sha256.Sum256([]byte(strings.Join(append([]string{tool, action, specID}, filters...), "|")))
	return hex.EncodeToString(h[:4])
}

// EncodeCursor returns the opaque cursor for a page whose last key was
// lastKey: unpadded base64url of {v:1, k:lastKey, f:fingerprint}.
func EncodeCursor(lastKey, fingerprint string) string {
	b, _ := json.Marshal(cursorPayload{V: 1, K: lastKey, F: fingerprint})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor returns the last key of the previous page. An empty cursor is
// the first page (""). A corrupt cursor, an unknown version or one issued for
// another listing (fingerprint mismatch) is INVALID_CURSOR; the caller adds a
// recovery call that restarts the listing.
func DecodeCursor(cursor, fingerprint string) (string, *Error) {
	if cursor == "" {
		return "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	var p cursorPayload
	if err == nil {
		err = json.Unmarshal(raw, &p)
	}
	if err != nil || p.V != 1 || p.K == "" {
		return "", NewError(errcode.InvalidCursor, "The cursor is not one this server issued.",
			map[string]any{"field": "cursor", "constraint": "opaque cursor from meta.pagination.cursor", "received": cursor})
	}
	if p.F != fingerprint {
		return "", NewError(errcode.InvalidCursor, "The cursor belongs to a different listing (other action, spec or filters).",
			map[string]any{"field": "cursor", "constraint": "same tool, action, spec_id and filters as the call that issued it", "received": cursor})
	}
	return p.K, nil
}
