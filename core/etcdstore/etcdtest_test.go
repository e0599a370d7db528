package etcdstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/storetest"
)

var prefixes atomic.Int64

// startEtcd starts one embedded etcd member (see etcdtest.Start).
func startEtcd(t testing.TB, maxTxnOps uint) string { return etcdtest.Start(t, maxTxnOps) }

func openStore(t testing.TB, ep string, mod func(*etcdstore.Options)) *etcdstore.Store {
	t.Helper()
	o := etcdstore.Options{Endpoints: []string{ep}, Prefix: fmt.Sprintf("/specd-test/%d", prefixes.Add(1))}
	if mod != nil {
		mod(&o)
	}
	st, err := etcdstore.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background()); err != nil {
			t.Errorf("etcdstore check: %v", err)
		}
		_ = st.Close()
	})
	return st
}

// TestConformance runs the store-port conformance suite on a real
// (embedded) etcd, one prefix per test.
func TestConformance(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	storetest.Run(t, func(t testing.TB, now func() time.Time) storetest.Port {
		return openStore(t, ep, func(o *etcdstore.Options) {
			o.MaxTxnOps = 4096
			if now != nil {
				o.Now = now
			}
		})
	})
}
