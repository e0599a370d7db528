// Package etcdtest starts a real etcd member inside a test (the embedded
// server of go.etcd.io/etcd/server/v3 at the version go.mod pins), on
// loopback ports the kernel chooses, stopped when the test ends.
package etcdtest

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Start starts one member with --max-txn-ops maxTxnOps and returns its
// client address (host:port).
func Start(t testing.TB, maxTxnOps uint) string {
	t.Helper()
	addr, _ := StartStoppable(t, maxTxnOps)
	return addr
}

// StartDefault starts one member with etcd's own default limits (the
// embedded server's defaults, those of the etcd binary: --max-txn-ops 128,
// --max-request-bytes 1.5 MiB) and returns its client address.
func StartDefault(t testing.TB) string {
	t.Helper()
	addr, _ := start(t, nil)
	return addr
}

// StartStoppable is Start that also returns stop, which ends the member
// before the test does (a cluster gone dead under its clients: its port
// refuses connections from then on). stop may be called more than once.
func StartStoppable(t testing.TB, maxTxnOps uint) (addr string, stop func()) {
	t.Helper()
	return start(t, func(cfg *embed.Config) { cfg.MaxTxnOps = maxTxnOps })
}

// start starts one member, its configuration etcd's defaults changed by
// mod (nil: none).
func start(t testing.TB, mod func(*embed.Config)) (addr string, stop func()) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.LogLevel = "fatal"
	// Nothing in a member may read the os.Stderr variable, which
	// flags.quietProvider swaps while a flagd provider starts: a parallel
	// test opening flags while a member starts is a data race otherwise.
	// etcd reads it to build its zap logger (so the member gets one of
	// ours) and the HTTP gateway's websocket proxy reads it for a logrus
	// logger (specd speaks gRPC only, so the gateway is off).
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.EnableGRPCGateway = false
	if mod != nil {
		mod(cfg)
	}
	lc, _ := url.Parse("http://127.0.0.1:0")
	lp, _ := url.Parse("http://127.0.0.1:0")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*lc}, []url.URL{*lc}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*lp}, []url.URL{*lp}
	cfg.InitialCluster = cfg.Name + "=" + lp.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	var once sync.Once
	stop = func() { once.Do(e.Close) }
	t.Cleanup(stop)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		t.Fatal("embedded etcd did not become ready")
	}
	return e.Clients[0].Addr().String(), stop
}
