package specstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/etcdstore/etcdtest"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// The domain stores' conformance suite: specs/specstore and
// research/researchstore over each engine of the store port give the same
// answers and error codes. (core/store/storetest checks the port itself.)

// Port is what the suite calls: the domain stores over one engine.
type Port = *domainStore

// domainStore is the spec repository (with the inbox and error log) and
// the archive and digest store over one engine, as tools.Deps.OverStore
// assembles them.
type domainStore struct {
	bucketstore.Store
	*specstore.Repo
	*archive
}

type archive = researchstore.Store

// Opener opens an empty engine for t (closed and checked when t ends).
type Opener func(t testing.TB) bucketstore.Store

// TestConformance runs the suite on bbolt and on a real (embedded) etcd,
// one prefix per test; the engines run side by side.
func TestConformance(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		t.Parallel() // the engines share nothing
		Run(t, func(t testing.TB) bucketstore.Store { return storetest.Open(t) })
	})
	// An engine may run a fn again (bucketstore.Engine): over Rerun every
	// View and Update runs its fn twice (the first Update rolled back),
	// and over every third one state carried between calls shows too.
	t.Run("bbolt-rerun", func(t *testing.T) {
		t.Parallel() // the engines share nothing
		Run(t, func(t testing.TB) bucketstore.Store { return &storetest.Rerun{Store: storetest.Open(t)} })
	})
	t.Run("bbolt-rerun-every-3", func(t *testing.T) {
		t.Parallel() // the engines share nothing
		Run(t, func(t testing.TB) bucketstore.Store { return &storetest.Rerun{Store: storetest.Open(t), Every: 3} })
	})
	t.Run("etcd", func(t *testing.T) {
		t.Parallel() // the engines share nothing
		ep := etcdtest.Start(t, 4096)
		var prefixes atomic.Int64
		Run(t, func(t testing.TB) bucketstore.Store {
			st, err := etcdstore.Open(etcdstore.Options{Endpoints: []string{ep}, MaxTxnOps: 4096,
				Prefix: fmt.Sprintf("/specstore-test/%d", prefixes.Add(1))})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := st.Check(context.Background()); err != nil {
					t.Errorf("etcdstore check: %v", err)
				}
				_ = st.Close()
			})
			return st
		})
	})
}

// over opens an engine and assembles the domain stores over it; now, when
// not nil, is their clock.
func (o Opener) over(t testing.TB, now func() time.Time) Port {
	eng := o(t)
	return &domainStore{Store: eng, Repo: specstore.New(eng, now), archive: researchstore.New(eng, now)}
}

// portOpener opens the domain stores over an empty engine.
type portOpener func(t testing.TB, now func() time.Time) Port

// Run is the domain stores' conformance suite: the same tests, the same
// answers and error codes, over every engine (core/store on bbolt,
// core/etcdstore on etcd).
func Run(t *testing.T, open Opener) {
	openPort := func(t testing.TB, now func() time.Time) Port { return open.over(t, now) }
	for _, c := range []struct {
		name string
		fn   func(*testing.T, portOpener)
	}{
		{"SpecLifecycleOfWrites", testSpecLifecycleOfWrites},
		{"JournalAndHistoryPruning", testJournalAndHistoryPruning},
		{"ListSpecsPagesByFolder", testListSpecsPagesByFolder},
		{"SpecListIndex", testSpecListIndex},
		{"ArchiveRoundTripAndSweep", testArchiveRoundTripAndSweep},
		{"DigestStorePagesBySource", testDigestStorePagesBySource},
		{"RollbackHonoursExpectedVersion", testRollbackHonoursExpectedVersion},
		{"FailedMutationKeepsNothing", testFailedMutationKeepsNothing},
		{"ConcurrentClaimsAreExclusive", testConcurrentClaimsAreExclusive},
		{"ImportReplaceAndJournalRange", testImportReplaceAndJournalRange},
		{"ErrorLogIsBounded", testErrorLogIsBounded},
		{"IntakeInbox", testIntakeInbox},
		{"FullIntakeMakesRoom", testFullIntakeMakesRoom},
		{"RecordsLiveInTheSpecTransaction", testRecordsLiveInTheSpecTransaction},
		{"AutonomySessionsAndTheirChain", testAutonomySessionsAndTheirChain},
		{"ChildrenAcrossChunkBoundaries", testChildrenAcrossChunkBoundaries},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, openPort) })
	}
}

var clock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func createSpec(t testing.TB, st specs.Repo, name string) string {
	t.Helper()
	h, err := st.CreateSpec(context.Background(), specs.RepoWriteOptions{Action: "authoring.spec-create"},
		func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: name, Mission: "m"}, clock, exists)
			return sp, nil, err
		})
	if err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}

func codeOf(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func addPhase(t testing.TB, st specs.Repo, id, title string, m core.Mutation) (specs.RepoWriteResult, error) {
	t.Helper()
	return st.MutateSpec(context.Background(), id, specs.RepoWriteOptions{DryRun: m.DryRun, ExpectedVersion: m.ExpectedVersion, Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		_, err := specs.AddPhase(sp, specs.PhaseInput{Title: title})
		return err
	})
}

// testFailedMutationKeepsNothing: an error from fn, or a deadline that
// passes while fn runs, stores nothing (no version, no node, no journal).
func testFailedMutationKeepsNothing(t *testing.T, open portOpener) {
	st := open(t, nil)
	id := createSpec(t, st, "atomic")
	boom := errors.New("boom")
	cctx, cancel := context.WithCancel(context.Background())
	for _, c := range []struct {
		name string
		ctx  context.Context
		fail func() error
		want error
	}{
		{"fn error", context.Background(), func() error { return boom }, boom},
		{"deadline passes", cctx, func() error { cancel(); return nil }, context.Canceled},
	} {
		_, err := st.MutateSpec(c.ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = clock
			if _, err := specs.AddPhase(sp, specs.PhaseInput{Title: "lost"}); err != nil {
				return err
			}
			j.Append(specs.JournalEntry{Title: "lost", Content: "x", EntryType: "note", Timestamp: specs.FormatTime(clock())})
			return c.fail()
		})
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: want %v, got %v", c.name, c.want, err)
		}
		_ = st.ReadSpec(context.Background(), id, func(sp *specs.Spec, j specs.JournalReader) error {
			if sp.Header.Version != 1 || sp.Node(specs.RootID).Children.Len() != 0 {
				t.Fatalf("%s: partial write kept: version %d, children %v", c.name, sp.Header.Version, sp.Node(specs.RootID).Children)
			}
			if es, _, _ := j.Entries(0, 10, nil); len(es) != 0 {
				t.Fatalf("%s: journal kept %d entries", c.name, len(es))
			}
			return nil
		})
	}
}

// testConcurrentClaimsAreExclusive: workers that each read the next pending
// task and start it in one mutation never claim the same task twice, and
// every task is claimed once (the atomic next(claim)).
func testConcurrentClaimsAreExclusive(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "claims")
	const tasks, workers = 24, 6
	_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		in := make([]specs.TaskInput, tasks)
		for i := range in {
			in[i] = specs.TaskInput{Title: fmt.Sprintf("task %d", i)}
		}
		_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "work"}, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var got string
				_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{Action: "task.next"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
					sp.Clock = clock
					got = ""
					next := specs.NextTask(sp)
					if !next.Found {
						return nil
					}
					got = next.TaskID
					_, err := specs.Start(sp, got, specs.TransitionOptions{})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if got == "" {
					return
				}
				mu.Lock()
				claimed[got]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	n := 0
	for id, c := range claimed {
		if c != 1 {
			t.Errorf("task %s claimed %d times", id, c)
		}
		n++
	}
	if n != tasks {
		t.Errorf("claimed %d distinct tasks, want %d", n, tasks)
	}
}

// testImportReplaceAndJournalRange: an import is DUPLICATE_ENTRY unless
// replace is set, a replacement is a new version, and JournalRange reads the
// entries pinned by seq.
func testImportReplaceAndJournalRange(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "import")
	for i := 0; i < 3; i++ {
		if _, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(_ *specs.Spec, j specs.JournalWriter) error {
			j.Append(specs.JournalEntry{Title: fmt.Sprintf("e%d", i), Content: "c", EntryType: "note", Timestamp: specs.FormatTime(clock())})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	es, err := st.JournalRange(ctx, id, 2, 3)
	if err != nil || len(es) != 2 || es[0].Title != "e1" || es[1].Seq != 3 {
		t.Fatalf("journal range: %v %+v", err, es)
	}
	var sp *specs.Spec
	_ = st.ReadSpec(ctx, id, func(s *specs.Spec, _ specs.JournalReader) error {
		sp = specs.NewSpecView(s.Header.Clone(), specs.NewMemorySource())
		for _, nid := range s.IDs() {
			sp.Put(s.Node(nid).Clone())
		}
		return nil
	})
	if err := st.ImportSpec(ctx, sp, nil, false); codeOf(err) != errcode.DuplicateEntry {
		t.Fatalf("import over an existing spec: want DUPLICATE_ENTRY, got %v", err)
	}
	if err := st.ImportSpec(ctx, sp, nil, true); err != nil {
		t.Fatal(err)
	}
	_ = st.ReadSpec(ctx, id, func(s *specs.Spec, _ specs.JournalReader) error {
		if s.Header.Version != 5 {
			t.Fatalf("replaced spec at version %d, want 5", s.Header.Version)
		}
		return nil
	})
	if _, err := st.JournalRange(ctx, "no-such-spec", 1, 2); codeOf(err) != errcode.SpecNotFound {
		t.Fatalf("want SPEC_NOT_FOUND, got %v", err)
	}
}

// testSpecLifecycleOfWrites runs one spec through its life of writes, as
// ordered steps on one store (each step relies on the ones before, so the
// first failing step ends the test).
func testSpecLifecycleOfWrites(t *testing.T, open portOpener) {
	st := open(t, nil)
	id := createSpec(t, st, "Demo Feature")
	for _, step := range []struct {
		name string
		fn   func(t *testing.T, st Port, id string)
	}{
		{"SecondSpecOfTheDayNumbered", lifecycleSecondSpecNumbered},
		{"DryRunStoresNothing", lifecycleDryRunStoresNothing},
		{"WriteBumpsVersionOnce", lifecycleWriteBumpsVersion},
		{"StaleExpectedVersionConflicts", lifecycleStaleVersionConflicts},
		{"FailedMutationKeepsNothing", lifecycleFailedMutationKeepsNothing},
		{"HistoryAndVersionReads", lifecycleHistoryAndVersions},
		{"RollbackRestoresAndIsUndoable", lifecycleRollback},
	} {
		if !t.Run(step.name, func(t *testing.T) { step.fn(t, st, id) }) {
			return
		}
	}
}

// lifecycleSecondSpecNumbered: a second spec with the same name on the same
// day gets the next sequence number (-002).
func lifecycleSecondSpecNumbered(t *testing.T, st Port, id string) {
	if id2 := createSpec(t, st, "Demo Feature"); id2 != id[:len(id)-3]+"002" {
		t.Fatalf("second spec of the day got %s", id2)
	}
}

// lifecycleDryRunStoresNothing: a dry run reports its changes and stores
// nothing (the spec stays at version 1).
func lifecycleDryRunStoresNothing(t *testing.T, st Port, id string) {
	res, err := addPhase(t, st, id, "Dry", core.Mutation{DryRun: true})
	if err != nil || !res.DryRun || len(res.Changes) == 0 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	_ = st.ReadSpec(context.Background(), id, func(sp *specs.Spec, j specs.JournalReader) error {
		if sp.Header.Version != 1 || sp.Node("phase-1") != nil {
			t.Fatalf("dry run stored something: v%d", sp.Header.Version)
		}
		return nil
	})
}

// lifecycleWriteBumpsVersion: a real mutation bumps the version once (to 2).
func lifecycleWriteBumpsVersion(t *testing.T, st Port, id string) {
	res, err := addPhase(t, st, id, "Build it", core.Mutation{})
	if err != nil || res.Version != 2 {
		t.Fatalf("phase-add: %+v %v", res, err)
	}
}

// lifecycleStaleVersionConflicts: an expected_version that is not the
// current one is VERSION_CONFLICT.
func lifecycleStaleVersionConflicts(t *testing.T, st Port, id string) {
	stale := int64(1)
	if _, err := addPhase(t, st, id, "Stale", core.Mutation{ExpectedVersion: &stale}); codeOf(err) != errcode.VersionConflict {
		t.Fatalf("want VERSION_CONFLICT, got %v", err)
	}
}

// lifecycleFailedMutationKeepsNothing: a mutation whose function fails
// returns its error and keeps nothing, neither its node nor a version (the
// stale and failed writes before leave the next write at version 3), and the
// stored spec keeps its invariants.
func lifecycleFailedMutationKeepsNothing(t *testing.T, st Port, id string) {
	ctx := context.Background()
	_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, _ = specs.AddPhase(sp, specs.PhaseInput{Title: "half"})
		return core.NewError(errcode.Validation, "boom", nil)
	})
	if codeOf(err) != errcode.Validation {
		t.Fatal(err)
	}
	res, err := addPhase(t, st, id, "Ship it", core.Mutation{})
	if err != nil || res.Version != 3 {
		t.Fatalf("second phase-add: %+v %v", res, err)
	}
	_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		if v := specs.CheckInvariants(sp); len(v) != 0 {
			t.Fatalf("invariants after store round trip: %v", v)
		}
		if sp.Node("phase-2") == nil || sp.Node("phase-3") != nil {
			t.Fatalf("failed mutation leaked")
		}
		return nil
	})
}

// lifecycleHistoryAndVersions: History lists the kept versions newest first;
// ReadVersion reconstructs an earlier version (nodes, header and document)
// and answers VERSION_NOT_FOUND for a version never written.
func lifecycleHistoryAndVersions(t *testing.T, st Port, id string) {
	ctx := context.Background()
	hist, more, err := st.History(ctx, id, 0, 10)
	if err != nil || more || len(hist) != 2 || hist[0].Version != 3 {
		t.Fatalf("history: %+v %v %v", hist, more, err)
	}
	err = st.ReadVersion(ctx, id, 2, func(a specs.VersionView) error {
		if a.NodeAt("phase-2") != nil || a.NodeAt("phase-1") == nil || a.VersionHeader().Version != 2 {
			t.Fatalf("version 2 reconstructed wrong")
		}
		doc := a.Document()
		if _, ok := doc.Hierarchy["phase-2"]; ok {
			t.Fatalf("document at v2 has phase-2")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ReadVersion(ctx, id, 9, func(specs.VersionView) error { return nil }); codeOf(err) != errcode.VersionNotFound {
		t.Fatalf("want VERSION_NOT_FOUND, got %v", err)
	}
}

// lifecycleRollback: rolling back to version 1 writes a new version (4) with
// version 1's content and the invariants kept; the rolled-back-over version 3
// stays readable, so a rollback is itself undoable.
func lifecycleRollback(t *testing.T, st Port, id string) {
	ctx := context.Background()
	rb, err := st.RollbackSpec(ctx, id, 1, specs.RepoWriteOptions{Action: "authoring.spec-rollback"}, func() string { return specs.FormatTime(clock()) })
	if err != nil || rb.Version != 4 {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		if sp.Node("phase-1") != nil || sp.Root().Children.Len() != 0 || sp.Header.Version != 4 {
			t.Fatalf("rollback did not restore v1: %v", sp.Root().Children)
		}
		if v := specs.CheckInvariants(sp); len(v) != 0 {
			t.Fatalf("invariants after rollback: %v", v)
		}
		return nil
	})
	if err := st.ReadVersion(ctx, id, 3, func(a specs.VersionView) error {
		if a.NodeAt("phase-2") == nil {
			t.Fatalf("version 3 lost after rollback")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func testJournalAndHistoryPruning(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "journal")
	for i := 0; i < 60; i++ {
		_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{Keep: 5}, func(sp *specs.Spec, j specs.JournalWriter) error {
			j.Append(specs.JournalEntry{Timestamp: "t", EntryType: "note", Title: fmt.Sprint(i)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	hist, _, _ := st.History(ctx, id, 0, 100)
	if len(hist) != 5 {
		t.Fatalf("kept %d versions, want 5", len(hist))
	}
	_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		page, more, err := j.Entries(0, 10, nil)
		if err != nil || !more || len(page) != 10 || page[0].Title != "59" || page[0].Seq != 60 {
			t.Fatalf("journal first page: %+v %v %v", page, more, err)
		}
		next, _, _ := j.Entries(page[9].Seq, 10, nil)
		if next[0].Seq != page[9].Seq-1 {
			t.Fatalf("journal paging skipped: %d after %d", next[0].Seq, page[9].Seq)
		}
		return nil
	})
}

func testListSpecsPagesByFolder(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 7; i++ {
		ids = append(ids, createSpec(t, st, fmt.Sprintf("spec %d", i)))
	}
	_, err := st.MutateSpec(ctx, ids[3], specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, err := specs.MoveLifecycle(sp, specs.LifecycleActive, false)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for {
		rows, next, err := st.ListSpecs(ctx, "pending", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got = append(got, r.SpecID)
		}
		if next == "" {
			break
		}
		after = next
	}
	if len(got) != 6 {
		t.Fatalf("pending folder: %v", got)
	}
	active, _, _ := st.ListSpecs(ctx, "active", "", 10)
	if len(active) != 1 || active[0].SpecID != ids[3] || active[0].Lifecycle != "active" {
		t.Fatalf("active folder: %+v", active)
	}
	all, _, _ := st.ListSpecs(ctx, "all", "", 100)
	if len(all) != 7 {
		t.Fatalf("all: %d", len(all))
	}
	if err := st.ReadSpec(ctx, "spec-0-2026", func(*specs.Spec, specs.JournalReader) error { return nil }); codeOf(err) != errcode.SpecNotFound {
		t.Fatalf("want SPEC_NOT_FOUND, got %v", err)
	}
}

func testArchiveRoundTripAndSweep(t *testing.T, open portOpener) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	st := open(t, func() time.Time { return now })
	ctx := context.Background()
	m, created, err := st.ArchivePut(ctx, []byte("the canonical text"), research.ArchiveMeta{ContentID: "src-1", ItemType: "source"})
	if err != nil || !created || m.Hash != research.ArchiveKey([]byte("the canonical text")) {
		t.Fatalf("put: %+v %v %v", m, created, err)
	}
	if _, again, _ := st.ArchivePut(ctx, []byte("the canonical text"), research.ArchiveMeta{}); again {
		t.Fatal("the same bytes were stored twice")
	}
	for _, q := range []struct{ hash, id string }{{m.Hash, ""}, {"", "src-1"}} {
		got, meta, err := st.ArchiveGet(ctx, q.hash, q.id)
		if err != nil || string(got) != "the canonical text" || meta.ItemType != "source" {
			t.Fatalf("get %+v: %q %+v %v", q, got, meta, err)
		}
	}
	if _, _, err := st.ArchiveGet(ctx, "sha256:"+fmt.Sprintf("%064d", 0), ""); codeOf(err) != errcode.ArchiveNotFound {
		t.Fatalf("unknown hash: %v", err)
	}
	// Nothing expires before the cutoff; everything archived earlier does.
	if n, err := st.ArchiveSweep(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("early sweep removed %d (%v)", n, err)
	}
	if n, err := st.ArchiveSweep(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep removed %d (%v)", n, err)
	}
	if _, _, err := st.ArchiveGet(ctx, "", "src-1"); codeOf(err) != errcode.ArchiveNotFound {
		t.Fatalf("swept content id still resolves: %v", err)
	}
}

func testDigestStorePagesBySource(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	for _, src := range []string{"a", "b"} {
		for i := 0; i < 3; i++ {
			if _, err := st.DigestPut(ctx, research.DigestRecord{SourceID: src, QueryHash: fmt.Sprintf("%08x", i), Payload: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	replaced, _ := st.DigestPut(ctx, research.DigestRecord{SourceID: "a", QueryHash: "00000000", Payload: []byte(`{"v":2}`)})
	if !replaced {
		t.Fatal("second put of the same key must report a replacement")
	}
	var got []string
	after := ""
	for {
		rows, next, err := st.DigestList(ctx, "a", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got = append(got, r.SourceID+"/"+r.QueryHash)
		}
		if next == "" {
			break
		}
		after = next
	}
	if len(got) != 3 || got[0] != "a/00000000" {
		t.Fatalf("listing a: %v", got)
	}
	all, _, _ := st.DigestList(ctx, "", "", 100)
	if len(all) != 6 {
		t.Fatalf("all: %d", len(all))
	}
	if err := st.DigestDelete(ctx, "a", "00000001"); err != nil {
		t.Fatal(err)
	}
	_, err := st.DigestGet(ctx, "a", "00000001")
	if codeOf(err) != errcode.DigestNotFound {
		t.Fatalf("deleted digest: %v", err)
	}
}

// TestRollbackHonoursExpectedVersion: spec-rollback with a
// stale expected_version is VERSION_CONFLICT and changes nothing (no new
// version, no node restored); with the current one it rolls back.
func testRollbackHonoursExpectedVersion(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "rollback guard")
	for _, title := range []string{"one", "two"} {
		if _, err := addPhase(t, st, id, title, core.Mutation{}); err != nil {
			t.Fatal(err)
		}
	}
	now := func() string { return specs.FormatTime(clock()) }
	for _, stale := range []int64{1, 2, 4} {
		_, err := st.RollbackSpec(ctx, id, 1, specs.RepoWriteOptions{ExpectedVersion: &stale}, now)
		if codeOf(err) != errcode.VersionConflict {
			t.Fatalf("expected_version %d of a spec at 3: want VERSION_CONFLICT, got %v", stale, err)
		}
		_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			if sp.Header.Version != 3 || sp.Node("phase-2") == nil {
				t.Fatalf("a refused rollback changed the spec: v%d", sp.Header.Version)
			}
			return nil
		})
	}
	current := int64(3)
	res, err := st.RollbackSpec(ctx, id, 1, specs.RepoWriteOptions{ExpectedVersion: &current}, now)
	if err != nil || res.Version != 4 {
		t.Fatalf("rollback with the current version: %+v %v", res, err)
	}
}
