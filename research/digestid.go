package research

import "strings"

// DigestID names a stored digest in one string, as research nodes link
// digests in metadata.digest_ids: "<source_id>#<query_hash>".
func DigestID(sourceID, queryHash string) string { return sourceID + "#" + queryHash }

// ParseDigestID splits a DigestID. The query hash is the part after the
// last "#" (source ids may themselves hold "#", e.g. URL fragments) and
// must be a well-formed query_hash; the source id must not be empty.
func ParseDigestID(id string) (sourceID, queryHash string, ok bool) {
	i := strings.LastIndexByte(id, '#')
	if i <= 0 || !validQueryHash(id[i+1:]) {
		return "", "", false
	}
	return id[:i], id[i+1:], true
}

// PayloadSourceHash returns a decoded payload's source_text_hash when it is
// a well-formed "sha256:<64 lowercase hex>" (whether or not the rest of the
// payload is valid).
func PayloadSourceHash(payload map[string]any) (string, bool) {
	h, ok := payload["source_text_hash"].(string)
	if !ok || !validSourceHash(h) {
		return "", false
	}
	return h, true
}
