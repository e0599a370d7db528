package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/specs"
)

func newSpec(t *testing.T, s *Store, name string) string {
	t.Helper()
	h, err := s.CreateSpec(context.Background(), specs.RepoWriteOptions{Action: "authoring.spec-create"},
		func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: name, Mission: "m"}, time.Now, exists)
			return sp, nil, err
		})
	if err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}

// TestVerifyReportsBrokenInvariants: specd check's Verify finds nothing in
// a sound store and names the spec whose stored header contradicts its
// nodes.
func TestVerifyReportsBrokenInvariants(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "specd.db"), nil)
	ctx := context.Background()
	good, bad := newSpec(t, s, "good"), newSpec(t, s, "bad")
	if f, err := s.Verify(ctx); err != nil || len(f) != 0 {
		t.Fatalf("sound store: %v %v", f, err)
	}
	err := s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("specs")).Bucket([]byte(bad))
		var h specs.Header
		if err := json.Unmarshal(b.Get([]byte("header")), &h); err != nil {
			return err
		}
		h.TotalTasks = 99
		raw, err := json.Marshal(h)
		if err != nil {
			return err
		}
		return b.Put([]byte("header"), raw)
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Verify(ctx)
	if err != nil || len(f) == 0 {
		t.Fatalf("broken header not found: %v %v", f, err)
	}
	for _, x := range f {
		if x.SpecID != bad {
			t.Fatalf("finding about %s (only %s is broken, %s is sound): %v", x.SpecID, bad, good, x)
		}
	}
}

// TestBackupWhileWriting: a backup taken while another store (another
// process, in effect) writes continuously is complete and consistent, an
// existing destination is refused unless forced, and nothing but the
// destination is left behind.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "specd.db")
	writer := openTest(t, path, nil)
	id := newSpec(t, writer, "busy")
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, err := writer.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
				j.Append(specs.JournalEntry{Timestamp: "t", EntryType: "note", Title: fmt.Sprint(i)})
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	time.Sleep(30 * time.Millisecond)
	backer := openTest(t, path, func(o *Options) { o.LockTimeout = 5 * time.Second })
	dst := filepath.Join(t.TempDir(), "copy.db")
	n, err := backer.Backup(ctx, dst, false)
	if err != nil || n == 0 {
		t.Fatalf("backup while writing: %d %v", n, err)
	}
	if _, err := backer.Backup(ctx, dst, false); !errors.Is(err, ErrBackupExists) {
		t.Fatalf("second backup onto the same file: %v", err)
	}
	if _, err := backer.Backup(ctx, dst, true); err != nil {
		t.Fatalf("forced backup: %v", err)
	}
	close(stop)
	wg.Wait()
	copyStore := openTest(t, dst, nil)
	if f, err := copyStore.Verify(ctx); err != nil || len(f) != 0 {
		t.Fatalf("the backup is not sound: %v %v", f, err)
	}
	if err := copyStore.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error { return nil }); err != nil {
		t.Fatalf("the backup lacks the spec: %v", err)
	}
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), "*"))
	hidden, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".*"))
	for _, e := range append(entries, hidden...) {
		if b := filepath.Base(e); b != "copy.db" && !strings.HasPrefix(b, "copy.db.") {
			t.Fatalf("left behind: %s", b)
		}
	}
}
