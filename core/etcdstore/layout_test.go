package etcdstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
)

// TestSameRecordsAsBolt: the same operations through bbolt and through etcd
// store the same buckets, keys, values and sequences byte for byte (the
// Export of both is one set of records), so a store migrated either way
// hashes the same and either engine reads the other's records.
func TestSameRecordsAsBolt(t *testing.T) {
	ep := startEtcd(t, 4096)
	engines := map[string]bucketstore.Store{
		"bbolt": storetest.Open(t, func(o *store.Options) { o.Now = clock }),
		"etcd": openStore(t, ep, func(o *etcdstore.Options) {
			o.MaxTxnOps = 4096
			o.Now = clock
		}),
	}
	records := map[string][]string{}
	for name, st := range engines {
		ctx := context.Background()
		h, err := repoOf(st).CreateSpec(ctx, specs.RepoWriteOptions{Action: "authoring.spec-create"},
			func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
				sp, err := specs.NewSpec(specs.NewSpecInput{Name: "same", Mission: "m"}, clock, exists)
				return sp, nil, err
			})
		if err != nil {
			t.Fatalf("%s: create: %v", name, err)
		}
		// Four mutations with two versions kept: history is pruned.
		for i := range 4 {
			_, err := repoOf(st).MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{Action: "authoring.phase-add", Keep: 2},
				func(sp *specs.Spec, j specs.JournalWriter) error {
					sp.Clock = clock
					res, err := specs.AddPhase(sp, specs.PhaseInput{Title: fmt.Sprintf("phase %d", i)})
					if err != nil {
						return err
					}
					if _, err := specs.AddTask(sp, res.PhaseID, specs.TaskInput{Title: "task", TaskCategory: "implementation"}); err != nil {
						return err
					}
					j.Append(specs.JournalEntry{Title: "added", Content: "x", EntryType: "note", TaskID: "task-1-1", Timestamp: specs.FormatTime(clock())})
					return nil
				})
			if err != nil {
				t.Fatalf("%s: mutate %d: %v", name, i, err)
			}
		}
		if _, err := repoOf(st).RollbackSpec(ctx, h.SpecID, 4, specs.RepoWriteOptions{Action: "spec.rollback", Keep: 2}, func() string { return specs.FormatTime(clock()) }); err != nil {
			t.Fatalf("%s: rollback: %v", name, err)
		}
		if _, _, err := researchOf(st).ArchivePut(ctx, []byte("archived text"), research.ArchiveMeta{ContentID: "c1", ItemType: "note"}); err != nil {
			t.Fatalf("%s: archive: %v", name, err)
		}
		if _, err := researchOf(st).DigestPut(ctx, research.DigestRecord{SourceID: "src", QueryHash: "q1", Payload: []byte(`{"a":1}`)}); err != nil {
			t.Fatalf("%s: digest: %v", name, err)
		}
		err = st.Export(ctx, func(e bucketstore.Entry) error {
			if e.Key == nil && len(e.Bucket) == 1 && e.Seq == 0 {
				return nil // a top-level bucket is the engine's (etcd keeps no marker of it), as in specd migrate
			}
			records[name] = append(records[name], fmt.Sprintf("%q key=%q value=%q seq=%d", e.Bucket, e.Key, e.Value, e.Seq))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: export: %v", name, err)
		}
		slices.Sort(records[name]) // bbolt walks nested buckets among keys, etcd after them
	}
	b, e := records["bbolt"], records["etcd"]
	if len(b) < 20 {
		t.Fatalf("bbolt exported only %d records: %q", len(b), b)
	}
	for _, r := range b {
		if !slices.Contains(e, r) {
			t.Errorf("only bbolt has %s", r)
		}
	}
	for _, r := range e {
		if !slices.Contains(b, r) {
			t.Errorf("only etcd has %s", r)
		}
	}
}
