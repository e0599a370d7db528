package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
)

// TestBackupWhileWriting: a backup taken while another store (another
// process, in effect) writes continuously is complete and consistent, an
// existing destination is refused unless forced, and nothing but the
// destination is left behind.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "specd.db")
	writer := openTest(t, path, nil)
	ctx := context.Background()
	err := writer.Update(ctx, func(tx bucketstore.Tx) error {
		return tx.Bucket(bucketstore.BucketSpecs).Put([]byte("busy"), []byte("0"))
	})
	if err != nil {
		t.Fatal(err)
	}
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
			err := writer.Update(ctx, func(tx bucketstore.Tx) error {
				return tx.Bucket(bucketstore.BucketSpecs).Put([]byte(fmt.Sprint("key-", i)), []byte(fmt.Sprint(i)))
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
	if f, err := copyStore.Verify(ctx, nil); err != nil || len(f) != 0 {
		t.Fatalf("the backup is not sound: %v %v", f, err)
	}
	err = copyStore.View(ctx, func(tx bucketstore.Tx) error {
		if tx.Bucket(bucketstore.BucketSpecs).Get([]byte("busy")) == nil {
			return errors.New("the backup lacks a key written before it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), "*"))
	hidden, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".*"))
	for _, e := range append(entries, hidden...) {
		if b := filepath.Base(e); b != "copy.db" && !strings.HasPrefix(b, "copy.db.") {
			t.Fatalf("left behind: %s", b)
		}
	}
}

// TestVerifyWhileWriting: Verify, a read transaction over one consistent
// snapshot, reports no finding on a sound store while writers of the same
// store commit concurrently (grouped commits that grow the file, free pages
// and reuse them, and fns that fail and are undone) and another store of
// the same file takes its turns writing.
func TestVerifyWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "specd.db")
	long := func(o *Options) { o.LockTimeout = 5 * time.Second }
	s := openTest(t, path, long)
	other := openTest(t, path, long) // another process, in effect: the file changes hands
	ctx := context.Background()
	const writers, rounds = 5, 60
	errFail := errors.New("this fn fails and is undone")
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if w == 0 {
				st = other
			}
			for i := range rounds {
				err := st.Update(ctx, func(tx bucketstore.Tx) error {
					b := tx.Bucket(bucketstore.BucketSpecs)
					// Values of a few pages each: the file grows, bbolt
					// remaps, and the old pages are freed and reused.
					if err := b.Put([]byte(fmt.Sprint("w", w, "-", i%7)), []byte(strings.Repeat(fmt.Sprint(i), 3000))); err != nil {
						return err
					}
					if i%5 == 0 {
						if err := b.Delete([]byte(fmt.Sprint("w", w, "-", (i+3)%7))); err != nil {
							return err
						}
					}
					if i%4 == 3 {
						return errFail
					}
					return nil
				})
				if err != nil && !errors.Is(err, errFail) {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var verr error
	for n := 0; verr == nil; n++ {
		select {
		case <-done:
			n = -1 // the writers are done: one last verify, then stop
		default:
		}
		f, err := s.Verify(ctx, nil)
		switch {
		case err != nil:
			verr = fmt.Errorf("verify %d: %w", n, err)
		case len(f) != 0:
			verr = fmt.Errorf("verify %d while writing reported findings on a sound store: %v", n, f)
		case n < 0:
			return
		}
	}
	<-done // the writers end before the store closes
	t.Fatal(verr)
}
