package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// TestContentHashKnownValue pins ContentHash to a value computed by hand:
// the canonical form of {"b":[1,2.5,"é"],"a":{"z":null,"y":true}} sorts
// keys and writes numbers in shortest form; its sha256 comes from
// crypto/sha256 over those literal bytes.
func TestContentHashKnownValue(t *testing.T) {
	const canonical = `{"a":{"y":true,"z":null},"b":[1,2.5,"é"]}`
	sum := sha256.Sum256([]byte(canonical))
	want := "sha256:" + hex.EncodeToString(sum[:])
	got, err := mcptool.ContentHash(map[string]any{"b": []any{1, 2.5, "é"}, "a": map[string]any{"z": nil, "y": true}})
	if err != nil || got != want {
		t.Fatalf("ContentHash = %s, %v; want %s (sha256 of %s)", got, err, want, canonical)
	}
}

// TestHasherPinsArchiveIDs: the hasher spec get hands to degrade.Fit names
// items by archive ids pinned to the spec version and hashes them with
// ContentHash, remembering the hash.
func TestHasherPinsArchiveIDs(t *testing.T) {
	memo := &hashMemo{}
	node := &specs.Node{ID: "task-1-1", Type: specs.TypeTask, Title: "t"}
	id, h, err := memo.hasher("demo-2026-01-01-001", 7)("node:task-1-1", node)
	want, _ := mcptool.ContentHash(node)
	if err != nil || id != "spec:demo-2026-01-01-001@7/node:task-1-1" || h != want {
		t.Fatalf("hasher = %q, %q, %v; want the pinned id and %s", id, h, err, want)
	}
	if got, ok := memo.get(id); !ok || got != want {
		t.Fatalf("memo has %q, %v", got, ok)
	}
}
