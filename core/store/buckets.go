package store

import (
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
)

// The store port (bucketstore) on bbolt. The adapters are conversions of
// bbolt's own pointers (no wrapper is allocated per bucket or cursor): a
// call costs one interface dispatch.

var (
	_ bucketstore.Store = (*Store)(nil)
	_ bucketstore.Lazy  = (*Store)(nil)
)

// View runs fn over one consistent snapshot of the file (see view for the
// errors besides fn's).
func (s *Store) View(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.view(ctx, func(tx *bolt.Tx) error { return fn((*boltTx)(tx)) })
}

type boltTx bolt.Tx

func (t *boltTx) Bucket(name []byte) bucketstore.Bucket { return wrap((*bolt.Tx)(t).Bucket(name)) }

type boltBucket bolt.Bucket

// wrap keeps bbolt's nil (no such bucket) a nil interface.
func wrap(b *bolt.Bucket) bucketstore.Bucket {
	if b == nil {
		return nil
	}
	return (*boltBucket)(b)
}

func (b *boltBucket) raw() *bolt.Bucket                     { return (*bolt.Bucket)(b) }
func (b *boltBucket) Get(key []byte) []byte                 { return b.raw().Get(key) }
func (b *boltBucket) Put(key, value []byte) error           { return b.raw().Put(key, value) }
func (b *boltBucket) Delete(key []byte) error               { return b.raw().Delete(key) }
func (b *boltBucket) Bucket(name []byte) bucketstore.Bucket { return wrap(b.raw().Bucket(name)) }
func (b *boltBucket) NextSequence() (uint64, error)         { return b.raw().NextSequence() }
func (b *boltBucket) Cursor() bucketstore.Cursor            { return (*boltCursor)(b.raw().Cursor()) }

func (b *boltBucket) CreateBucket(name []byte) (bucketstore.Bucket, error) {
	c, err := b.raw().CreateBucket(name)
	return wrap(c), err
}

func (b *boltBucket) CreateBucketIfNotExists(name []byte) (bucketstore.Bucket, error) {
	c, err := b.raw().CreateBucketIfNotExists(name)
	return wrap(c), err
}

func (b *boltBucket) ForEach(fn func(k, v []byte) error) error { return b.raw().ForEach(fn) }

func (b *boltBucket) ForEachBucket(fn func(name []byte) error) error {
	return b.raw().ForEachBucket(fn)
}

type boltCursor bolt.Cursor

func (c *boltCursor) raw() *bolt.Cursor                 { return (*bolt.Cursor)(c) }
func (c *boltCursor) First() ([]byte, []byte)           { return c.raw().First() }
func (c *boltCursor) Last() ([]byte, []byte)            { return c.raw().Last() }
func (c *boltCursor) Seek(seek []byte) ([]byte, []byte) { return c.raw().Seek(seek) }
func (c *boltCursor) Next() ([]byte, []byte)            { return c.raw().Next() }
func (c *boltCursor) Prev() ([]byte, []byte)            { return c.raw().Prev() }
