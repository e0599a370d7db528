package specstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

var updateStored = flag.Bool("update", false, "rewrite testdata/stored-bytes.sha256 from this build")

// TestStoredBytesGolden: the bytes a run of writes leaves in the store,
// on bbolt and on etcd (the chunk boundary scenario: adds across every
// chunk boundary, removals, moves, a rename, a phase removed, rollbacks;
// then task adds and updates on a small phase) are exactly the bytes the
// reference build stored — every node value, chunk, history record,
// header and index row, key for key. The golden is a SHA-256 of the dump (testdata/stored-bytes.sha256,
// rewritten with -update); on a mismatch the dump is written beside the
// test's temporary files for a diff against the reference build's.
func TestStoredBytesGolden(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		testStoredBytes(t, storetest.Open(t))
	})
	// The engines store the same keys and values.
	t.Run("etcd", func(t *testing.T) {
		ep := etcdtest.StartDefault(t)
		st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, Prefix: "/stored-bytes"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		testStoredBytes(t, st)
	})
}

func testStoredBytes(t *testing.T, eng bucketstore.Store) {
	port := &domainStore{Store: eng, Repo: specstore.New(eng, clock), archive: researchstore.New(eng, clock)}
	testChildrenAcrossChunkBoundaries(t, func(testing.TB, func() time.Time) Port { return port })
	ctx := context.Background()
	id := createSpec(t, port, "small")
	if _, err := addPhase(t, port, id, "p", core.Mutation{}); err != nil {
		t.Fatal(err)
	}
	var first string
	for i := range 5 {
		if _, err := port.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "authoring.task-add", Author: "a <b> & c"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			sp.Clock = clock
			tid, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint("task \u2028 <", i, ">")})
			if first == "" {
				first = tid
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := port.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "task.start"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		sp.Edit(first).Title = "renamed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var dump strings.Builder
	if err := eng.View(ctx, func(tx bucketstore.Tx) error {
		for _, name := range [][]byte{bucketstore.BucketSpecs, bucketstore.BucketSpecList, bucketstore.BucketLifecycle} {
			dumpBucket(&dump, string(name), tx.Bucket(name))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(dump.String()))
	got := hex.EncodeToString(sum[:]) + "\n"
	golden := filepath.Join("testdata", "stored-bytes.sha256")
	if *updateStored {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		out := filepath.Join(t.TempDir(), "stored-bytes.dump")
		_ = os.WriteFile(out, []byte(dump.String()), 0o644)
		if keep := os.Getenv("SPECD_STORED_DUMP"); keep != "" {
			_ = os.WriteFile(keep, []byte(dump.String()), 0o644)
		}
		t.Errorf("the stored bytes differ from the reference build's: sha256 %s, want %s (set SPECD_STORED_DUMP=file to keep the dump)", strings.TrimSpace(got), strings.TrimSpace(string(want)))
	}
}

// dumpBucket writes every key and value of b (nested buckets recursively)
// as quoted lines under path.
func dumpBucket(w *strings.Builder, path string, b bucketstore.Bucket) {
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, v []byte) error {
		if v == nil && b.Bucket(k) != nil {
			return nil // bbolt lists nested buckets too
		}
		fmt.Fprintf(w, "%q %q %q\n", path, k, v)
		return nil
	})
	var nested []string
	_ = b.ForEachBucket(func(k []byte) error {
		nested = append(nested, string(k))
		return nil
	})
	for _, k := range nested {
		dumpBucket(w, path+"/"+k, b.Bucket([]byte(k)))
	}
}
