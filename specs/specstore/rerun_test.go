package specstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// An engine may run a fn again from the start on a fresh transaction
// (bucketstore.Engine: etcd after a lost race or a retryable read error).
// These tests run each operation over storetest.Rerun with another
// writer's commit between the two runs (Between), and hold the answer to
// what the run that counted saw.

// rerunOver is a Rerun over a fresh bbolt store and a repository over the
// store itself (the other writer), both with clock now.
func rerunOver(t *testing.T, now func() time.Time) (*storetest.Rerun, *specstore.Repo, *specstore.Repo) {
	t.Helper()
	st := storetest.Open(t)
	rr := &storetest.Rerun{Store: st}
	return rr, specstore.New(rr, now), specstore.New(st, now)
}

// once makes Between run fn only between the first re-run's two runs.
func once(t *testing.T, rr *storetest.Rerun, fn func() error) {
	var o sync.Once
	rr.Between = func() {
		o.Do(func() {
			if err := fn(); err != nil {
				t.Error(err)
			}
		})
	}
}

// readOnly is an engine whose writes all fail (a store that cannot be
// written).
type readOnly struct{ bucketstore.Store }

func (readOnly) Update(context.Context, func(bucketstore.Tx) error) error {
	return errors.New("read-only")
}

// TestListSpecsWithoutIndexSurvivesARerun: a store without the spec list
// index that cannot be written lists the old way; a re-run of that read
// lists each spec once.
func TestListSpecsWithoutIndexSurvivesARerun(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t)
	plain := specstore.New(st, nil)
	for _, name := range []string{"alpha", "beta", "gamma"} {
		createSpec(t, plain, name)
	}
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		return tx.Bucket(bucketstore.BucketSpecList).Delete([]byte("\x00index"))
	}); err != nil {
		t.Fatal(err)
	}
	repo := specstore.New(readOnly{&storetest.Rerun{Store: st}}, nil)
	for _, folder := range []string{"all", "pending"} {
		rows, next, err := repo.ListSpecs(ctx, folder, "", 10)
		if err != nil || len(rows) != 3 || next != "" {
			t.Errorf("%s: %d rows, next %q, %v; want 3 rows", folder, len(rows), next, err)
		}
		rows, next, err = repo.ListSpecs(ctx, folder, "", 2)
		if err != nil || len(rows) != 2 || next != rows[1].SpecID {
			t.Errorf("%s, limit 2: %d rows, next %q, %v", folder, len(rows), next, err)
		}
	}
}

// TestMutateSpecAnswersTheCommittedRun: when another writer made the same
// change while the first run lost its race, the run that counts changes
// nothing, and its answer reports no journal entries (the lost run's were
// never stored).
func TestMutateSpecAnswersTheCommittedRun(t *testing.T) {
	ctx := context.Background()
	rr, repo, plain := rerunOver(t, nil)
	id := createSpec(t, plain, "race")
	rename := func(sp *specs.Spec, j specs.JournalWriter) error {
		if sp.Header.Title == "renamed" {
			return nil
		}
		sp.Header.Title = "renamed"
		j.Append(specs.JournalEntry{Title: "renamed", Content: "c", EntryType: "note", Timestamp: specs.FormatTime(clock())})
		return nil
	}
	o := specs.RepoWriteOptions{Action: "test.rename"}
	once(t, rr, func() error { _, err := plain.MutateSpec(ctx, id, o, rename); return err })
	res, err := repo.MutateSpec(ctx, id, o, rename)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 2 || len(res.Journal) != 0 || len(res.Changes) != 0 {
		t.Errorf("answer %+v; want version 2, no journal, no changes (the other writer renamed it)", res)
	}
}

// TestIntakeDismissAnswersTheStoredItem: an item another caller dismissed
// (without a reason) while the first run lost its race is answered as
// stored, already dismissed, without the reason of the lost run.
func TestIntakeDismissAnswersTheStoredItem(t *testing.T) {
	ctx := context.Background()
	rr, repo, plain := rerunOver(t, nil)
	item, err := plain.IntakeAdd(ctx, specs.IntakeItem{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	once(t, rr, func() error {
		_, _, err := plain.IntakeDismiss(ctx, item.ID, "", "2026-01-02T00:00:00Z")
		return err
	})
	got, already, err := repo.IntakeDismiss(ctx, item.ID, "mine", "2026-01-03T00:00:00Z")
	if err != nil || !already || got.Reason != "" || got.DismissedAt != "2026-01-02T00:00:00Z" {
		t.Errorf("got %+v, already %v, %v; want the other caller's dismissal, already", got, already, err)
	}
}

// TestIntakeAddStampsTheStoringRun: created_at is read by the run that
// stores the item, so items arrive in the order of their created_at even
// when another item was added while the first run lost its race.
func TestIntakeAddStampsTheStoringRun(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	tick := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); tick = tick.Add(time.Minute); return tick }
	rr, repo, plain := rerunOver(t, now)
	once(t, rr, func() error { _, err := plain.IntakeAdd(ctx, specs.IntakeItem{Title: "other"}); return err })
	if _, err := repo.IntakeAdd(ctx, specs.IntakeItem{Title: "mine"}); err != nil {
		t.Fatal(err)
	}
	items, _, err := plain.IntakeList(ctx, "all", "", 10)
	if err != nil || len(items) != 2 {
		t.Fatal(items, err)
	}
	if items[0].CreatedAt >= items[1].CreatedAt {
		t.Errorf("%s added at %s before %s added at %s", items[0].ID, items[0].CreatedAt, items[1].ID, items[1].CreatedAt)
	}
}

// TestErrorGetAnswersTheStoredRecord: a request id names its newest
// record; one recorded while the first run read answers as stored (no
// field of the record the first run read).
func TestErrorGetAnswersTheStoredRecord(t *testing.T) {
	ctx := context.Background()
	rr, repo, plain := rerunOver(t, nil)
	if err := plain.ErrorRecord(ctx, errlog.Record{RequestID: "req-1", Tool: "spec", Action: "first", Code: "SPEC_NOT_FOUND"}); err != nil {
		t.Fatal(err)
	}
	once(t, rr, func() error {
		return plain.ErrorRecord(ctx, errlog.Record{RequestID: "req-1", Tool: "spec", Code: "SPEC_NOT_FOUND"})
	})
	got, err := repo.ErrorGet(ctx, "req-1")
	if err != nil || got.ID != "err-2" || got.Action != "" {
		t.Errorf("got %+v, %v; want err-2 without an action", got, err)
	}
}
