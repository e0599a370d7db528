package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
)

var outcomePrefix atomic.Int64

// openInternal opens a store on ep under a fresh prefix.
func openInternal(t *testing.T, ep, prefix string, mod func(*Options)) *Store {
	t.Helper()
	o := Options{Endpoints: []string{ep}, Prefix: prefix}
	if mod != nil {
		mod(&o)
	}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// putKeys writes n keys k0000… of bucket, each val, in one update (n past
// the cluster's --max-txn-ops makes it a large change).
func putKeys(s *Store, bucket string, n int, val string) error {
	return s.Update(context.Background(), func(tx bucketstore.Tx) error {
		b := tx.Bucket([]byte(bucket))
		for i := 0; i < n; i++ {
			if err := b.Put([]byte(fmt.Sprintf("k%04d", i)), []byte(val)); err != nil {
				return err
			}
		}
		return nil
	})
}

func getKey(s *Store, bucket, key string) (string, error) {
	var v string
	err := s.View(context.Background(), func(tx bucketstore.Tx) error {
		v = string(tx.Bucket([]byte(bucket)).Get([]byte(key)))
		return nil
	})
	return v, err
}

// lostAnswerKV passes everything to the cluster, but once armed, the next
// successful writing transaction's answer is replaced by an error, as when
// the connection drops after etcd applied the request.
type lostAnswerKV struct {
	clientv3.KV
	armed atomic.Bool
}

type lostAnswerTxn struct {
	clientv3.Txn
	kv     *lostAnswerKV
	writes bool
}

func (k *lostAnswerKV) Txn(ctx context.Context) clientv3.Txn {
	return &lostAnswerTxn{Txn: k.KV.Txn(ctx), kv: k}
}
func (x *lostAnswerTxn) If(c ...clientv3.Cmp) clientv3.Txn { x.Txn = x.Txn.If(c...); return x }
func (x *lostAnswerTxn) Then(o ...clientv3.Op) clientv3.Txn {
	for _, op := range o {
		if op.IsPut() {
			x.writes = true
		}
	}
	x.Txn = x.Txn.Then(o...)
	return x
}
func (x *lostAnswerTxn) Else(o ...clientv3.Op) clientv3.Txn { x.Txn = x.Txn.Else(o...); return x }
func (x *lostAnswerTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := x.Txn.Commit()
	if err == nil && x.writes && resp.Succeeded && x.kv.armed.CompareAndSwap(true, false) {
		return nil, errors.New("rpc error: code = Unavailable desc = connection reset after the request was sent")
	}
	return resp, err
}

// checkOutcomeUnknown holds err to the answer of a commit whose outcome is
// unknown: UNAVAILABLE, never claiming nothing was changed, telling the
// caller to re-read, with a recovery the contract allows.
func checkOutcomeUnknown(t *testing.T, err error) {
	t.Helper()
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable {
		t.Fatalf("answer = %v, want UNAVAILABLE", err)
	}
	if strings.Contains(ce.Message, "nothing was changed") || !strings.Contains(ce.Message, "may or may not") || !strings.Contains(strings.ToLower(ce.Message), "re-read") {
		t.Errorf("message %q must say the change may or may not be committed and to re-read", ce.Message)
	}
	if _, ok := core.NoNextCall[ce.Code]; !ok && ce.Recovery == nil {
		t.Errorf("UNAVAILABLE without a recovery call, and not listed in core.NoNextCall")
	}
}

// TestBatchCommitOutcomeUnknownNotReRun: when the answer of a batch's
// commit is lost after etcd applied it, the members are not re-run one by
// one (which applied each twice); each is answered that the outcome is
// unknown.
func TestBatchCommitOutcomeUnknownNotReRun(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	s := openInternal(t, ep, fmt.Sprintf("/outcome/%d", outcomePrefix.Add(1)), nil)
	if err := putKeys(s, "c", 1, "0"); err != nil {
		t.Fatal(err)
	}
	fk := &lostAnswerKV{KV: s.kv}
	s.kv = fk
	fk.armed.Store(true)
	s.wmu <- struct{}{}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.Update(context.Background(), func(tx bucketstore.Tx) error {
				b := tx.Bucket([]byte("c"))
				n, _ := strconv.Atoi(string(b.Get([]byte("k0000"))))
				return b.Put([]byte("k0000"), []byte(strconv.Itoa(n+1)))
			})
		}(i)
	}
	for {
		s.qmu.Lock()
		n := len(s.queue)
		s.qmu.Unlock()
		if n == len(errs) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	<-s.wmu
	wg.Wait()
	v, err := getKey(s, "c", "k0000")
	if err != nil {
		t.Fatal(err)
	}
	if v != "2" {
		t.Errorf("counter = %s after one batch of two increments (answers %v)", v, errs)
	}
	for _, err := range errs {
		checkOutcomeUnknown(t, err)
	}
}

// TestSingleCommitOutcomeUnknown: a lone update whose commit answer is
// lost is answered as unknown too, not as "nothing was changed".
func TestSingleCommitOutcomeUnknown(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	s := openInternal(t, ep, fmt.Sprintf("/outcome/%d", outcomePrefix.Add(1)), nil)
	if err := putKeys(s, "c", 1, "0"); err != nil {
		t.Fatal(err)
	}
	fk := &lostAnswerKV{KV: s.kv}
	s.kv = fk
	fk.armed.Store(true)
	err := putKeys(s, "c", 1, "1")
	checkOutcomeUnknown(t, err)
	if v, _ := getKey(s, "c", "k0000"); v != "1" {
		t.Errorf("k0000 = %q, want the applied write", v)
	}
}

// TestLargeSwitchOutcomeUnknown: a large change whose switch answer is lost
// is committed (the next reader rolls it forward) and answered as unknown.
func TestLargeSwitchOutcomeUnknown(t *testing.T) {
	ep := etcdtest.StartDefault(t)
	s := openInternal(t, ep, fmt.Sprintf("/outcome/%d", outcomePrefix.Add(1)), nil)
	fk := &lostAnswerKV{KV: s.kv}
	s.kv = fk
	s.afterStage = func() error { fk.armed.Store(true); return nil }
	err := putKeys(s, "x", 300, "A")
	checkOutcomeUnknown(t, err)
	s.afterStage = nil
	if v, err := getKey(s, "x", "k0299"); err != nil || v != "A" {
		t.Errorf("k0299 = %q, %v; want the switched change rolled forward", v, err)
	}
}
