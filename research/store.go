package research

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// The storage records of research and the port that stores them. research
// declares them (as specs declares its repository's types);
// research/researchstore implements Store over the store port (either
// engine) and stores both records as the JSON their tags describe, so the
// tags are the stored format.

// ArchiveKey is the key content is archived under: "sha256:" and the 64
// lowercase hex digits of the SHA-256 of its bytes. For a canonical text it
// equals SourceTextHash, which is how a digest's source_text_hash finds the
// source archived with it.
func ArchiveKey(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ArchiveMeta describes one item of the content-addressed archive.
type ArchiveMeta struct {
	// Hash is "sha256:<64 hex>" of the content's bytes, its archive key.
	Hash string `json:"hash"`
	// ContentID is the caller's own id for the content, if any.
	ContentID string `json:"content_id,omitempty"`
	// ItemType names the kind of content (note, source, …).
	ItemType string `json:"item_type,omitempty"`
	// ArchivedAt is the RFC 3339 time of the latest put; retention counts
	// from it.
	ArchivedAt     string `json:"archived_at"`
	Reason         string `json:"reason,omitempty"`
	OriginalTokens int    `json:"original_tokens"`
	SizeBytes      int    `json:"size_bytes"`
}

// DigestRecord is one stored digest, keyed by (SourceID, QueryHash).
type DigestRecord struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	// Payload is the DigestPayload as compact JSON (keys sorted, unknown
	// fields kept).
	Payload json.RawMessage `json:"payload"`
	// SourceHash is the payload's source_text_hash.
	SourceHash string `json:"source_text_hash,omitempty"`
	// Archived says whether the source text was archived with the put.
	Archived bool   `json:"source_archived"`
	StoredAt string `json:"stored_at"`
}

// Store is the archive and the digest store. Each method is one
// transaction; errors are coded (ARCHIVE_NOT_FOUND, DIGEST_NOT_FOUND with a
// recovery call, INTERNAL_ERROR).
type Store interface {
	// ArchivePut stores content under "sha256:<hex>" of its bytes
	// (idempotent; a repeated put refreshes archived_at and keeps what an
	// earlier put said and this one does not) and maps m.ContentID to it.
	// It fills Hash, SizeBytes and OriginalTokens and reports whether the
	// bytes were new.
	ArchivePut(ctx context.Context, content []byte, m ArchiveMeta) (ArchiveMeta, bool, error)
	// ArchiveGet reads by hash (or, when hash is "", by content id),
	// verifying the hash. A read never writes.
	ArchiveGet(ctx context.Context, hash, contentID string) ([]byte, ArchiveMeta, error)
	// ArchiveSweep removes items archived before cutoff and reports how
	// many went.
	ArchiveSweep(ctx context.Context, cutoff time.Time) (int, error)
	// DigestPut stores or replaces the digest for (SourceID, QueryHash)
	// and reports whether one was replaced.
	DigestPut(ctx context.Context, rec DigestRecord) (bool, error)
	// DigestGet reads one digest. DIGEST_NOT_FOUND.
	DigestGet(ctx context.Context, sourceID, queryHash string) (DigestRecord, error)
	// DigestDelete removes one digest. DIGEST_NOT_FOUND.
	DigestDelete(ctx context.Context, sourceID, queryHash string) error
	// DigestList pages digests in (source_id, query_hash) order, optionally
	// for one source, after the opaque key after; next is "" on the last
	// page.
	DigestList(ctx context.Context, sourceID, after string, limit int) (rows []DigestRecord, next string, err error)
}
