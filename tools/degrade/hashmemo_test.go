package degrade

import (
	"testing"

	"github.com/specd/specd/core/jcs"
	"github.com/specd/specd/specs"
)

// TestHashMemoHasher: the hasher names items with the name it is given,
// hashes them with jcs.Hash (what archive-get checks), and serves a known
// archive id from the memo (an id pins a version, so its content cannot
// differ); a nil memo hashes every time.
func TestHashMemoHasher(t *testing.T) {
	name := func(item string) string { return "spec:demo-2026-01-01-001@7/" + item }
	node := &specs.Node{ID: "task-1-1", Type: specs.TypeTask, Title: "t"}
	want, _ := jcs.Hash(node)
	other := &specs.Node{ID: "task-1-1", Type: specs.TypeTask, Title: "changed"}
	otherHash, _ := jcs.Hash(other)
	tests := []struct {
		name       string
		memo       *HashMemo
		secondHash string
	}{
		{"memo serves the pinned id", &HashMemo{}, want},
		{"nil memo remembers nothing", nil, otherHash},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.memo.Hasher(name)
			id, hash, err := h("node:task-1-1", node)
			if err != nil || id != "spec:demo-2026-01-01-001@7/node:task-1-1" || hash != want {
				t.Fatalf("hasher = %q, %q, %v; want the pinned id and %s", id, hash, err, want)
			}
			if _, hash, _ = h("node:task-1-1", other); hash != tt.secondHash {
				t.Fatalf("second hash %s, want %s", hash, tt.secondHash)
			}
		})
	}
}
