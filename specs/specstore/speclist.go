package specstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// The spec list index: what `spec list` shows of each spec, kept with the
// specs so a page costs a cursor walk over one bucket instead of opening
// every spec and decoding its header.
//
//	spec_list/<spec_id>             the spec's row (specs.RepoSummary JSON)
//	spec_list/\x00index             present once the index is complete
//	lifecycle/<folder>\x00<spec_id> the same row (the folder's listing)
//
// Every transaction that writes a spec's header writes both rows too
// (indexSpec): create, import, every mutation (its version and
// last_updated change), rollback. A store written before the index (or
// by an older specd) has no marker: ListSpecs then builds the whole index
// in one transaction (ensureIndex), or, when it cannot write, lists the
// old way; CheckSpecs verifies the index against the headers, and
// RebuildSpecIndex rebuilds it.
var (
	bucketSpecList = bucketstore.BucketSpecList
	keyIndexBuilt  = []byte("\x00index")
)

// indexRow encodes a spec's row of the index.
func indexRow(h specs.Header) ([]byte, error) { return encodeSummary(summaryOf(h)), nil }

// encodeSummary is json.Marshal(r), byte for byte, without reflection
// (every mutation writes its spec's row).
func encodeSummary(r specs.RepoSummary) []byte {
	out := make([]byte, 0, 200+len(r.SpecID)+len(r.Title)+len(r.CurrentPhase))
	out = core.AppendJSONString(append(out, `{"spec_id":`...), r.SpecID)
	out = core.AppendJSONString(append(out, `,"title":`...), r.Title)
	out = core.AppendJSONString(append(out, `,"lifecycle":`...), r.Lifecycle)
	out = core.AppendJSONString(append(out, `,"status":`...), r.Status)
	out = strconv.AppendInt(append(out, `,"total_tasks":`...), int64(r.TotalTasks), 10)
	out = strconv.AppendInt(append(out, `,"completed_tasks":`...), int64(r.CompletedTasks), 10)
	out = strconv.AppendInt(append(out, `,"progress_percentage":`...), int64(r.ProgressPercentage), 10)
	out = core.AppendJSONString(append(out, `,"current_phase":`...), r.CurrentPhase)
	out = strconv.AppendInt(append(out, `,"version":`...), r.Version, 10)
	out = core.AppendJSONString(append(out, `,"last_updated":`...), r.LastUpdated)
	return append(out, '}')
}

// indexSpec writes h's rows of the index; from is the lifecycle the spec
// was indexed under (its previous header's; h's own for a new spec).
func indexSpec(tx bucketstore.Tx, h specs.Header, from specs.Lifecycle) error {
	row, err := indexRow(h)
	if err != nil {
		return err
	}
	key := indexKey(h.Lifecycle, h.SpecID)
	// the spec id is key's tail (a Put keeps no key: one conversion less)
	if err := tx.Bucket(bucketSpecList).Put(key[len(key)-len(h.SpecID):], row); err != nil {
		return err
	}
	idx := tx.Bucket(bucketLifecycle)
	if indexFolder(from) != indexFolder(h.Lifecycle) {
		if err := idx.Delete(indexKey(from, h.SpecID)); err != nil {
			return err
		}
	}
	return idx.Put(key, row)
}

// indexBuilt reports whether tx has a complete spec list index.
func indexBuilt(tx bucketstore.Tx) bool {
	b := tx.Bucket(bucketSpecList)
	return b != nil && b.Get(keyIndexBuilt) != nil
}

// buildIndex rewrites the whole index from the specs' headers.
func buildIndex(tx bucketstore.Tx) error {
	list, life := tx.Bucket(bucketSpecList), tx.Bucket(bucketLifecycle)
	if list == nil || life == nil {
		return fmt.Errorf("the store has no %s bucket", bucketSpecList)
	}
	for _, b := range []bucketstore.Bucket{list, life} {
		var keys [][]byte
		if err := b.ForEach(func(k, v []byte) error {
			if v != nil {
				keys = append(keys, append([]byte{}, k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	err := tx.Bucket(bucketSpecs).ForEachBucket(func(id []byte) error {
		_, h, err := loadSpec(tx, string(id))
		if err != nil {
			return err
		}
		return indexSpec(tx, h, h.Lifecycle)
	})
	if err != nil {
		return err
	}
	return list.Put(keyIndexBuilt, []byte("1"))
}

// ensureIndex builds the index when the store has none (once per Repo;
// a store that cannot be written keeps listing the old way). It reports
// whether the index is there; an error when the store cannot be read.
func (s *Repo) ensureIndex(ctx context.Context) (bool, error) {
	if s.indexed.Load() {
		return true, nil
	}
	built := false
	if err := s.view(ctx, func(tx bucketstore.Tx) error { built = indexBuilt(tx); return nil }); err != nil {
		return false, err
	}
	if !built {
		err := s.update(ctx, func(tx bucketstore.Tx) error {
			if indexBuilt(tx) {
				return nil
			}
			return buildIndex(tx)
		})
		if err != nil {
			return false, nil
		}
	}
	s.indexed.Store(true)
	return true, nil
}

// markNewStoreIndexed marks the index complete when tx creates the store's
// first spec (an empty store's index is complete), so a store that never
// held a spec without the index never needs building it: its listings
// only read. A store with specs and no marker is left to ensureIndex.
func markNewStoreIndexed(tx bucketstore.Tx, newID string) error {
	list := tx.Bucket(bucketSpecList)
	if list == nil || list.Get(keyIndexBuilt) != nil {
		return nil
	}
	only := true
	if err := tx.Bucket(bucketSpecs).ForEachBucket(func(id []byte) error {
		if string(id) != newID {
			only = false
		}
		return nil
	}); err != nil {
		return err
	}
	if !only {
		return nil
	}
	return list.Put(keyIndexBuilt, []byte("1"))
}

// RebuildSpecIndex rewrites the spec list index from the specs' headers in
// one transaction (after CheckSpecs found it stale: a store an older specd
// wrote to). Errors: the engine's, INTERNAL_ERROR (an unreadable header).
func (s *Repo) RebuildSpecIndex(ctx context.Context) error {
	err := s.update(ctx, buildIndex)
	if err == nil {
		s.indexed.Store(true)
	}
	return err
}

// listIndexed is ListSpecs over the index: one cursor over spec_list (every
// spec) or over the folder's range of lifecycle.
func listIndexed(tx bucketstore.Tx, folder, after string, limit int) (rows []specs.RepoSummary, next string, err error) {
	rows = []specs.RepoSummary{}
	var c bucketstore.Cursor
	var prefix []byte
	if folder == "" || folder == "all" {
		c = tx.Bucket(bucketSpecList).Cursor()
	} else {
		c = tx.Bucket(bucketLifecycle).Cursor()
		prefix = []byte(folder + "\x00")
	}
	start := append(append([]byte{}, prefix...), after...)
	k, v := c.Seek(start)
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		id := string(k[len(prefix):])
		if v == nil || id == "" || id[0] == 0 || (after != "" && id == after) {
			continue // the marker, a nested bucket, the cursor's row
		}
		if len(rows) == limit {
			return rows, rows[len(rows)-1].SpecID, nil
		}
		var row specs.RepoSummary
		if err := json.Unmarshal(v, &row); err != nil || row.SpecID != id {
			return nil, "", core.Internal(fmt.Errorf("spec list index: the row of %q does not decode (run specd check)", id))
		}
		rows = append(rows, row)
	}
	return rows, "", nil
}

// checkIndex verifies the index (when built) against the headers: one row
// per spec in spec_list and under its folder in lifecycle, each equal to
// the header's, and no other rows.
func checkIndex(tx bucketstore.Tx, headers map[string]specs.Header) []bucketstore.Finding {
	if !indexBuilt(tx) {
		return nil
	}
	var out []bucketstore.Finding
	stale := func(id, why string) {
		out = append(out, bucketstore.Finding{SpecID: id, Problem: "spec list index: " + why + " (specd check --rebuild-index rebuilds it)"})
	}
	want := map[string][]byte{}
	for id, h := range headers {
		row, _ := indexRow(h)
		want[id] = row
		if got := tx.Bucket(bucketSpecList).Get([]byte(id)); !bytes.Equal(got, row) {
			stale(id, "the spec's row differs from its header")
		}
		if got := tx.Bucket(bucketLifecycle).Get(indexKey(h.Lifecycle, id)); !bytes.Equal(got, row) {
			stale(id, "the spec's row under its lifecycle folder differs from its header")
		}
	}
	_ = tx.Bucket(bucketSpecList).ForEach(func(k, v []byte) error {
		if v != nil && len(k) > 0 && k[0] != 0 && want[string(k)] == nil {
			stale(string(k), "a row for a spec that does not exist")
		}
		return nil
	})
	_ = tx.Bucket(bucketLifecycle).ForEach(func(k, v []byte) error {
		folder, id, ok := bytes.Cut(k, []byte{0})
		if v == nil || !ok {
			return nil
		}
		if h, exists := headers[string(id)]; !exists || !bytes.Equal(indexKey(h.Lifecycle, string(id)), k) {
			stale(string(id), fmt.Sprintf("a row under folder %q that the spec is not in", folder))
		}
		return nil
	})
	return out
}
