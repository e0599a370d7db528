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
