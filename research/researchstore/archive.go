// Package researchstore is research's persistence over the store port
// (core/store/bucketstore): the content-addressed archive and the digest
// store (research.Store), stored as the JSON their records' tags describe,
// the same bytes on every engine.
package researchstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/research"
)

// Store is research.Store over an Engine: the content-addressed archive
// and the digests. Each method is one Engine transaction. It is safe for
// concurrent use when the Engine is.
type Store struct {
	eng bucketstore.Engine
	now func() time.Time
}

// New returns the archive and digest store over eng; now is the clock of
// archive and digest timestamps (nil: time.Now).
func New(eng bucketstore.Engine, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{eng: eng, now: now}
}

func (s *Store) view(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.eng.View(ctx, fn)
}

func (s *Store) update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.eng.Update(ctx, fn)
}

// Archive layout: content-addressed by "sha256:<hex>" of the bytes.
//
//	archive_data/<hash>    the bytes
//	archive_meta/<hash>    research.ArchiveMeta JSON
//	archive_ids/<content_id> → <hash>   lookup by the caller's id
var (
	bucketArchiveData = bucketstore.BucketArchiveData
	bucketArchiveMeta = bucketstore.BucketArchiveMeta
	bucketArchiveIDs  = bucketstore.BucketArchiveIDs
)

// ArchivePut stores content under its hash (idempotent: the same bytes are
// stored once; a later put refreshes archived_at so retention restarts) and
// maps contentID to it when given. It returns the metadata and whether the
// bytes were new.
func (s *Store) ArchivePut(ctx context.Context, content []byte, m research.ArchiveMeta) (research.ArchiveMeta, bool, error) {
	m.Hash = research.ArchiveKey(content)
	m.SizeBytes = len(content)
	m.OriginalTokens = (len(content) + 3) / 4
	if m.ArchivedAt == "" {
		m.ArchivedAt = s.now().UTC().Format(time.RFC3339)
	}
	created := false
	put := m
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		// The engine may run this again after a lost race (etcd): each run
		// completes the caller's metadata from what it reads itself.
		put = m
		var err error
		created, err = archiveIn(tx, content, &put)
		return err
	})
	if err != nil {
		return m, false, bucketstore.AsStoreError(err)
	}
	return put, created, nil
}

// archiveIn stores content under m.Hash in tx with its metadata m
// (completed from an earlier put's, see keepEarlier) and maps m.ContentID,
// when set, to it. created reports whether the bytes were new.
func archiveIn(tx bucketstore.Tx, content []byte, m *research.ArchiveMeta) (created bool, err error) {
	data, meta, ids := tx.Bucket(bucketArchiveData), tx.Bucket(bucketArchiveMeta), tx.Bucket(bucketArchiveIDs)
	key := []byte(m.Hash)
	if data.Get(key) == nil {
		created = true
		if err := data.Put(key, content); err != nil {
			return created, err
		}
	}
	keepEarlier(m, meta.Get(key))
	raw, err := json.Marshal(m)
	if err != nil {
		return created, err
	}
	if err := meta.Put(key, raw); err != nil {
		return created, err
	}
	if m.ContentID != "" {
		return created, ids.Put([]byte(m.ContentID), key)
	}
	return created, nil
}

// keepEarlier fills the fields of m a later put was not told again
// (content id, item type, reason) from the metadata an earlier put stored,
// old (nothing when there is none or it does not decode).
func keepEarlier(m *research.ArchiveMeta, old []byte) {
	var prev research.ArchiveMeta
	if json.Unmarshal(old, &prev) != nil {
		return
	}
	m.ContentID = cmp.Or(m.ContentID, prev.ContentID)
	m.ItemType = cmp.Or(m.ItemType, prev.ItemType)
	m.Reason = cmp.Or(m.Reason, prev.Reason)
}

// ArchiveGet returns the bytes stored under hash (or, when hash is empty,
// under contentID), verifying the hash on read. A read never writes.
// Errors: ARCHIVE_NOT_FOUND (unknown or swept), INTERNAL_ERROR when the
// stored bytes no longer match their hash.
func (s *Store) ArchiveGet(ctx context.Context, hash, contentID string) ([]byte, research.ArchiveMeta, error) {
	var content []byte
	var m research.ArchiveMeta
	err := s.view(ctx, func(tx bucketstore.Tx) error {
		m = research.ArchiveMeta{} // an engine may run fn again (bucketstore.Engine)
		key := []byte(hash)
		if hash == "" {
			key = tx.Bucket(bucketArchiveIDs).Get([]byte(contentID))
			if key == nil {
				return archiveNotFound(hash, contentID)
			}
			key = append([]byte(nil), key...)
		}
		v := tx.Bucket(bucketArchiveData).Get(key)
		if v == nil {
			return archiveNotFound(string(key), contentID)
		}
		content = append([]byte(nil), v...)
		if raw := tx.Bucket(bucketArchiveMeta).Get(key); raw != nil {
			if err := json.Unmarshal(raw, &m); err != nil {
				return core.Internal(err)
			}
		}
		if got := research.ArchiveKey(content); got != string(key) {
			return core.Internal(fmt.Errorf("archive %s: stored bytes hash to %s", key, got))
		}
		return nil
	})
	return content, m, bucketstore.AsStoreError(err)
}

func archiveNotFound(hash, contentID string) *core.Error {
	d := map[string]any{}
	if hash != "" {
		d["field"], d["received"] = "hash", hash
	} else {
		d["field"], d["received"] = "content_id", contentID
	}
	return core.NewError(errcode.ArchiveNotFound, "Nothing is archived under that id (it may have expired).", d)
}

// ArchiveSweep removes items archived before cutoff and returns how many
// went. Retention 0 means keep forever: callers skip the sweep then.
func (s *Store) ArchiveSweep(ctx context.Context, cutoff time.Time) (int, error) {
	removed := 0
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		var err error
		removed, err = sweepIn(tx, cutoff)
		return err
	})
	return removed, bucketstore.AsStoreError(err)
}

// sweepIn removes from tx the bytes and metadata of every item archived
// before cutoff (an item whose metadata does not decode or has no valid
// archived_at stays) and the content ids that map to them; it returns how
// many items went.
func sweepIn(tx bucketstore.Tx, cutoff time.Time) (int, error) {
	data, meta := tx.Bucket(bucketArchiveData), tx.Bucket(bucketArchiveMeta)
	expired, err := expiredKeys(meta, cutoff)
	if err != nil {
		return 0, err
	}
	removed := 0
	gone := map[string]bool{}
	for _, k := range expired {
		gone[string(k)] = true
		if err := data.Delete(k); err != nil {
			return removed, err
		}
		if err := meta.Delete(k); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, dropIDsOf(tx.Bucket(bucketArchiveIDs), gone)
}

// expiredKeys lists the keys of the metadata archived before cutoff.
func expiredKeys(meta bucketstore.Bucket, cutoff time.Time) ([][]byte, error) {
	var expired [][]byte
	err := meta.ForEach(func(k, v []byte) error {
		var m research.ArchiveMeta
		if json.Unmarshal(v, &m) != nil {
			return nil
		}
		if t, err := time.Parse(time.RFC3339, m.ArchivedAt); err == nil && t.Before(cutoff) {
			expired = append(expired, append([]byte(nil), k...))
		}
		return nil
	})
	return expired, err
}

// dropIDsOf removes the content ids of ids that map to a hash in gone.
func dropIDsOf(ids bucketstore.Bucket, gone map[string]bool) error {
	var stale [][]byte
	_ = ids.ForEach(func(k, v []byte) error {
		if gone[string(v)] {
			stale = append(stale, append([]byte(nil), k...))
		}
		return nil
	})
	for _, k := range stale {
		if err := ids.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Digests layout: digests/<source_id>\x00<query_hash> → research.DigestRecord JSON.
var bucketDigests = bucketstore.BucketDigests

func digestKey(sourceID, queryHash string) []byte {
	return []byte(sourceID + "\x00" + queryHash)
}

// DigestPut stores (or replaces) the digest for (source_id, query_hash) and
// reports whether one was replaced.
func (s *Store) DigestPut(ctx context.Context, rec research.DigestRecord) (bool, error) {
	if rec.StoredAt == "" {
		rec.StoredAt = s.now().UTC().Format(time.RFC3339)
	}
	replaced := false
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketDigests)
		k := digestKey(rec.SourceID, rec.QueryHash)
		replaced = b.Get(k) != nil
		raw, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put(k, raw)
	})
	return replaced, bucketstore.AsStoreError(err)
}

// DigestGet returns the digest for (source_id, query_hash). DIGEST_NOT_FOUND
// lists the query hashes stored for that source as candidates.
func (s *Store) DigestGet(ctx context.Context, sourceID, queryHash string) (research.DigestRecord, error) {
	var rec research.DigestRecord
	err := s.view(ctx, func(tx bucketstore.Tx) error {
		rec = research.DigestRecord{} // an engine may run fn again (bucketstore.Engine)
		v := tx.Bucket(bucketDigests).Get(digestKey(sourceID, queryHash))
		if v == nil {
			return digestNotFound(tx, sourceID, queryHash)
		}
		return json.Unmarshal(v, &rec)
	})
	return rec, bucketstore.AsStoreError(err)
}

func digestNotFound(tx bucketstore.Tx, sourceID, queryHash string) *core.Error {
	var hashes []string
	prefix := []byte(sourceID + "\x00")
	c := tx.Bucket(bucketDigests).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(hashes) < 20; k, _ = c.Next() {
		hashes = append(hashes, string(k[len(prefix):]))
	}
	return core.NewError(errcode.DigestNotFound, fmt.Sprintf("No digest for source %q and query hash %q.", sourceID, queryHash),
		map[string]any{"field": "query_hash", "received": queryHash, "source_id": sourceID, "stored_query_hashes": hashes}).
		WithStep("digest-list", map[string]any{"source_id": sourceID}, nil)
}

// DigestDelete removes the digest; DIGEST_NOT_FOUND when absent. The
// archived source text stays (other digests may cite it; retention sweeps it).
func (s *Store) DigestDelete(ctx context.Context, sourceID, queryHash string) error {
	return bucketstore.AsStoreError(s.update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketDigests)
		k := digestKey(sourceID, queryHash)
		if b.Get(k) == nil {
			return digestNotFound(tx, sourceID, queryHash)
		}
		return b.Delete(k)
	}))
}

// DigestList pages digests in (source_id, query_hash) order after the key
// `after` (from a previous page), optionally for one source. next is "" on
// the last page. Cost O(page): one cursor seek.
func (s *Store) DigestList(ctx context.Context, sourceID, after string, limit int) (rows []research.DigestRecord, next string, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		rows, next = []research.DigestRecord{}, "" // an engine may run fn again (bucketstore.Engine)
		c := tx.Bucket(bucketDigests).Cursor()
		var prefix []byte
		if sourceID != "" {
			prefix = []byte(sourceID + "\x00")
		}
		k, v := listStart(c, after, prefix)
		for ; k != nil && (prefix == nil || bytes.HasPrefix(k, prefix)); k, v = c.Next() {
			if len(rows) == limit {
				next = string(digestKey(rows[len(rows)-1].SourceID, rows[len(rows)-1].QueryHash))
				return nil
			}
			var rec research.DigestRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return core.Internal(err)
			}
			rows = append(rows, rec)
		}
		return nil
	})
	return rows, next, bucketstore.AsStoreError(err)
}

// listStart places c on the first digest of a page: the one after the key
// after, else the first of the prefix, else the first of all.
func listStart(c bucketstore.Cursor, after string, prefix []byte) (k, v []byte) {
	switch {
	case after != "":
		k, v = c.Seek([]byte(after))
		if k != nil && string(k) == after {
			return c.Next()
		}
		return k, v
	case prefix != nil:
		return c.Seek(prefix)
	}
	return c.First()
}

// The store is research's archive and digest store.
var _ research.Store = (*Store)(nil)
