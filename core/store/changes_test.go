package store_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
)

// put writes key=value into the specs bucket of st in one update.
func put(t testing.TB, st bucketstore.Engine, key, value string) {
	t.Helper()
	err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
		return tx.Bucket(bucketstore.BucketSpecs).Put([]byte(key), []byte(value))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChangeStampSeesAnotherStoresCommit: a commit through a second Store on
// the same file (another process, as far as the first one knows) changes
// the first store's stamp, or leaves the previous stamp fresh, so a watcher
// re-reads.
func TestChangeStampSeesAnotherStoresCommit(t *testing.T) {
	a := storetest.Open(t)
	put(t, a, "k", "v")
	b := openStore(t, a.Path(), 2*time.Second)
	for i := range 5 {
		before, fresh := a.ChangeStamp()
		put(t, b, "k", fmt.Sprint(i))
		after, _ := a.ChangeStamp()
		if after == before && !fresh {
			t.Fatalf("round %d: stamp %s unchanged and not fresh after another store's commit", i, after)
		}
	}
}

// TestChangeNotifySeesAnotherProcessesCommit: a commit made by another
// process (this test binary run again as TestChangeNotifyHelperProcess)
// arrives on the ChangeNotify channel of a store on the same file, and the
// channel closes when its context ends.
func TestChangeNotifySeesAnotherProcessesCommit(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd" {
		t.Skip("fsnotify has no watch on " + runtime.GOOS + "; the watcher polls")
	}
	a := storetest.Open(t)
	put(t, a, "k", "before")
	ctx, cancel := context.WithCancel(context.Background())
	changed, err := a.ChangeNotify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChangeNotifyHelperProcess$")
	cmd.Env = append(os.Environ(), "SPECD_TEST_COMMIT_DB="+a.Path())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	<-changed // the test's deadline fails it if nothing comes
	var got string
	if err := a.View(context.Background(), func(tx bucketstore.Tx) error {
		got = string(tx.Bucket(bucketstore.BucketSpecs).Get([]byte("k")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != "from another process" {
		t.Fatalf("k = %q after the other process's commit", got)
	}
	cancel()
	for range changed { // closed once ctx has ended
	}
}

// TestChangeNotifyHelperProcess is the other process of
// TestChangeNotifySeesAnotherProcessesCommit: it writes a key into the store
// named by its environment, and does nothing without it.
func TestChangeNotifyHelperProcess(t *testing.T) {
	db := os.Getenv("SPECD_TEST_COMMIT_DB")
	if db == "" {
		return
	}
	st := openStore(t, db, 10*time.Second)
	defer st.Close()
	put(t, st, "k", "from another process")
}

// TestChangeNotifyWithoutDirectory: with nothing to watch ChangeNotify
// fails, and the caller polls.
func TestChangeNotifyWithoutDirectory(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "missing", ".specd", "specd.db"), time.Second)
	defer st.Close()
	if ch, err := st.ChangeNotify(context.Background()); err == nil {
		t.Fatalf("ChangeNotify on a missing directory = %v, nil; want an error", ch)
	}
}

// BenchmarkChangeStamp is what a quiet store costs a watcher per interval.
func BenchmarkChangeStamp(b *testing.B) {
	st := storetest.Open(b)
	put(b, st, "k", "v")
	for b.Loop() {
		st.ChangeStamp()
	}
}
