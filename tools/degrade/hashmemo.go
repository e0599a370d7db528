package degrade

import (
	"sync"

	"github.com/specd/specd/core/jcs"
)

// HashMemo remembers the hashes of dropped items by archive id. An archive
// id pins a spec version, whose content never changes, so an entry never
// goes stale; the memo only saves re-hashing a big spec on every read.
// Safe for concurrent use; a nil memo remembers nothing.
type HashMemo struct {
	mu sync.Mutex
	m  map[string]string
}

// maxMemoHashes bounds the memo; past it, it starts over.
const maxMemoHashes = 20_000

// Hasher is the Hasher Fit needs: each item is named by name(item) (the
// archive id pinned to the document's version) and hashed with jcs.Hash,
// as research archive-get hashes what it serves; hashes are remembered.
func (h *HashMemo) Hasher(name func(item string) string) Hasher {
	return func(item string, v any) (string, string, error) {
		id := name(item)
		if hash, ok := h.get(id); ok {
			return id, hash, nil
		}
		hash, err := jcs.Hash(v)
		if err != nil {
			return "", "", err
		}
		h.put(id, hash)
		return id, hash, nil
	}
}

func (h *HashMemo) get(id string) (string, bool) {
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

func (h *HashMemo) put(id, hash string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxMemoHashes {
		h.m = map[string]string{}
	}
	h.m[id] = hash
}
