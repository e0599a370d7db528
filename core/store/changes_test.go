package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestChangeStampSeesAnotherStoresCommit: a commit through a second Store on
// the same file (another process, as far as the first one knows) changes
// the first store's stamp, or leaves the previous stamp fresh, so a watcher
// re-reads; SpecVersions then shows the new version.
func TestChangeStampSeesAnotherStoresCommit(t *testing.T) {
	ctx := context.Background()
	a := storetest.Open(t)
	id := createSpec(t, a, "watched")
	b := openStore(t, a.Path(), 2*time.Second)
	for i := range 5 {
		before, fresh := a.ChangeStamp()
		v0, err := a.SpecVersions(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := addPhase(t, b, id, "from b", core.Mutation{}); err != nil {
			t.Fatal(err)
		}
		after, _ := a.ChangeStamp()
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

// TestChangeNotifySeesAnotherProcessesCommit: a commit made by another
// process (this test binary run again as TestChangeNotifyHelperProcess)
// arrives on the ChangeNotify channel of a store on the same file, and the
// channel closes when its context ends.
func TestChangeNotifySeesAnotherProcessesCommit(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd" {
		t.Skip("fsnotify has no watch on " + runtime.GOOS + "; the watcher polls")
	}
	a := storetest.Open(t)
	id := createSpec(t, a, "watched")
	v0, err := a.SpecVersions(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	changed, err := a.ChangeNotify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChangeNotifyHelperProcess$")
	cmd.Env = append(os.Environ(), "SPECD_TEST_COMMIT_DB="+a.Path(), "SPECD_TEST_COMMIT_SPEC="+id)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	<-changed // the test's deadline fails it if nothing comes
	v, err := a.SpecVersions(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if v[id] != v0[id]+1 {
		t.Fatalf("version %d after the other process's commit, want %d", v[id], v0[id]+1)
	}
	cancel()
	for range changed { // closed once ctx has ended
	}
}

// TestChangeNotifyHelperProcess is the other process of
// TestChangeNotifySeesAnotherProcessesCommit: it adds a phase to a spec of
// the store named by its environment, and does nothing without it.
func TestChangeNotifyHelperProcess(t *testing.T) {
	db, id := os.Getenv("SPECD_TEST_COMMIT_DB"), os.Getenv("SPECD_TEST_COMMIT_SPEC")
	if db == "" {
		return
	}
	st := openStore(t, db, 10*time.Second)
	defer st.Close()
	if _, err := addPhase(t, st, id, "from another process", core.Mutation{}); err != nil {
		t.Fatal(err)
	}
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

// TestSpecVersions: missing ids are absent; a store whose file does not
// exist yet answers an empty map and is not created by the read.
func TestSpecVersions(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	path := st.Path()
	got, err := st.SpecVersions(ctx, []string{"nope-2026-01-01-001"})
	if err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SpecVersions created the file: %v", err)
	}
	if tok, _ := st.ChangeStamp(); tok != "absent" {
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

// BenchmarkChangeStamp is what a quiet store costs a watcher per interval;
// BenchmarkSpecVersions what one read costs when the file changed (10
// subscribed specs; the store closes the file between reads, as it does
// when the watcher is its only user).
func BenchmarkChangeStamp(b *testing.B) {
	st := storetest.Open(b)
	createSpec(b, st, "one")
	for b.Loop() {
		st.ChangeStamp()
	}
}

func BenchmarkSpecVersions(b *testing.B) {
	st := storetest.Open(b, func(o *store.Options) { o.Linger = -1 })
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

// addPhase adds a phase to spec id through st as one mutation (the
// conformance suite has its own over the port).
func addPhase(t testing.TB, st *store.Store, id, title string, m core.Mutation) (specs.RepoWriteResult, error) {
	t.Helper()
	return st.MutateSpec(context.Background(), id, specs.RepoWriteOptions{DryRun: m.DryRun, ExpectedVersion: m.ExpectedVersion, Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, err := specs.AddPhase(sp, specs.PhaseInput{Title: title})
		return err
	})
}
