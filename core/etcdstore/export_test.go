package etcdstore

import (
	"context"
	"strings"
	"sync"
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

// TxnShape is what one write transaction sent to the cluster carried: its
// compares (RangeCompares of them over a key range) and its writes.
type TxnShape struct{ Compares, RangeCompares, Writes int }

// RecordTxns makes s record the shape of every etcd transaction with
// writes it commits, its plain puts (a large change's staging) and its
// reads over a spec's nodes range. Call it before s is used concurrently.
func RecordTxns(s *Store) *Recorder {
	r := &recordingKV{KV: s.kv}
	s.kv = r
	return &Recorder{r: r}
}

// Recorder is what RecordTxns recorded.
type Recorder struct{ r *recordingKV }

// Shapes are the write transactions so far.
func (r *Recorder) Shapes() []TxnShape {
	r.r.mu.Lock()
	defer r.r.mu.Unlock()
	return append([]TxnShape(nil), r.r.shapes...)
}

// Puts counts the plain puts so far.
func (r *Recorder) Puts() int {
	r.r.mu.Lock()
	defer r.r.mu.Unlock()
	return r.r.puts
}

// Requests counts the requests sent to the cluster so far (Get, Put,
// Txn).
func (r *Recorder) Requests() int {
	r.r.mu.Lock()
	defer r.r.mu.Unlock()
	return r.r.requests
}

// SpecRanges counts the reads over a spec's nodes range (a listing, or
// the nodes changed since a revision) and over its history range so far.
func (r *Recorder) SpecRanges() (nodes, history int) {
	r.r.mu.Lock()
	defer r.r.mu.Unlock()
	return r.r.nodeRanges, r.r.historyRanges
}

type recordingKV struct {
	clientv3.KV
	mu            sync.Mutex
	shapes        []TxnShape
	puts          int
	nodeRanges    int
	historyRanges int
	requests      int
}

func (r *recordingKV) read(o clientv3.Op) {
	if !o.IsGet() || len(o.RangeBytes()) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch k := string(o.KeyBytes()); {
	case strings.HasSuffix(k, "/nodes"+sepKey):
		r.nodeRanges++
	case strings.HasSuffix(k, "/history"+sepKey):
		r.historyRanges++
	}
}

func (r *recordingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r.read(clientv3.OpGet(key, opts...))
	r.mu.Lock()
	r.requests++
	r.mu.Unlock()
	return r.KV.Get(ctx, key, opts...)
}

func (r *recordingKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	r.mu.Lock()
	r.puts++
	r.requests++
	r.mu.Unlock()
	return r.KV.Put(ctx, key, val, opts...)
}

func (r *recordingKV) Txn(ctx context.Context) clientv3.Txn {
	return &recordingTxn{Txn: r.KV.Txn(ctx), kv: r}
}

type recordingTxn struct {
	clientv3.Txn
	kv    *recordingKV
	shape TxnShape
}

func (t *recordingTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	for _, c := range cs {
		t.shape.Compares++
		if len(c.GetCompare().GetRangeEnd()) > 0 {
			t.shape.RangeCompares++
		}
	}
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *recordingTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, o := range ops {
		if o.IsPut() || o.IsDelete() {
			t.shape.Writes++
		}
		t.kv.read(o)
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *recordingTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *recordingTxn) Commit() (*clientv3.TxnResponse, error) {
	t.kv.mu.Lock()
	t.kv.requests++
	if t.shape.Writes > 0 {
		t.kv.shapes = append(t.kv.shapes, t.shape)
	}
	t.kv.mu.Unlock()
	return t.Txn.Commit()
}
