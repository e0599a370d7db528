package jcs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/specd/specd/core/jcs"
)

// TestHashKnownValue pins Hash to a value computed by hand: the canonical
// form of {"b":[1,2.5,"é"],"a":{"z":null,"y":true}} sorts keys and writes
// numbers in shortest form; its sha256 comes from crypto/sha256 over those
// literal bytes.
func TestHashKnownValue(t *testing.T) {
	const canonical = `{"a":{"y":true,"z":null},"b":[1,2.5,"é"]}`
	sum := sha256.Sum256([]byte(canonical))
	want := "sha256:" + hex.EncodeToString(sum[:])
	got, err := jcs.Hash(map[string]any{"b": []any{1, 2.5, "é"}, "a": map[string]any{"z": nil, "y": true}})
	if err != nil || got != want {
		t.Fatalf("Hash = %s, %v; want %s (sha256 of %s)", got, err, want, canonical)
	}
}
