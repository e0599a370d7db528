package specstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// Workspace notes layout (README "Coming from foundry-mcp"): the intake
// inbox and the record of error answers, each keyed by an 8-byte
// big-endian sequence so keys sort in the order items arrived.
//
//	intake/<seq>     → specs.IntakeItem JSON
//	error_log/<seq>  → errlog.Record JSON (the newest errlog.MaxRecords)
var (
	bucketIntake   = bucketstore.BucketIntake
	bucketErrorLog = bucketstore.BucketErrorLog
)

func seqKey(n uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], n)
	return k[:]
}

// seqOf reads an id "<prefix>-<seq>"; ok false when it is not one.
func seqOf(id, prefix string) (uint64, bool) {
	s, found := strings.CutPrefix(id, prefix+"-")
	if !found {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil && n > 0
}

// bucket returns the top-level bucket name (TopBuckets: the engine makes
// it; a store opened read-only before the bucket existed has none).
func bucket(tx bucketstore.Tx, name []byte) (bucketstore.Bucket, error) {
	if b := tx.Bucket(name); b != nil {
		return b, nil
	}
	return nil, fmt.Errorf("bucket %s missing", name)
}

// IntakeAdd stores item as a new inbox entry (its id, status and created_at
// are set here) in one transaction. An inbox at capacity
// (SetIntakeCapacity, default specs.MaxIntakeItems) makes room by forgetting its oldest dismissed item; CONFLICT when
// none is dismissed.
func (s *Repo) IntakeAdd(ctx context.Context, item specs.IntakeItem) (specs.IntakeItem, error) {
	var stored specs.IntakeItem
	err := s.update(ctx, func(tx bucketstore.Tx) error {
		stored = item // each run starts from the caller's item (bucketstore.Engine)
		b, err := bucket(tx, bucketIntake)
		if err != nil {
			return err
		}
		full, err := intakeFull(b, s.intakeCapacity())
		if err != nil {
			return err
		}
		if full {
			return core.NewError(errcode.Conflict, fmt.Sprintf("The intake inbox is full (%d items).", s.intakeCapacity()), map[string]any{"limit": s.intakeCapacity()}).
				WithRemediation("Dismiss items you have turned into specs or no longer need, then add again.").
				WithStep("intake-list", nil, nil)
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		stored.ID, stored.Status = "intake-"+strconv.FormatUint(seq, 10), specs.IntakeNew
		if stored.CreatedAt == "" {
			stored.CreatedAt = specs.FormatTime(s.now())
		}
		raw, err := json.Marshal(stored)
		if err != nil {
			return err
		}
		return b.Put(seqKey(seq), raw)
	})
	return stored, bucketstore.AsStoreError(err)
}

// IntakeList pages inbox items oldest first after the id after (""), those
// with status (specs.IntakeNew, specs.IntakeDismissed, or "all"/"" for
// every one); next is the id to resume after ("" at the end).
func (s *Repo) IntakeList(ctx context.Context, status, after string, limit int) (items []specs.IntakeItem, next string, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		items, next = []specs.IntakeItem{}, "" // each run lists afresh (bucketstore.Engine)
		b := tx.Bucket(bucketIntake)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if n, ok := seqOf(after, "intake"); ok {
			k, v = c.Seek(seqKey(n + 1))
		}
		for ; k != nil; k, v = c.Next() {
			var it specs.IntakeItem
			if err := json.Unmarshal(v, &it); err != nil {
				return err
			}
			if status != "" && status != "all" && it.Status != status {
				continue
			}
			if len(items) == limit {
				next = items[len(items)-1].ID
				return nil
			}
			items = append(items, it)
		}
		return nil
	})
	return items, next, bucketstore.AsStoreError(err)
}

// IntakeDismiss marks the item id dismissed with reason, at now, in one
// transaction (dismissing a dismissed item keeps its first dismissal and
// reports already true). NOT_FOUND when there is no such item.
func (s *Repo) IntakeDismiss(ctx context.Context, id, reason, now string) (item specs.IntakeItem, already bool, err error) {
	err = s.update(ctx, func(tx bucketstore.Tx) error {
		item, already = specs.IntakeItem{}, false // each run answers what it read (bucketstore.Engine)
		b, err := bucket(tx, bucketIntake)
		if err != nil {
			return err
		}
		n, ok := seqOf(id, "intake")
		var raw []byte
		if ok {
			raw = b.Get(seqKey(n))
		}
		if raw == nil {
			return core.NewError(errcode.NotFound, fmt.Sprintf("No intake item %s.", id), map[string]any{"field": "intake_id", "received": id}).
				WithStep("intake-list", nil, nil)
		}
		if err := json.Unmarshal(raw, &item); err != nil {
			return err
		}
		if item.Status == specs.IntakeDismissed {
			already = true
			return nil
		}
		item.Status, item.DismissedAt, item.Reason = specs.IntakeDismissed, now, reason
		out, err := json.Marshal(item)
		if err != nil {
			return err
		}
		return b.Put(seqKey(n), out)
	})
	return item, already, bucketstore.AsStoreError(err)
}

// ErrorRecord appends recs to the error log in order (their ids are set
// here) and drops the oldest records beyond errlog.MaxRecords, in one
// transaction. It reads only the log's sequence: record n is dropped when
// record n+MaxRecords is written (a point delete of a key it computes),
// never by walking the log — on etcd a walk would make every error write
// conflict with every other server's and retry, stalling the writes queued
// behind it (600 claimed tasks took 7 minutes instead of 35 s).
func (s *Repo) ErrorRecord(ctx context.Context, recs ...errlog.Record) error {
	if len(recs) == 0 {
		return nil
	}
	return bucketstore.AsStoreError(s.update(ctx, func(tx bucketstore.Tx) error {
		b, err := bucket(tx, bucketErrorLog)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			seq, err := b.NextSequence()
			if err != nil {
				return err
			}
			rec.ID = "err-" + strconv.FormatUint(seq, 10)
			raw, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := b.Put(seqKey(seq), raw); err != nil {
				return err
			}
			if seq > errlog.MaxRecords {
				if err := b.Delete(seqKey(seq - errlog.MaxRecords)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// Errors returns the recorded errors newest first that pass f, at most
// limit (0: all), starting below the id before ("" = from the newest);
// more reports whether older matching records remain.
func (s *Repo) Errors(ctx context.Context, f errlog.Filter, before string, limit int) (recs []errlog.Record, more bool, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		recs, more = []errlog.Record{}, false // each run lists afresh (bucketstore.Engine)
		b := tx.Bucket(bucketErrorLog)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.Last()
		if n, ok := seqOf(before, "err"); ok {
			c.Seek(seqKey(n))
			k, v = c.Prev()
		}
		for ; k != nil; k, v = c.Prev() {
			var r errlog.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if !f.Match(r) {
				continue
			}
			if limit > 0 && len(recs) == limit {
				more = true
				return nil
			}
			recs = append(recs, r)
		}
		return nil
	})
	return recs, more, bucketstore.AsStoreError(err)
}

// ErrorGet returns the record id. NOT_FOUND when it is not (or no longer)
// kept.
func (s *Repo) ErrorGet(ctx context.Context, id string) (rec errlog.Record, err error) {
	err = s.view(ctx, func(tx bucketstore.Tx) error {
		rec = errlog.Record{} // each run answers what it read (bucketstore.Engine)
		var raw []byte
		if b := tx.Bucket(bucketErrorLog); b != nil {
			if n, ok := seqOf(id, "err"); ok {
				raw = b.Get(seqKey(n))
			} else {
				raw = byRequestID(b, id)
			}
		}
		if raw == nil {
			return core.NewError(errcode.NotFound, fmt.Sprintf("No recorded error %s (the newest %d are kept).", id, errlog.MaxRecords), map[string]any{"field": "error_id", "received": id}).
				WithStep("error-list", nil, nil)
		}
		return json.Unmarshal(raw, &rec)
	})
	return rec, bucketstore.AsStoreError(err)
}

// byRequestID is the newest kept record of the call with request id id
// (nil: none): a request_id names the error as well as its err-N id.
func byRequestID(b bucketstore.Bucket, id string) []byte {
	want := []byte(`"request_id":"` + id + `"`)
	c := b.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if bytes.Contains(v, want) {
			var rec errlog.Record
			if json.Unmarshal(v, &rec) == nil && rec.RequestID == id {
				return v
			}
		}
	}
	return nil
}

// ErrorCleanup deletes the records older than before (RFC 3339; "" deletes
// every record) in one transaction, or only counts them when dryRun, and
// reports how many.
func (s *Repo) ErrorCleanup(ctx context.Context, before string, dryRun bool) (int, error) {
	n := 0
	fn := func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketErrorLog)
		if b == nil {
			return nil
		}
		var doomed [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var r errlog.Record
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if before == "" || r.At < before {
				doomed = append(doomed, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil || dryRun {
			n = len(doomed)
			return err
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	}
	if dryRun {
		return n, bucketstore.AsStoreError(s.view(ctx, fn))
	}
	return n, bucketstore.AsStoreError(s.update(ctx, fn))
}

// intakeFull reports whether the inbox b holds capacity items
// and none of them can go: when it is full, the oldest dismissed item is
// deleted (in the caller's transaction) to make room.
func intakeFull(b bucketstore.Bucket, capacity int) (bool, error) {
	n := 0
	var oldestDismissed []byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n++
		if oldestDismissed == nil {
			var it specs.IntakeItem
			if err := json.Unmarshal(v, &it); err != nil {
				return false, err
			}
			if it.Status == specs.IntakeDismissed {
				oldestDismissed = append([]byte(nil), k...)
			}
		}
	}
	if n < capacity {
		return false, nil
	}
	if oldestDismissed == nil {
		return true, nil
	}
	return false, b.Delete(oldestDismissed)
}
