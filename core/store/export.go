package store

import (
	"context"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
)

// Entry is one record of the store for copying it to another engine
// (specd migrate): see bucketstore.Entry.
type Entry = bucketstore.Entry

// Export calls fn for every bucket and key except meta's, parents before
// children and keys in order, in one read transaction (a consistent copy
// while servers keep running). Errors: fn's, and view's.
func (s *Store) Export(ctx context.Context, fn func(Entry) error) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bucketMeta) {
				return nil
			}
			return exportBucket([]string{string(name)}, b, fn)
		})
	})
}

func exportBucket(path []string, b *bolt.Bucket, fn func(Entry) error) error {
	if err := fn(Entry{Bucket: path, Seq: b.Sequence()}); err != nil {
		return err
	}
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return exportBucket(append(append([]string{}, path...), string(k)), b.Bucket(k), fn)
		}
		return fn(Entry{Bucket: path, Key: append([]byte{}, k...), Value: append([]byte{}, v...)})
	})
}

// Import writes entries (as Export gives them) in one transaction: buckets
// are created as needed, keys overwritten, sequences raised to the
// entry's. Importing the same entries again changes nothing, so a migration
// can be re-run. Nothing is written if any entry fails.
func (s *Store) Import(ctx context.Context, entries []Entry) error {
	err := s.update(ctx, func(tx *bolt.Tx) error {
		for _, e := range entries {
			if len(e.Bucket) == 0 {
				return errors.New("store import: entry without a bucket")
			}
			b, err := tx.CreateBucketIfNotExists([]byte(e.Bucket[0]))
			if err != nil {
				return err
			}
			for _, name := range e.Bucket[1:] {
				if b, err = b.CreateBucketIfNotExists([]byte(name)); err != nil {
					return err
				}
			}
			if e.Key == nil {
				if e.Seq > b.Sequence() {
					if err := b.SetSequence(e.Seq); err != nil {
						return err
					}
				}
				continue
			}
			if err := b.Put(e.Key, e.Value); err != nil {
				return err
			}
		}
		return nil
	})
	return bucketstore.AsStoreError(err)
}
