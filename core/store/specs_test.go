package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

var clock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func createSpec(t testing.TB, st *store.Store, name string) string {
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

func addPhase(t testing.TB, st *store.Store, id, title string, m core.Mutation) (specs.RepoWriteResult, error) {
	t.Helper()
	return st.MutateSpec(context.Background(), id, specs.RepoWriteOptions{DryRun: m.DryRun, ExpectedVersion: m.ExpectedVersion, Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		_, err := specs.AddPhase(sp, specs.PhaseInput{Title: title})
		return err
	})
}

func TestSpecLifecycleOfWrites(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	id := createSpec(t, st, "Demo Feature")
	if id2 := createSpec(t, st, "Demo Feature"); id2 != id[:len(id)-3]+"002" {
		t.Fatalf("second spec of the day got %s", id2)
	}

	// Dry run: reports changes, stores nothing.
	res, err := addPhase(t, st, id, "Dry", core.Mutation{DryRun: true})
	if err != nil || !res.DryRun || len(res.Changes) == 0 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		if sp.Header.Version != 1 || sp.Node("phase-1") != nil {
			t.Fatalf("dry run stored something: v%d", sp.Header.Version)
		}
		return nil
	})

	// A real mutation bumps the version once and writes only changed nodes.
	res, err = addPhase(t, st, id, "Build it", core.Mutation{})
	if err != nil || res.Version != 2 {
		t.Fatalf("phase-add: %+v %v", res, err)
	}
	// expected_version mismatch: VERSION_CONFLICT, nothing changes.
	stale := int64(1)
	if _, err := addPhase(t, st, id, "Stale", core.Mutation{ExpectedVersion: &stale}); codeOf(err) != errcode.VersionConflict {
		t.Fatalf("want VERSION_CONFLICT, got %v", err)
	}
	// A failing mutation changes nothing.
	_, err = st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		_, _ = specs.AddPhase(sp, specs.PhaseInput{Title: "half"})
		return core.NewError(errcode.Validation, "boom", nil)
	})
	if codeOf(err) != errcode.Validation {
		t.Fatal(err)
	}
	res, err = addPhase(t, st, id, "Ship it", core.Mutation{})
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

	// History, version reads, rollback.
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
	rb, err := st.RollbackSpec(ctx, id, 1, specs.RepoWriteOptions{Action: "authoring.spec-rollback"}, func() string { return specs.FormatTime(clock()) })
	if err != nil || rb.Version != 4 {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	_ = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		if sp.Node("phase-1") != nil || len(sp.Root().Children) != 0 || sp.Header.Version != 4 {
			t.Fatalf("rollback did not restore v1: %v", sp.Root().Children)
		}
		if v := specs.CheckInvariants(sp); len(v) != 0 {
			t.Fatalf("invariants after rollback: %v", v)
		}
		return nil
	})
	// Rolling back is itself undoable.
	if err := st.ReadVersion(ctx, id, 3, func(a specs.VersionView) error {
		if a.NodeAt("phase-2") == nil {
			t.Fatalf("version 3 lost after rollback")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestJournalAndHistoryPruning(t *testing.T) {
	st := storetest.Open(t)
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

func TestListSpecsPagesByFolder(t *testing.T) {
	st := storetest.Open(t)
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
