package specstore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs/specstore"
)

// TestChangeStampSeesAnotherStoresCommit: a commit through a second Store on
// the same file (another process, as far as the first one knows) changes
// the first store's stamp, or leaves the previous stamp fresh, so a watcher
// re-reads; SpecVersions then shows the new version.
func TestChangeStampSeesAnotherStoresCommit(t *testing.T) {
	ctx := context.Background()
	a, ast := repoOver(t)
	id := createSpec(t, a, "watched")
	bst, err := store.Open(store.Options{Path: ast.Path(), LockTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bst.Close() })
	b := specstore.New(bst, nil)
	for i := range 5 {
		before, fresh := ast.ChangeStamp()
		v0, err := a.SpecVersions(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := addPhase(t, b, id, "from b", core.Mutation{}); err != nil {
			t.Fatal(err)
		}
		after, _ := ast.ChangeStamp()
		if after == before && !fresh {
			t.Fatalf("round %d: stamp %s unchanged and not fresh after another store's commit", i, after)
		}
		v1, err := a.SpecVersions(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if v1[id] != v0[id]+1 {
			t.Fatalf("round %d: version %d → %d, want +1", i, v0[id], v1[id])
		}
	}
}

// TestSpecVersions: missing ids are absent; a store whose file does not
// exist yet answers an empty map and is not created by the read.
func TestSpecVersions(t *testing.T) {
	ctx := context.Background()
	st, eng := repoOver(t)
	path := eng.Path()
	got, err := st.SpecVersions(ctx, []string{"nope-2026-01-01-001"})
	if err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SpecVersions created the file: %v", err)
	}
	if tok, _ := eng.ChangeStamp(); tok != "absent" {
		t.Fatalf("stamp of a missing file: %s", tok)
	}
	id := createSpec(t, st, "one")
	got, err = st.SpecVersions(ctx, []string{id, "nope-2026-01-01-001", "../x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[id] != 1 {
		t.Fatalf("versions: %v", got)
	}
}

// BenchmarkSpecVersions is what one read of a subscription watcher costs
// when the file changed (10 subscribed specs; the store closes the file
// between reads, as it does when the watcher is its only user).
func BenchmarkSpecVersions(b *testing.B) {
	st, _ := repoOver(b, func(o *store.Options) { o.Linger = -1 })
	var ids []string
	for range 10 {
		ids = append(ids, createSpec(b, st, "spec"))
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := st.SpecVersions(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
}
