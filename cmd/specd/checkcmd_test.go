package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// TestCheckRebuildsTheSpecListIndex: specd check reports a spec list index
// that no longer matches a header (an older specd renamed the spec) and
// exits 1; specd check --rebuild-index rewrites it and exits 0.
func TestCheckRebuildsTheSpecListIndex(t *testing.T) {
	db := filepath.Join(t.TempDir(), "specd.db")
	st, err := store.Open(store.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	repo := specstore.New(st, nil)
	h, err := repo.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "listed", Mission: "m"}, migrateClock, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.ListSpecs(ctx, "all", "", 10); err != nil {
		t.Fatal(err)
	}
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(h.SpecID))
		var hdr map[string]any
		if err := json.Unmarshal(b.Get([]byte(bucketstore.SpecHeaderKey)), &hdr); err != nil {
			return err
		}
		hdr["title"] = "renamed by an older specd"
		raw, _ := json.Marshal(hdr)
		return b.Put([]byte(bucketstore.SpecHeaderKey), raw)
	}); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	var out, errb bytes.Buffer
	if code := checkCmd([]string{"--db", db}, &out, &errb); code != 1 || !strings.Contains(out.String(), "spec list index") {
		t.Fatalf("check of a stale index: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := checkCmd([]string{"--rebuild-index", "--db", db}, &out, &errb); code != 0 || !strings.Contains(out.String(), "rebuilt") {
		t.Fatalf("check --rebuild-index: exit %d\n%s%s", code, out.String(), errb.String())
	}
}
