package etcdstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Changes larger than one etcd transaction. A cluster bounds a transaction
// (--max-txn-ops, 128 by default; --max-request-bytes, 1.5 MiB), and a
// 200-task phase or a 1,000-task import writes more keys than that. Such a
// change commits as a redo log, atomically for every reader:
//
//  1. stage: its writes, encoded, go to chunk keys under
//     <prefix>/!staged/<id>/ (as many transactions as they need). Nothing
//     reads there, so a crash now leaves garbage and no visible change; a
//     later large change deletes staged sets older than staleStaged that
//     are not the pending one. The age is judged by cluster revisions: a
//     set is stale when its first chunk was created no later than a
//     revision the collecting server saw at least staleStaged ago by its
//     own clock, so a server whose clock is ahead collects nothing early.
//  2. switch: one small transaction, guarded like any commit (everything
//     the change read is unchanged, and no other change is pending) and on
//     the staged chunks still existing (a set collected meanwhile fails
//     the switch, and the change is staged again), puts
//     <prefix>/!pending = {id, chunks}. This is the commit point.
//  3. apply: the writes go to their keys in transactions within the
//     limits, each guarded by "!pending is still this one"; then !pending
//     is deleted (same guard) and the staged chunks.
//
// Every transaction's first read also reads !pending at the same revision
// (firstRead): a snapshot with a pending change may be half applied, so the
// reader finishes the change itself (rollForward: the same guarded apply,
// from the staged chunks) and starts again at a fresh revision. Every
// commit compares !pending absent, so no write lands while a change is
// being applied, and a crash after the switch is finished by the next
// reader or writer of the store.

// The keys of the redo log under the store's root. Neither has a separator
// of the bucket layout, so no bucket read, Export or change feed sees them.
const (
	pendingName = "!pending"
	stagedName  = "!staged/"
)

// staleStaged is how old a staged set that is not pending must be before a
// large change deletes it: far beyond any writer's RequestTimeout, so its
// writer is gone.
const staleStaged = 10 * time.Minute

// pendingRecord is the value of !pending: the staged set to apply.
type pendingRecord struct {
	ID     string `json:"id"`
	Chunks int    `json:"chunks"`
}

// pendingError ends a transaction whose snapshot has a pending change: the
// caller rolls it forward and starts again.
type pendingError struct {
	rec pendingRecord
	mod int64 // mod revision of !pending
}

func (e *pendingError) Error() string {
	return fmt.Sprintf("etcdstore: change %s is being applied", e.rec.ID)
}

// op is one write of a change: a put, or a delete when del is set.
type op struct {
	key string // relative to the store's root
	val []byte
	del bool
}

// checkPending turns a read of !pending into the transaction's error when
// a change is pending at its snapshot (see run), and guards the commit on
// its absence.
func (t *txn) checkPending(kvs []*mvccpb.KeyValue) {
	if len(kvs) == 0 {
		t.points[t.s.pendingKey] = 0
		return
	}
	var rec pendingRecord
	if err := json.Unmarshal(kvs[0].Value, &rec); err != nil || rec.ID == "" {
		t.err = core.NewError(errcode.StoreCorrupt, "The store's pending-change record does not decode.", map[string]any{"key": t.s.pendingKey})
		panic(abort{})
	}
	t.err = &pendingError{rec: rec, mod: kvs[0].ModRevision}
	panic(abort{})
}

// refusedBy is the error of a commit whose guard failed, resp answering
// its Else read of !pending: a pendingError when a change is pending (the
// caller rolls it forward before running again, which a write that read
// nothing needs to make progress), else errConflict.
func (s *Store) refusedBy(resp *clientv3.TxnResponse) error {
	if len(resp.Responses) == 1 {
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) == 1 {
			var rec pendingRecord
			if err := json.Unmarshal(kvs[0].Value, &rec); err == nil && rec.ID != "" {
				return &pendingError{rec: rec, mod: kvs[0].ModRevision}
			}
		}
	}
	return errConflict
}

// fits reports whether a change of ops writes (size bytes) goes in one
// transaction.
func (s *Store) fits(ops, size int) bool {
	return ops <= s.opts.MaxTxnOps && size+requestOverhead <= s.opts.MaxRequestBytes
}

// tooManyForCluster reports whether the cluster refused a transaction for
// its size (its limits are lower than the store's options say).
func tooManyForCluster(err error) bool {
	return errors.Is(err, rpctypes.ErrTooManyOps) || errors.Is(err, rpctypes.ErrGRPCTooManyOps) ||
		errors.Is(err, rpctypes.ErrRequestTooLarge) || errors.Is(err, rpctypes.ErrGRPCRequestTooLarge) ||
		strings.Contains(err.Error(), "request is too large") || strings.Contains(err.Error(), "too many operations in txn request")
}

// chunkBytes is the size of one staged chunk.
func (s *Store) chunkBytes() int { return s.opts.MaxRequestBytes - requestOverhead - 1024 }

// commitLarge commits writes (sorted keys, relative to the root) guarded by
// cmps as a redo log (see the top of this file). errConflict when a guard
// failed (nothing visible was written); PAYLOAD_TOO_LARGE when one value
// alone exceeds a request; an outcomeUnknown when the switch's answer was
// lost (the change may be committed). After the switch the change is committed: an
// error applying it is left to the next reader, and nil is answered.
func (t *txn) commitLarge(cmps []clientv3.Cmp, writes []op) error {
	s := t.s
	for _, w := range writes {
		if len(w.key)+len(w.val)+len(s.root)+64 > s.chunkBytes() {
			return tooLarge("One stored value is larger than the cluster accepts in one request.",
				map[string]any{"bytes": len(w.val), "max_request_bytes": s.opts.MaxRequestBytes})
		}
	}
	s.collectStaged(t.ctx)
	id := fmt.Sprintf("%016x-%s", s.opts.Now().UnixNano(), s.opts.NewID())
	chunks := encodeChunks(writes, s.chunkBytes())
	for i, c := range chunks {
		ctx, cancel := s.callCtx(t.ctx)
		_, err := s.kv.Put(ctx, s.stagedKey(id, i), string(c))
		cancel()
		if err != nil {
			s.dropStaged(t.ctx, id)
			return err
		}
	}
	if s.afterStage != nil {
		if err := s.afterStage(); err != nil {
			return err
		}
	}
	rec, _ := json.Marshal(pendingRecord{ID: id, Chunks: len(chunks)})
	// A collector deletes a whole staged set in one operation, so the first
	// chunk (staged first) still existing proves none was deleted; the last
	// is compared too, which costs one compare.
	cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.pendingKey), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(s.stagedKey(id, 0)), ">", 0),
		clientv3.Compare(clientv3.CreateRevision(s.stagedKey(id, len(chunks)-1)), ">", 0))
	ctx, cancel := s.callCtx(t.ctx)
	resp, err := s.kv.Txn(ctx).If(cmps...).Then(clientv3.OpPut(s.pendingKey, string(rec))).Else(clientv3.OpGet(s.pendingKey)).Commit()
	cancel()
	if err != nil {
		if refusedUnapplied(err) {
			s.dropStaged(t.ctx, id)
			return err
		}
		// Unknown outcome: the staged set is rolled forward or collected.
		return &outcomeUnknown{err: err}
	}
	if !resp.Succeeded {
		s.dropStaged(t.ctx, id)
		return s.refusedBy(resp) // a read changed, a change is pending, or the stage was collected: run again
	}
	s.noteRevision(resp.Header.Revision)
	if s.afterSwitch != nil {
		if err := s.afterSwitch(); err != nil {
			return &outcomeUnknown{err: err} // committed, but the caller never heard
		}
	}
	if err := s.apply(t.ctx, id, resp.Header.Revision, writes); err != nil {
		s.log.Warn("etcdstore: a committed change is not applied yet; the next reader finishes it", "change", id, "err", err)
	}
	return nil
}

// apply writes a committed change's writes in transactions within the
// cluster's limits, each guarded by !pending still being the change's
// (mod revision mod), then ends the change. Another server applying the
// same change at the same time writes the same values; once one of them
// ended it, the others' guards fail and they stop.
func (s *Store) apply(ctx context.Context, id string, mod int64, writes []op) error {
	guard := clientv3.Compare(clientv3.ModRevision(s.pendingKey), "=", mod)
	send := func(ops []clientv3.Op) (bool, error) {
		cctx, cancel := s.callCtx(ctx)
		defer cancel()
		resp, err := s.kv.Txn(cctx).If(guard).Then(ops...).Commit()
		if err != nil {
			return false, err
		}
		s.noteRevision(resp.Header.Revision)
		return resp.Succeeded, nil
	}
	var batch []clientv3.Op
	size := 0
	for i, w := range writes {
		k := s.root + w.key
		if w.del {
			batch = append(batch, clientv3.OpDelete(k))
		} else {
			batch = append(batch, clientv3.OpPut(k, string(w.val)))
		}
		size += len(k) + len(w.val) + 64
		last := i == len(writes)-1
		if last || len(batch) == s.opts.MaxTxnOps ||
			!s.fits(len(batch)+1, size+len(s.root)+len(writes[i+1].key)+len(writes[i+1].val)+64) {
			ok, err := send(batch)
			if err != nil {
				return err
			}
			if !ok {
				return nil // another server finished the change
			}
			batch, size = batch[:0], 0
		}
	}
	if _, err := send([]clientv3.Op{clientv3.OpDelete(s.pendingKey)}); err != nil {
		return err
	}
	s.dropStaged(ctx, id)
	return nil
}

// rollForward finishes the pending change pe of a snapshot: its staged
// chunks are applied (apply), unless it has ended meanwhile.
func (s *Store) rollForward(ctx context.Context, pe *pendingError) error {
	cctx, cancel := s.callCtx(ctx)
	resp, err := s.kv.Txn(cctx).Then(
		clientv3.OpGet(s.pendingKey),
		clientv3.OpGet(s.stagedKey(pe.rec.ID, 0), clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.stagedPrefix(pe.rec.ID)))),
	).Commit()
	cancel()
	if err != nil {
		return err
	}
	if p := resp.Responses[0].GetResponseRange().Kvs; len(p) == 0 || p[0].ModRevision != pe.mod {
		return nil // ended meanwhile
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if len(kvs) != pe.rec.Chunks {
		return core.NewError(errcode.StoreCorrupt, fmt.Sprintf("The pending change %s has %d of its %d staged chunks.", pe.rec.ID, len(kvs), pe.rec.Chunks),
			map[string]any{"key": s.pendingKey})
	}
	var writes []op
	for _, kv := range kvs {
		w, err := decodeChunk(kv.Value)
		if err != nil {
			return core.NewError(errcode.StoreCorrupt, fmt.Sprintf("A staged chunk of change %s does not decode: %v", pe.rec.ID, err), map[string]any{"key": string(kv.Key)})
		}
		writes = append(writes, w...)
	}
	s.log.Debug("etcdstore: finishing a committed change another call left half applied", "change", pe.rec.ID, "writes", len(writes))
	return s.apply(ctx, pe.rec.ID, pe.mod, writes)
}

func (s *Store) stagedPrefix(id string) string { return s.root + stagedName + id + "/" }
func (s *Store) stagedKey(id string, i int) string {
	return fmt.Sprintf("%s%08d", s.stagedPrefix(id), i)
}

// dropStaged deletes a staged set (best effort: garbage is harmless).
func (s *Store) dropStaged(ctx context.Context, id string) {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	_, _ = s.kv.Delete(cctx, s.stagedPrefix(id), clientv3.WithPrefix())
}

// revisionMarks remembers cluster revisions a server saw and when, by its
// own clock, so it can tell which revision is at least staleStaged old
// without comparing clocks across servers.
type revisionMarks struct {
	mu    sync.Mutex
	marks []revisionMark // oldest first
}

type revisionMark struct {
	rev int64
	at  time.Time
}

// markInterval spaces the marks kept, bounding them to about
// staleStaged/markInterval+2.
const markInterval = time.Minute

// note records that the cluster was at rev at now and answers the newest
// revision seen at least staleStaged before now (0: none yet, so nothing
// is old enough). Older marks than that one are dropped.
func (m *revisionMarks) note(rev int64, now time.Time) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cutoff int64
	keep := 0
	for i, mk := range m.marks {
		if now.Sub(mk.at) >= staleStaged {
			cutoff, keep = mk.rev, i
		}
	}
	m.marks = m.marks[keep:]
	if n := len(m.marks); n == 0 || now.Sub(m.marks[n-1].at) >= markInterval {
		m.marks = append(m.marks, revisionMark{rev: rev, at: now})
	}
	return cutoff
}

// collectStaged deletes the staged sets that are not pending and whose
// first chunk was created at or before a revision this server saw at
// least staleStaged ago (left by writers that died before their switch),
// unless a change was switched in meanwhile. Best effort.
func (s *Store) collectStaged(ctx context.Context) {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	start := s.root + stagedName
	resp, err := s.kv.Txn(cctx).Then(
		clientv3.OpGet(s.pendingKey),
		clientv3.OpGet(start, clientv3.WithRange(clientv3.GetPrefixRangeEnd(start)), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return
	}
	var pending pendingRecord
	var pmod int64
	if p := resp.Responses[0].GetResponseRange().Kvs; len(p) == 1 {
		_ = json.Unmarshal(p[0].Value, &pending)
		pmod = p[0].ModRevision
	}
	cutoff := s.stagedAge.note(resp.Header.Revision, s.opts.Now())
	if cutoff == 0 {
		return
	}
	var dels []clientv3.Op
	seen := map[string]bool{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		id, _, _ := strings.Cut(strings.TrimPrefix(string(kv.Key), start), "/")
		if seen[id] || id == pending.ID {
			continue
		}
		// Keys come in order, so an id's first key seen is its lowest
		// chunk left: created first, it dates the set.
		seen[id] = true
		if kv.CreateRevision > cutoff {
			continue
		}
		dels = append(dels, clientv3.OpDelete(s.stagedPrefix(id), clientv3.WithPrefix()))
		if len(dels) == s.opts.MaxTxnOps {
			break
		}
	}
	if len(dels) == 0 {
		return
	}
	_, _ = s.kv.Txn(cctx).If(clientv3.Compare(clientv3.ModRevision(s.pendingKey), "=", pmod)).Then(dels...).Commit()
}

// encodeChunks packs writes into chunks of at most max bytes each: per
// write a flag byte (1: delete), the key and the value, each with its
// uvarint length.
func encodeChunks(writes []op, max int) [][]byte {
	var out [][]byte
	var cur []byte
	for _, w := range writes {
		n := 1 + 2*binary.MaxVarintLen64 + len(w.key) + len(w.val)
		if len(cur) > 0 && len(cur)+n > max {
			out = append(out, cur)
			cur = nil
		}
		flag := byte(0)
		if w.del {
			flag = 1
		}
		cur = append(cur, flag)
		cur = binary.AppendUvarint(cur, uint64(len(w.key)))
		cur = append(cur, w.key...)
		cur = binary.AppendUvarint(cur, uint64(len(w.val)))
		cur = append(cur, w.val...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// decodeChunk reads back one chunk of encodeChunks.
func decodeChunk(b []byte) ([]op, error) {
	var out []op
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		flag, _ := r.ReadByte()
		if flag > 1 {
			return nil, errors.New("bad flag")
		}
		var parts [2][]byte
		for i := range parts {
			n, err := binary.ReadUvarint(r)
			if err != nil || n > uint64(r.Len()) {
				return nil, errors.New("truncated")
			}
			parts[i] = make([]byte, n)
			_, _ = r.Read(parts[i])
		}
		out = append(out, op{key: string(parts[0]), val: parts[1], del: flag == 1})
	}
	return out, nil
}
