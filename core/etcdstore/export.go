package etcdstore

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
)

// Entry is one record of the store for copying it to another engine
// (specd migrate): see bucketstore.Entry.
type Entry = bucketstore.Entry

// exportPage is how many keys one read of Export fetches.
const exportPage = 1000

// Export calls fn for every bucket and key under the prefix except meta's,
// parents before children and keys in order, all read at one revision (a
// consistent copy while servers keep running). Errors: fn's, UNAVAILABLE,
// the context's.
func (s *Store) Export(ctx context.Context, fn func(Entry) error) error {
	if err := s.ensureMeta(ctx); err != nil {
		return err
	}
	var raw [][2][]byte
	key, end := s.root, clientv3.GetPrefixRangeEnd(s.root)
	var rev int64
	for attempt := 0; ; {
		cctx, cancel := s.callCtx(ctx)
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(exportPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.kv.Get(cctx, key, opts...)
		cancel()
		if err != nil {
			return s.classify(ctx, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		pending := false
		for _, kv := range resp.Kvs {
			if string(kv.Key) == s.pendingKey && attempt < s.opts.MaxRetries {
				// A change is half applied at rev: finish it, start again.
				var rec pendingRecord
				if err := json.Unmarshal(kv.Value, &rec); err != nil {
					return core.NewError(errcode.StoreCorrupt, "The store's pending-change record does not decode.", map[string]any{"key": s.pendingKey})
				}
				if err := s.rollForward(ctx, &pendingError{rec: rec, mod: kv.ModRevision}); err != nil {
					return s.classify(ctx, err)
				}
				pending = true
				break
			}
			raw = append(raw, [2][]byte{kv.Key, kv.Value})
		}
		if pending {
			attempt++
			raw, key, rev = nil, s.root, 0
			continue
		}
		if !resp.More || len(resp.Kvs) == 0 {
			break
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	// Group by bucket: a bucket's entry (with its sequence) comes first,
	// then its keys; buckets in path order so parents precede children.
	type bucketRecs struct {
		seq  uint64
		keys []Entry
	}
	buckets := map[string]*bucketRecs{}
	get := func(p string) *bucketRecs {
		if buckets[p] == nil {
			buckets[p] = &bucketRecs{}
		}
		return buckets[p]
	}
	for _, kv := range raw {
		rest := strings.TrimPrefix(string(kv[0]), s.root)
		i := strings.IndexAny(rest, sepKey+sepBucket+sepSeq)
		if i < 0 {
			continue
		}
		path, sep, name := rest[:i], rest[i:i+1], rest[i+1:]
		if path == metaBucket || strings.HasPrefix(path, metaBucket+"/") {
			continue
		}
		switch sep {
		case sepKey:
			b := get(path)
			b.keys = append(b.keys, Entry{Bucket: strings.Split(path, "/"), Key: []byte(name), Value: kv[1]})
		case sepBucket:
			get(path + "/" + name)
		case sepSeq:
			n, _ := strconv.ParseUint(string(kv[1]), 10, 64)
			get(path).seq = n
		}
	}
	paths := make([]string, 0, len(buckets))
	for p := range buckets {
		paths = append(paths, p)
	}
	sortPaths(paths)
	for _, p := range paths {
		b := buckets[p]
		if err := fn(Entry{Bucket: strings.Split(p, "/"), Seq: b.seq}); err != nil {
			return err
		}
		for _, e := range b.keys {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortPaths orders bucket paths segment by segment (a parent before its
// children, siblings by name), as bbolt walks them.
func sortPaths(paths []string) {
	split := make(map[string][]string, len(paths))
	for _, p := range paths {
		split[p] = strings.Split(p, "/")
	}
	less := func(a, b []string) bool {
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i] != b[i] {
				return a[i] < b[i]
			}
		}
		return len(a) < len(b)
	}
	for i := 1; i < len(paths); i++ { // insertion sort: stable and simple; paths are few per spec
		for j := i; j > 0 && less(split[paths[j]], split[paths[j-1]]); j-- {
			paths[j], paths[j-1] = paths[j-1], paths[j]
		}
	}
}

// Import writes entries (as Export gives them) in etcd transactions of at
// most MaxTxnOps operations and MaxRequestBytes bytes each: buckets are
// created as needed, keys overwritten, sequences raised to the entry's.
// Importing the same entries again changes nothing, so a migration can be
// re-run after a failure part-way (each batch is whole or absent).
func (s *Store) Import(ctx context.Context, entries []Entry) error {
	if err := s.ensureMeta(ctx); err != nil {
		return err
	}
	var ops []clientv3.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		cctx, cancel := s.callCtx(ctx)
		defer cancel()
		_, err := s.kv.Txn(cctx).Then(ops...).Commit()
		ops, size = ops[:0], 0
		return s.classify(ctx, err)
	}
	add := func(k string, v []byte) error {
		if len(ops)+1 > s.opts.MaxTxnOps || size+len(k)+len(v)+requestOverhead+64 > s.opts.MaxRequestBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(k)+len(v)+requestOverhead+64 > s.opts.MaxRequestBytes {
			return tooLarge("One stored value is larger than the cluster accepts in one request.", map[string]any{"bytes": len(v), "max_request_bytes": s.opts.MaxRequestBytes})
		}
		ops = append(ops, clientv3.OpPut(k, string(v)))
		size += len(k) + len(v) + 64
		return nil
	}
	markers := map[string]bool{} // each bucket marker once (etcd refuses a key twice in one txn)
	for _, e := range entries {
		path := s.root + strings.Join(e.Bucket, "/")
		if e.Key != nil {
			if err := add(path+sepKey+string(e.Key), e.Value); err != nil {
				return err
			}
			continue
		}
		for i := 1; i < len(e.Bucket); i++ {
			m := s.root + strings.Join(e.Bucket[:i], "/") + sepBucket + e.Bucket[i]
			if markers[m] {
				continue
			}
			markers[m] = true
			if err := add(m, nil); err != nil {
				return err
			}
		}
		if e.Seq > 0 {
			if err := add(path+sepSeq, []byte(strconv.FormatUint(e.Seq, 10))); err != nil {
				return err
			}
		}
	}
	return flush()
}
