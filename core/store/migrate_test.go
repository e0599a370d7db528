package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
)

// TestMigrationBuildsJournalTaskIndex opens a layout-1 file (a spec whose
// journal has no task index) and checks that the migration to layout 2
// indexes every entry that names a task, in the same transaction that
// records the version.
func TestMigrationBuildsJournalTaskIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	ctx := context.Background()
	s, err := Open(Options{Path: path, LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const specID = "old-2026-01-01-001"
	err = s.Update(ctx, func(tx bucketstore.Tx) error {
		spec, err := tx.Bucket(bucketstore.BucketSpecs).CreateBucket([]byte(specID))
		if err != nil {
			return err
		}
		j, err := spec.CreateBucket(bucketstore.BucketJournal)
		if err != nil {
			return err
		}
		for i := 0; i < 7; i++ {
			seq, err := j.NextSequence()
			if err != nil {
				return err
			}
			entry := `{"title":"` + strconv.Itoa(i) + `","task_id":"task-1-` + strconv.Itoa(i%2+1) + `"}`
			if i == 6 {
				entry = `{"title":"no task"}`
			}
			if err := j.Put(binary.BigEndian.AppendUint64(nil, seq), []byte(entry)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Make the file a layout-1 file.
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("1")) })
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
	var got []string
	err = s2.View(ctx, func(tx bucketstore.Tx) error {
		index := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(specID)).Bucket(bucketstore.BucketJournalTask)
		if index == nil {
			return errors.New("no journal_task index after the migration")
		}
		return index.ForEach(func(k, _ []byte) error { got = append(got, fmt.Sprintf("%q", k)); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, task := range []string{"task-1-1", "task-1-2"} {
		for seq := uint64(1); seq <= 6; seq++ {
			if task == "task-1-"+strconv.Itoa(int(seq-1)%2+1) {
				want = append(want, fmt.Sprintf("%q", bucketstore.TaskIndexKey(task, seq)))
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("journal_task index\n%v\nwant\n%v", got, want)
	}
	if err := s2.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
