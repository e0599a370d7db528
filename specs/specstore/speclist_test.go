package specstore_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// wantRows is spec list's every-spec answer built from the specs' headers
// (what the listing read before the index).
func wantRows(t *testing.T, st Port, folder string) []specs.RepoSummary {
	t.Helper()
	out := []specs.RepoSummary{}
	ids, err := st.SpecIDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		var h specs.Header
		if err := st.ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error {
			h = sp.Header // fn may run more than once (specs.Repo)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		l := string(h.Lifecycle)
		if l == "" {
			l = string(specs.LifecyclePending)
		}
		if folder != "all" && l != folder {
			continue
		}
		out = append(out, specs.RepoSummary{SpecID: h.SpecID, Title: h.Title, Lifecycle: l, Status: string(h.Status),
			TotalTasks: h.TotalTasks, CompletedTasks: h.CompletedTasks, ProgressPercentage: h.ProgressPercentage,
			CurrentPhase: h.CurrentPhase, Version: h.Version, LastUpdated: h.LastUpdated})
	}
	return out
}

// checkListed holds every listing (every spec, each folder, and pages of
// one row) to the headers, and specd check's findings to none.
func checkListed(t *testing.T, st Port, step string) {
	t.Helper()
	for _, folder := range []string{"all", "pending", "active", "completed"} {
		want := wantRows(t, st, folder)
		got, next, err := st.ListSpecs(context.Background(), folder, "", 100)
		if err != nil || next != "" {
			t.Fatalf("%s: list %s: next %q, %v", step, folder, next, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: list %s:\n got %+v\nwant %+v", step, folder, got, want)
		}
		var paged []specs.RepoSummary
		for after := ""; ; {
			rows, next, err := st.ListSpecs(context.Background(), folder, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, rows...)
			if next == "" {
				break
			}
			after = next
		}
		if len(paged) != len(want) || (len(want) > 0 && !reflect.DeepEqual(paged, want)) {
			t.Fatalf("%s: list %s a row a page: %+v", step, folder, paged)
		}
	}
	if f := findings(t, st); len(f) != 0 {
		t.Fatalf("%s: check: %v", step, f)
	}
}

func findings(t *testing.T, st Port) []bucketstore.Finding {
	t.Helper()
	var out []bucketstore.Finding
	if err := st.View(context.Background(), func(tx bucketstore.Tx) error {
		var err error
		out, err = st.CheckSpecs(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// testSpecListIndex: spec list reads the index kept with the specs, and
// every change of a listed field — create, a lifecycle move, a title
// change, any mutation (version, progress), import over a spec, rollback —
// updates it in its own transaction, so a listing always equals the
// headers and specd check finds nothing. A store written without the index
// lists the same (the first listing builds it); an index that no longer
// matches a header (an older specd wrote the spec) is reported by check
// and rebuilt by RebuildSpecIndex.
func testSpecListIndex(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	a, b, c := createSpec(t, st, "alpha"), createSpec(t, st, "beta"), createSpec(t, st, "gamma")
	checkListed(t, st, "create")

	if _, err := st.MutateSpec(ctx, b, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		if _, err := specs.MoveLifecycle(sp, specs.LifecycleActive, false); err != nil {
			return err
		}
		sp.Header.Title = "Beta, renamed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, st, "lifecycle move and title change")

	if _, err := addPhase(t, st, a, "work", core.Mutation{}); err != nil {
		t.Fatal(err)
	}
	checkListed(t, st, "a mutation")

	sp, err := specs.NewSpec(specs.NewSpecInput{Name: "gamma", Mission: "again"}, clock, func(string) bool { return false })
	if err != nil || sp.Header.SpecID != c {
		t.Fatalf("import spec %q: %v", sp.Header.SpecID, err)
	}
	sp.Header.Title = "Gamma, imported"
	sp.Header.Lifecycle = specs.LifecycleCompleted
	if err := st.ImportSpec(ctx, sp, nil, true); err != nil {
		t.Fatal(err)
	}
	checkListed(t, st, "import over a spec")

	if _, err := st.RollbackSpec(ctx, b, 1, specs.RepoWriteOptions{}, func() string { return "2026-03-05T00:00:00Z" }); err != nil {
		t.Fatal(err)
	}
	checkListed(t, st, "rollback")

	// A store from before the index: no marker, no rows, empty folder
	// values. A new server (Repo) lists it the same, and builds it.
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		for _, name := range [][]byte{bucketstore.BucketSpecList, bucketstore.BucketLifecycle} {
			bk := tx.Bucket(name)
			var keys [][]byte
			_ = bk.ForEach(func(k, v []byte) error { keys = append(keys, append([]byte{}, k...)); return nil })
			for _, k := range keys {
				if err := bk.Delete(k); err != nil {
					return err
				}
				if string(name) == string(bucketstore.BucketLifecycle) {
					if err := bk.Put(k, []byte{}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	legacy := &domainStore{Store: st.Store, Repo: specstore.New(st.Store, nil), archive: st.archive}
	checkListed(t, legacy, "a store without the index")
	var built bool
	_ = st.View(ctx, func(tx bucketstore.Tx) error {
		built = tx.Bucket(bucketstore.BucketSpecList).Get([]byte("\x00index")) != nil
		return nil
	})
	if !built {
		t.Fatal("listing a store without the index did not build it")
	}

	// An older specd changes a title without the index.
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		spec := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(a))
		var h map[string]any
		if err := json.Unmarshal(spec.Get([]byte(bucketstore.SpecHeaderKey)), &h); err != nil {
			return err
		}
		h["title"] = "Alpha, by an older specd"
		raw, _ := json.Marshal(h)
		return spec.Put([]byte(bucketstore.SpecHeaderKey), raw)
	}); err != nil {
		t.Fatal(err)
	}
	f := findings(t, st)
	if len(f) == 0 || !strings.Contains(f[0].Problem, "spec list index") || f[0].SpecID != a {
		t.Fatalf("check of a stale index: %v", f)
	}
	if err := st.RebuildSpecIndex(ctx); err != nil {
		t.Fatal(err)
	}
	checkListed(t, st, "rebuilt")
}
