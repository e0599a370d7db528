package store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// TestMigrationBuildsJournalTaskIndex opens a layout-1 file (a spec whose
// journal has no task index) and checks that the migration to layout 2
// indexes every entry, in the same transaction that records the version.
func TestMigrationBuildsJournalTaskIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	ctx := context.Background()
	s, err := Open(Options{Path: path, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clock := core.Clock(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	h, err := s.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "old"}, clock, exists)
		var j []specs.JournalEntry
		for i := 0; i < 6; i++ {
			j = append(j, specs.JournalEntry{Timestamp: "2026-01-01T00:00:00Z", EntryType: "note", Title: strconv.Itoa(i), TaskID: "task-1-" + strconv.Itoa(i%2+1)})
		}
		return sp, j, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Turn the file back into layout 1.
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("specs")).Bucket([]byte(h.SpecID)).DeleteBucket([]byte("journal_task")); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("1"))
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s2, err := Open(Options{Path: path, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	info, err := s2.Info(ctx)
	if err != nil || info.SchemaVersion != SchemaVersion {
		t.Fatalf("after migration: %+v %v", info, err)
	}
	err = s2.ReadSpec(ctx, h.SpecID, func(_ *specs.Spec, j specs.JournalReader) error {
		got, more, err := j.TaskEntries("task-1-2", 0, 10, nil)
		if err != nil || more || len(got) != 3 || got[0].Title != "5" || got[2].Title != "1" {
			t.Fatalf("task entries after migration: %+v %v %v", got, more, err)
		}
		page, more, _ := j.TaskEntries("task-1-2", got[0].Seq, 1, nil)
		if len(page) != 1 || page[0].Title != "3" || !more {
			t.Fatalf("paging the index: %+v %v", page, more)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
