package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/research"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

var migrateClock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// fill writes a spec with phases, journal entries and history, a digest
// and an archived item.
func fill(t *testing.T, st domainStores) string {
	t.Helper()
	ctx := context.Background()
	h, err := st.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "moving", Mission: "m"}, migrateClock, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := st.MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = migrateClock
			j.Append(specs.JournalEntry{Title: fmt.Sprintf("note %d", i), Content: "c", EntryType: "note", Timestamp: specs.FormatTime(migrateClock())})
			_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: fmt.Sprintf("phase %d", i)}, []specs.TaskInput{{Title: "a"}, {Title: "b"}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.DigestPut(ctx, research.DigestRecord{SourceID: "src", QueryHash: "q1", Payload: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.ArchivePut(ctx, []byte("canonical text"), research.ArchiveMeta{ContentID: "c1", ItemType: "source"}); err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}

// domainStores are the domain stores over one engine, as a server
// assembles them.
type domainStores struct {
	*specstore.Repo
	*researchstore.Store
}

func domainOf(st bucketstore.Store) domainStores {
	return domainStores{specstore.New(st, nil), researchstore.New(st, nil)}
}

// view is what a reader sees of a spec: version, node count, journal
// titles, history versions, the digest and the archived text.
func view(t *testing.T, st domainStores, id string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	if err := st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		es, _, _ := j.Entries(0, 100, nil)
		fmt.Fprintf(&b, "v%d nodes=%d journal=", sp.Header.Version, len(sp.IDs()))
		for _, e := range es {
			fmt.Fprintf(&b, "%d:%s,", e.Seq, e.Title)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	hist, _, _ := st.History(ctx, id, 0, 100)
	fmt.Fprintf(&b, " history=%d", len(hist))
	d, err := st.DigestGet(ctx, "src", "q1")
	fmt.Fprintf(&b, " digest=%s/%v", d.Payload, err)
	txt, _, err := st.ArchiveGet(ctx, "", "c1")
	fmt.Fprintf(&b, " archive=%s/%v", txt, err)
	return b.String()
}

// TestMigrateBoltToEtcdAndBack: migrate copies everything from a bbolt file
// to an etcd prefix and back; readers see the same specs, journal, history,
// digests and archive; a re-run is verified again; a destination holding
// other data fails verification (exit 1) and nothing is deleted.
func TestMigrateBoltToEtcdAndBack(t *testing.T) {
	ep := etcdtest.Start(t, 4096)
	dir := t.TempDir()
	boltURL := "bolt://" + filepath.Join(dir, "a.db")
	etcdURL := "etcd://" + ep + "/migrated?max_txn_ops=4096"
	src, err := store.Open(store.Options{Path: filepath.Join(dir, "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	id := fill(t, domainOf(src))
	want := view(t, domainOf(src), id)
	src.Close()

	run := func(from, to string) (int, string) {
		var out, errb bytes.Buffer
		code := migrateCmd([]string{"--from", from, "--to", to}, &out, &errb)
		return code, out.String() + errb.String()
	}
	for i := 0; i < 2; i++ { // the second run re-copies over itself
		if code, out := run(boltURL, etcdURL); code != 0 || !strings.Contains(out, "verified") {
			t.Fatalf("bolt → etcd run %d: exit %d\n%s", i+1, code, out)
		}
	}
	o, _ := etcdOptions(etcdURL)
	et, err := etcdstore.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer et.Close()
	if got := view(t, domainOf(et), id); got != want {
		t.Fatalf("etcd reads\n%s\nbbolt read\n%s", got, want)
	}
	// The copy goes on working: the next journal entry gets the next seq.
	if _, err := domainOf(et).MutateSpec(context.Background(), id, specs.RepoWriteOptions{}, func(_ *specs.Spec, j specs.JournalWriter) error {
		j.Append(specs.JournalEntry{Title: "after", Content: "c", EntryType: "note", Timestamp: specs.FormatTime(migrateClock())})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	back := "bolt://" + filepath.Join(dir, "b.db")
	if code, out := run(etcdURL, back); code != 0 {
		t.Fatalf("etcd → bolt: exit %d\n%s", code, out)
	}
	b, _ := store.Open(store.Options{Path: filepath.Join(dir, "b.db")})
	got := view(t, domainOf(b), id)
	b.Close()
	if !strings.Contains(got, "4:after,") || !strings.Contains(got, "3:note 2,") {
		t.Fatalf("etcd → bolt reads %s", got)
	}
	// A destination holding data the source does not: the copy does not
	// verify, and the extra entry is not deleted.
	a, _ := store.Open(store.Options{Path: filepath.Join(dir, "a.db")})
	if _, err := domainOf(a).DigestPut(context.Background(), research.DigestRecord{SourceID: "only-here", QueryHash: "q", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if code, out := run(etcdURL, boltURL); code != 1 || !strings.Contains(out, "differs") {
		t.Fatalf("migrate onto a store holding other data: exit %d\n%s", code, out)
	}
	a, _ = store.Open(store.Options{Path: filepath.Join(dir, "a.db")})
	defer a.Close()
	if _, err := domainOf(a).DigestGet(context.Background(), "only-here", "q"); err != nil {
		t.Fatalf("migrate deleted the destination's own entry: %v", err)
	}
}

// TestMigrateCountsNodesApartFromTheirChunks: migrate's summary counts a
// spec's nodes as nodes, and the chunks that hold their children lists
// (layout 3) as node_chunks, so "nodes N" is the number of nodes a reader
// sees.
func TestMigrateCountsNodesApartFromTheirChunks(t *testing.T) {
	st, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	d := domainOf(st)
	id := fill(t, d)
	nodes := 0
	if _, err := d.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		for range 300 {
			if _, err := specs.AddTask(sp, "phase-1", specs.TaskInput{Title: "t"}); err != nil {
				return err
			}
		}
		nodes = len(sp.IDs())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rs, err := exportAll(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	s := summarize(rs)
	if s.counts["nodes"] != nodes || s.counts["node_chunks"] == 0 {
		t.Errorf("summary %s: want nodes %d and the chunks apart", s, nodes)
	}
}
