package tests

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/flags"
)

// TestEmbeddedEtcdStartsBesideFlagsOpen starts embedded etcd members while
// flag files are opened on another goroutine. Opening a flag file swaps the
// os.Stderr variable around the flagd provider's start (flags.quietProvider);
// an embedded member used to build its zap logger from os.Stderr at that
// moment, which the race detector reported (and failed every test running
// beside it) when a parallel flags test met a parallel etcd test. The test
// members now log through a logger of their own. Run with -race.
func TestEmbeddedEtcdStartsBesideFlagsOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd members")
	}
	file := writeFlagFile(t, nil)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			s, err := flags.Open(context.Background(), flags.Options{Path: file})
			if err != nil {
				t.Error(err)
				return
			}
			s.Close()
		}
	}()
	for range 3 {
		_, kill := etcdtest.StartStoppable(t, 128)
		kill()
	}
	stop.Store(true)
	wg.Wait()
}
