package etcdstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
)

// layout2Meta writes the meta keys a layout-2 build wrote when it first
// used prefix (install id, schema version 2, creation time), as if that
// build had created the store.
func layout2Meta(t *testing.T, cli *clientv3.Client, prefix string, schema int) {
	t.Helper()
	k := func(name string) string { return prefix + "/meta\x00" + name }
	ctx := context.Background()
	for name, v := range map[string]string{"install_id": "old-build-id", "schema_version": strconv.Itoa(schema), "created_at": "2026-11-20T00:00:00Z"} {
		if _, err := cli.Put(ctx, k(name), v); err != nil {
			t.Fatal(err)
		}
	}
}

func storedSchema(t *testing.T, cli *clientv3.Client, prefix string) string {
	t.Helper()
	resp, err := cli.Get(context.Background(), prefix+"/meta\x00schema_version")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("schema_version: %v %v", resp, err)
	}
	return string(resp.Kvs[0].Value)
}

// TestLayout2ClusterIsMarkedWithThisLayout: a prefix a layout-2 build
// created says schema 2 in its meta. This build marks it with its own
// layout before it writes anything (as bbolt's open does to a file), so a
// layout-2 server started on the cluster afterwards refuses it (its rule:
// a schema above 2 is UNAVAILABLE, "Upgrade specd") instead of reading the
// chunked nodes this build writes as damaged (INTERNAL_ERROR). Its install
// id is kept, and Info reports the layout stored.
func TestLayout2ClusterIsMarkedWithThisLayout(t *testing.T) {
	ep := startEtcd(t, 4096)
	st := openStore(t, ep, nil)
	layout2Meta(t, st.Client(), st.Prefix(), 2)
	ctx := context.Background()
	h, err := repoOf(st).CreateSpec(ctx, specs.RepoWriteOptions{Action: "authoring.spec-create"},
		func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: "upgraded", Mission: "m"}, clock, exists)
			if err == nil {
				_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
			}
			return sp, nil, err
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repoOf(st).MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: "t"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := storedSchema(t, st.Client(), st.Prefix()); got != strconv.Itoa(bucketstore.SchemaVersion) {
		t.Errorf("after this build wrote chunked nodes the cluster's meta says schema %s, want %d: a layout-2 server would read them as damaged", got, bucketstore.SchemaVersion)
	}
	id, err := st.InstallID(ctx)
	if err != nil || id != "old-build-id" {
		t.Errorf("install id %q %v, want the layout-2 build's", id, err)
	}
	// Another server of this build on the same prefix agrees.
	other := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = st.Prefix() })
	if info, err := other.Info(ctx); err != nil || info.SchemaVersion != bucketstore.SchemaVersion {
		t.Errorf("info: %+v %v", info, err)
	}
}

// TestNewerLayoutClusterIsRefused: a prefix whose meta names a layout
// newer than this build's is refused with UNAVAILABLE naming both, and
// its meta is left as it is.
func TestNewerLayoutClusterIsRefused(t *testing.T) {
	ep := startEtcd(t, 4096)
	st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, Prefix: "/newer-layout"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	newer := bucketstore.SchemaVersion + 1
	layout2Meta(t, st.Client(), st.Prefix(), newer)
	_, err = st.InstallID(context.Background())
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != errcode.Unavailable || ce.Details["schema_version"] != newer {
		t.Fatalf("a newer layout: %v, want UNAVAILABLE naming schema %d", err, newer)
	}
	if got := storedSchema(t, st.Client(), st.Prefix()); got != strconv.Itoa(newer) {
		t.Errorf("the refused store's schema became %s", got)
	}
}
