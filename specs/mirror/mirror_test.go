package mirror_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/mirror"
	"github.com/specd/specd/specs/specstore"
)

// These tests run the mirror over a real bbolt store and a real workspace
// folder (t.TempDir()).

const basicID = "csv-export-2025-11-03-001"

// env is one workspace with a store holding the basic foundry spec.
type env struct {
	t    *testing.T
	root string
	repo *specstore.Repo
}

func newEnv(t *testing.T) *env {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "foundry_basic.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, root: t.TempDir(), repo: specstore.New(storetest.Open(t), nil)}
	e.write("in/basic.json", raw)
	ws := e.ws()
	res, err := specs.ImportFiles(context.Background(), e.repo, ws, "in", specs.ImportOptions{AutoFix: true})
	if err != nil || res.NotImported() != 0 {
		t.Fatalf("import: %v %+v", err, res)
	}
	return e
}

func (e *env) ws() *workspacefs.Dir {
	ws, err := workspacefs.Open(e.root)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ws.Close() })
	return ws
}

func (e *env) open(dir string) *mirror.Mirror {
	e.t.Helper()
	return e.openLogged(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func (e *env) openLogged(dir string, log *slog.Logger) *mirror.Mirror {
	e.t.Helper()
	m, err := mirror.Open(e.repo, e.root, dir, mirror.Options{Store: "test", Logger: log})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { m.Close() })
	return m
}

func (e *env) write(name string, b []byte) {
	e.t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(name string) []byte {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(name)))
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) absent(name string) bool {
	_, err := os.Lstat(filepath.Join(e.root, filepath.FromSlash(name)))
	return os.IsNotExist(err)
}

// export is what spec export writes for id now.
func (e *env) export(id string) (string, []byte) {
	e.t.Helper()
	dir := "exp-" + strings.ReplaceAll(e.t.Name(), "/", "_")
	res, err := specs.ExportFiles(context.Background(), e.repo, e.ws(), dir, id)
	if err != nil {
		e.t.Fatal(err)
	}
	f := res.Files[0].File
	return f, e.read(dir + "/" + f)
}

// mutate changes the spec's title, and its lifecycle when to is set.
func (e *env) mutate(title string, to specs.Lifecycle) {
	e.t.Helper()
	_, err := e.repo.MutateSpec(context.Background(), basicID, specs.RepoWriteOptions{Action: "test"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Header.Title = title
		if to != "" {
			_, err := specs.MoveLifecycle(sp, to, true)
			return err
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func sync(t *testing.T, m *mirror.Mirror) mirror.Report {
	t.Helper()
	rep, err := m.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// mirrored checks the mirror file of basicID is what spec export writes,
// in the folder export uses, and returns its name under the mirror.
func (e *env) mirrored(dir string) string {
	e.t.Helper()
	name, want := e.export(basicID)
	if got := e.read(dir + "/" + name); !bytes.Equal(got, want) {
		e.t.Fatalf("%s/%s differs from spec export:\n%s\n---\n%s", dir, name, got, want)
	}
	return name
}

func TestSyncWritesWhatExportWrites(t *testing.T) {
	e := newEnv(t)
	m := e.open("plan")
	rep := sync(t, m)
	if len(rep.Written) != 1 || len(rep.Conflicts) != 0 {
		t.Fatalf("first pass: %+v", rep)
	}
	e.mirrored("plan")
	if rep := sync(t, m); len(rep.Written) != 0 {
		t.Fatalf("a pass without a change wrote %v", rep.Written)
	}
	e.mutate("Renamed", "")
	if rep := sync(t, m); len(rep.Written) != 1 {
		t.Fatalf("a change was not written: %+v", rep)
	}
	e.mirrored("plan")
	if e.absent(".specd/.gitignore") {
		t.Fatal("the state folder is not git-ignored")
	}
}

func TestLifecycleMoveMovesTheFile(t *testing.T) {
	e := newEnv(t)
	m := e.open("plan")
	sync(t, m)
	before := e.mirrored("plan")
	e.mutate("Moved", specs.LifecycleActive)
	rep := sync(t, m)
	after := e.mirrored("plan")
	if before == after || !strings.HasPrefix(after, "active/") {
		t.Fatalf("file %s → %s", before, after)
	}
	if !e.absent("plan/"+before) || len(rep.Removed) != 1 {
		t.Fatalf("the old file stays: %+v", rep)
	}
}

func TestEditedFileIsNeverOverwritten(t *testing.T) {
	e := newEnv(t)
	var logged bytes.Buffer
	m := e.openLogged("plan", slog.New(slog.NewTextHandler(&logged, nil)))
	sync(t, m)
	name := e.mirrored("plan")
	file := "plan/" + name
	edited := append(e.read(file), []byte("\n// a person's note\n")...)
	e.write(file, edited)

	st, err := m.Status(context.Background())
	if err != nil || len(st.Edited) != 1 || st.Edited[0] != file {
		t.Fatalf("status before a change: %+v %v", st, err)
	}
	e.mutate("Changed by an agent", "")
	rep := sync(t, m)
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].File != file || rep.Conflicts[0].NewFile != file+mirror.NewSuffix || rep.Conflicts[0].Reason != "edited" {
		t.Fatalf("conflict: %+v", rep)
	}
	if !bytes.Equal(e.read(file), edited) {
		t.Fatal("the person's edit was overwritten")
	}
	_, want := e.export(basicID)
	if !bytes.Equal(e.read(file+mirror.NewSuffix), want) {
		t.Fatal("specd's version beside the file is not what export writes")
	}
	if h := m.Health(); !h.Ran || h.Err != nil || len(h.Conflicts) != 1 {
		t.Fatalf("health: %+v", h)
	}
	sync(t, m)
	if n := strings.Count(logged.String(), "changed by hand"); n != 1 {
		t.Fatalf("want the conflict logged once, got %d lines:\n%s", n, logged.String())
	}
	// Later changes keep the file and refresh the version beside it.
	e.mutate("Changed again", "")
	if rep := sync(t, m); len(rep.Conflicts) != 1 || !bytes.Equal(e.read(file), edited) {
		t.Fatalf("second change: %+v", rep)
	}
	// The person takes specd's version: the conflict ends.
	if err := os.Rename(filepath.Join(e.root, file+mirror.NewSuffix), filepath.Join(e.root, file)); err != nil {
		t.Fatal(err)
	}
	e.mutate("After the resolution", "")
	if rep := sync(t, m); len(rep.Conflicts) != 0 || len(rep.Written) != 1 {
		t.Fatalf("after the person took specd's version: %+v", rep)
	}
	e.mirrored("plan")

	// Deleting the changed file ends a conflict too, and the file beside
	// it goes.
	e.write(file, []byte("{}\n"))
	e.mutate("Edited once more", "")
	if rep := sync(t, m); len(rep.Conflicts) != 1 {
		t.Fatalf("%+v", rep)
	}
	if err := os.Remove(filepath.Join(e.root, file)); err != nil {
		t.Fatal(err)
	}
	if rep := sync(t, m); len(rep.Conflicts) != 0 || len(rep.Written) != 1 {
		t.Fatalf("after the person deleted the file: %+v", rep)
	}
	e.mirrored("plan")
	if !e.absent(file + mirror.NewSuffix) {
		t.Fatal("the version beside the file stays after the conflict ended")
	}
}

func TestFileTheMirrorNeverWroteIsLeftAlone(t *testing.T) {
	e := newEnv(t)
	name, _ := e.export(basicID)
	file := "plan/" + name
	e.write(file, []byte("{\"kept\": true}\n"))
	m := e.open("plan")
	rep := sync(t, m)
	if len(rep.Conflicts) != 1 || string(e.read(file)) != "{\"kept\": true}\n" {
		t.Fatalf("%+v", rep)
	}
	// A file that already holds the mirror's bytes (a fresh clone of a
	// repository with the plan in it) is adopted, not a conflict.
	_, want := e.export(basicID)
	e.write(file, want)
	if rep := sync(t, m); len(rep.Conflicts) != 0 {
		t.Fatalf("%+v", rep)
	}
	e.mutate("Next", "")
	if rep := sync(t, m); len(rep.Written) != 1 || len(rep.Conflicts) != 0 {
		t.Fatalf("%+v", rep)
	}
	e.mirrored("plan")
}

func TestEditedFileOfAMovedSpecIsKept(t *testing.T) {
	e := newEnv(t)
	m := e.open("plan")
	sync(t, m)
	old := "plan/" + e.mirrored("plan")
	e.write(old, []byte("edited\n"))
	e.mutate("Moved", specs.LifecycleArchived)
	rep := sync(t, m)
	now := "plan/" + e.mirrored("plan")
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].File != old || rep.Conflicts[0].Reason != "moved" || rep.Conflicts[0].NewFile != now {
		t.Fatalf("%+v", rep)
	}
	if string(e.read(old)) != "edited\n" {
		t.Fatal("the changed file in the old folder was removed")
	}
	// The spec comes back to that folder: the kept file is still left
	// alone, reported once, with specd's version beside it.
	e.mutate("Back", specs.LifecyclePending)
	rep = sync(t, m)
	if len(rep.Conflicts) != 1 || rep.Conflicts[0].File != old || rep.Conflicts[0].Reason != "edited" || string(e.read(old)) != "edited\n" {
		t.Fatalf("back in the folder of the kept file: %+v", rep)
	}
	if !e.absent(now) {
		t.Fatalf("the file of the folder the spec left stays: %s", now)
	}
	_, want := e.export(basicID)
	if !bytes.Equal(e.read(old+mirror.NewSuffix), want) {
		t.Fatal("specd's version beside the kept file is not what export writes")
	}
	// Once the person removes it, nothing is reported any more.
	os.Remove(filepath.Join(e.root, old))
	if rep := sync(t, m); len(rep.Conflicts) != 0 {
		t.Fatalf("%+v", rep)
	}
	e.mirrored("plan")
	if !e.absent(old + mirror.NewSuffix) {
		t.Fatal("the version beside the file stays after the conflict ended")
	}
}

func TestDeletedSpecsFileIsRemoved(t *testing.T) {
	e := newEnv(t)
	m := e.open("plan")
	sync(t, m)
	file := "plan/" + e.mirrored("plan")
	// The store no longer holds the spec (specd has no delete action; a
	// store reset at the same place is the same to the mirror).
	empty := specstore.New(storetest.Open(t), nil)
	m2, err := mirror.Open(empty, e.root, "plan", mirror.Options{Store: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	rep := sync(t, m2)
	if len(rep.Removed) != 1 || !e.absent(file) {
		t.Fatalf("%+v", rep)
	}
	// Another store's mirror never removes the first one's files.
	sync(t, m)
	other, err := mirror.Open(empty, e.root, "plan", mirror.Options{Store: "another"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if rep := sync(t, other); len(rep.Removed) != 0 || e.absent(file) {
		t.Fatalf("%+v", rep)
	}
}

func TestTwoMirrorsOfOneWorkspaceAgree(t *testing.T) {
	e := newEnv(t)
	a, b := e.open("plan"), e.open("plan")
	for i, m := range []*mirror.Mirror{a, b, a, b} {
		e.mutate("Step "+string(rune('A'+i)), "")
		if rep := sync(t, m); len(rep.Conflicts) != 0 || len(rep.Written) != 1 {
			t.Fatalf("pass %d: %+v", i, rep)
		}
	}
	e.mirrored("plan")
}

func TestImportOfTheMirrorRoundTrips(t *testing.T) {
	e := newEnv(t)
	e.mutate("Round trip", specs.LifecycleActive)
	m := e.open("plan")
	sync(t, m)
	_, want := e.export(basicID)
	fresh := specstore.New(storetest.Open(t), nil)
	res, err := specs.ImportFiles(context.Background(), fresh, e.ws(), "plan", specs.ImportOptions{AutoFix: true})
	if err != nil || res.Counts["imported"] != 1 || res.Total != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	out, err := specs.ExportFiles(context.Background(), fresh, e.ws(), "again", basicID)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read("again/" + out.Files[0].File); !bytes.Equal(got, want) {
		t.Fatalf("import of the mirror does not reproduce the spec:\n%s\n---\n%s", got, want)
	}
}

func TestOpenRefusesFoldersExportRefuses(t *testing.T) {
	e := newEnv(t)
	for _, dir := range []string{".specd", ".specd/x", ".git", ".GIT/hooks", "../out", "/etc", "."} {
		_, err := mirror.Open(e.repo, e.root, dir, mirror.Options{})
		if core.AsError(err).Code != errcode.InvalidFormat {
			t.Errorf("%q: %v", dir, err)
		}
	}
	e.write("afile", []byte("x"))
	if _, err := mirror.Open(e.repo, e.root, "afile", mirror.Options{}); core.AsError(err).Code != errcode.InvalidFormat {
		t.Errorf("a file: %v", err)
	}
}

func TestFailedPassIsReportedAndLoggedOnce(t *testing.T) {
	e := newEnv(t)
	var logged bytes.Buffer
	m := e.openLogged("plan", slog.New(slog.NewTextHandler(&logged, nil)))
	os.RemoveAll(filepath.Join(e.root, "plan", "pending"))
	e.write("plan/pending", []byte("a file where a folder belongs"))
	for i := 0; i < 2; i++ {
		if _, err := m.Sync(context.Background()); core.AsError(err).Code != errcode.InvalidFormat {
			t.Fatalf("pass %d: %v", i, err)
		}
	}
	if h := m.Health(); h.Err == nil || !m.Pending() {
		t.Fatalf("health after a failed pass: %+v", h)
	}
	if n := strings.Count(logged.String(), "a pass failed"); n != 1 {
		t.Fatalf("want one warning for the same failure, got %d:\n%s", n, logged.String())
	}
	os.Remove(filepath.Join(e.root, "plan", "pending"))
	if rep := sync(t, m); len(rep.Written) != 1 || m.Health().Err != nil {
		t.Fatalf("after the fix: %+v %+v", rep, m.Health())
	}
	e.mirrored("plan")
}

// Run passes once at start, then on a wake only when the store's stamp
// moved, and returns when ctx ends (also after the feed closed).
func TestRunPassesWhenTheStampMoves(t *testing.T) {
	e := newEnv(t)
	m := e.open("specs")
	var token atomic.Int64
	token.Store(1)
	stamp := func() (string, bool) { return strconv.FormatInt(token.Load(), 10), false }
	wake := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx, mirror.Feed{Stamp: stamp, Wake: func(context.Context) (<-chan struct{}, error) { return wake, nil },
			Interval: time.Hour, WakeInterval: time.Hour})
	}()
	// The wake channel is unbuffered: Run takes a send only when it waits
	// again, so once a send is taken every earlier pass is done.
	tick := func() { wake <- struct{}{} }

	tick()
	name := e.mirrored("specs") // the first pass
	e.mutate("Retitled while the stamp stands still", "")
	tick()
	tick()
	if _, want := e.export(basicID); bytes.Equal(e.read("specs/"+name), want) {
		t.Fatal("a wake without a stamp change ran a pass")
	}
	token.Store(2)
	tick()
	tick()
	e.mirrored("specs")

	close(wake)
	cancel()
	<-done
}
