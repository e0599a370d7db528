package etcdstore_test

import (
	"context"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store/storetest"
)

var prefixes atomic.Int64

// startEtcd starts one embedded etcd member on loopback ports chosen by the
// kernel and returns its client URL; it is stopped when t ends.
func startEtcd(t testing.TB, maxTxnOps uint) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "fatal"
	cfg.MaxTxnOps = maxTxnOps
	lc, _ := url.Parse("http://127.0.0.1:0")
	lp, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*lc}, []url.URL{*lc}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*lp}, []url.URL{*lp}
	cfg.InitialCluster = cfg.Name + "=" + lp.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		t.Fatal("embedded etcd did not become ready")
	}
	return e.Clients[0].Addr().String()
}

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
