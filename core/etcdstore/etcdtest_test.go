package etcdstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs/specstore"
)

var prefixes atomic.Int64

// The domain stores over each engine a test opened (one each, so their
// caches live as long as the engine, as in a server).
var (
	repos     sync.Map // bucketstore.Engine → *specstore.Repo
	researchs sync.Map // bucketstore.Engine → *researchstore.Store
)

// repoOf is the spec repository over e.
func repoOf(e bucketstore.Engine) *specstore.Repo {
	r, _ := repos.LoadOrStore(e, specstore.New(e, clock))
	return r.(*specstore.Repo)
}

// researchOf is the archive and digest store over e.
func researchOf(e bucketstore.Engine) *researchstore.Store {
	r, _ := researchs.LoadOrStore(e, researchstore.New(e, clock))
	return r.(*researchstore.Store)
}

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

// TestConformance runs the store port's conformance suite on a real
// (embedded) etcd, one prefix per test.
func TestConformance(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	storetest.Run(t, func(t testing.TB) bucketstore.Store {
		return openStore(t, ep, func(o *etcdstore.Options) { o.MaxTxnOps = 4096 })
	})
}
