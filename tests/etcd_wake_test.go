package tests

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// wakeFeed is the change feed a subscription watcher can be woken by
// (tools wires it when the store has one).
type wakeFeed interface {
	ChangeNotify(ctx context.Context) (<-chan struct{}, error)
}

// TestEtcdChangeWakesWatcherWithoutPolling: on etcd, a change made
// through another server (another store on the same prefix) reaches an
// in-process subscriber of this one (the board's live view) through the
// store's watch alone: the watcher's polls are an hour apart, so only the
// wake can bring the notification.
func TestEtcdChangeWakesWatcherWithoutPolling(t *testing.T) {
	ep := etcdtest.Start(t, 4096)
	a, b := openEtcd(t, ep, "/wake"), openEtcd(t, ep, "/wake")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	repoA, repoB := specstore.New(a, nil), specstore.New(b, nil)
	id := seedSpec(t, repoA, 3)
	w := mcptool.Watch{
		Key:          func(uri string) string { return uri },
		Versions:     repoB.SpecVersions,
		Stamp:        b.ChangeStamp,
		Interval:     time.Hour,
		WakeInterval: time.Hour,
	}
	if f, ok := any(b).(wakeFeed); ok {
		w.Wake = f.ChangeNotify
	}
	subs := mcptool.InstallSubscriptions(server.NewMCPServer("wake", "1", server.WithResourceCapabilities(true, true)), w)
	got := make(chan string, 4)
	subs.Watch(ctx, id, func(uri string) { got <- uri })
	if _, err := repoA.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "test"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, err := specs.AddPhase(sp, specs.PhaseInput{Title: "through A"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-got:
		if uri != id {
			t.Fatalf("notified for %s, want %s", uri, id)
		}
	case <-time.After(30 * time.Second): // a hang bound: the next poll is an hour away
		t.Fatal("a change through another server did not wake the watcher (it would wait for the next poll)")
	}
}

// BenchmarkEtcdSubscriptionLatency measures, on one embedded etcd member,
// the time from a commit through server A to the
// notifications/resources/updated it causes at a client subscribed on
// server B (tools' real wiring: its poll interval and, when the store has
// one, its change feed), over 20 commits at uneven intervals
// (latency-median-ms, latency-max-ms). Use -benchtime=1x.
func BenchmarkEtcdSubscriptionLatency(b *testing.B) {
	for b.Loop() {
		ep := etcdtest.Start(b, 4096)
		prefix := "/latency/" + strconv.Itoa(b.N)
		sa, sb := openEtcd(b, ep, prefix), openEtcd(b, ep, prefix)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		repoA := specstore.New(sa, nil)
		id := seedSpec(b, repoA, 3)
		cb := etcdClient(b, ctx, sb)
		arrived := make(chan time.Time, 64)
		cb.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == mcp.MethodNotificationResourceUpdated {
				arrived <- time.Now()
			}
		})
		req := mcp.SubscribeRequest{}
		req.Params.URI = "specd://specs/" + id
		//lint:ignore SA1019 resources/subscribe is the 2025-11-25 protocol's subscription
		if err := cb.Subscribe(ctx, req); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second) // the watcher and its feed are up
		lat := notifyLatencies(ctx, b, repoA, id, arrived)
		cancel()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "latency-median-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "latency-max-ms")
	}
}
