package etcdstore

import (
	"context"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// CountRoundTrips makes s count its requests to the cluster from now on
// (each Get, Put, Delete, Do and committed Txn is one round trip) and
// returns the counter. Call it before s is used concurrently.
func CountRoundTrips(s *Store) *atomic.Int64 {
	c := &countingKV{KV: s.kv}
	s.kv = c
	return &c.n
}

type countingKV struct {
	clientv3.KV
	n atomic.Int64
}

func (c *countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	c.n.Add(1)
	return c.KV.Get(ctx, key, opts...)
}

func (c *countingKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	c.n.Add(1)
	return c.KV.Put(ctx, key, val, opts...)
}

func (c *countingKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	c.n.Add(1)
	return c.KV.Delete(ctx, key, opts...)
}

func (c *countingKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	c.n.Add(1)
	return c.KV.Do(ctx, op)
}

func (c *countingKV) Txn(ctx context.Context) clientv3.Txn {
	return &countingTxn{Txn: c.KV.Txn(ctx), n: &c.n}
}

type countingTxn struct {
	clientv3.Txn
	n *atomic.Int64
}

func (t *countingTxn) If(cs ...clientv3.Cmp) clientv3.Txn     { t.Txn = t.Txn.If(cs...); return t }
func (t *countingTxn) Then(ops ...clientv3.Op) clientv3.Txn   { t.Txn = t.Txn.Then(ops...); return t }
func (t *countingTxn) Else(ops ...clientv3.Op) clientv3.Txn   { t.Txn = t.Txn.Else(ops...); return t }
func (t *countingTxn) Commit() (*clientv3.TxnResponse, error) { t.n.Add(1); return t.Txn.Commit() }
