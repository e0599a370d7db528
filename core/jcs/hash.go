package jcs

import (
	"crypto/sha256"
	"encoding/hex"
)

// Hash is "sha256:" and the 64 lowercase hex digits of the SHA-256 of v's
// canonical form (Marshal): the content hash of content_archive_hashes,
// which research archive-get checks an item against. Its only errors are
// Marshal's.
func Hash(v any) (string, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
