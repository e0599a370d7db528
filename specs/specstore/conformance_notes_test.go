package specstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/specs"
)

func notesOf(t *testing.T, open portOpener) Port {
	t.Helper()
	return open(t, nil)
}

// testErrorLogIsBounded: past errlog.MaxRecords the oldest records go (in
// batches, as the error writer records them), the ids keep counting, and
// list pages newest first without gaps.
func testErrorLogIsBounded(t *testing.T, open portOpener) {
	st := notesOf(t, open)
	ctx := context.Background()
	n := errlog.MaxRecords + 25
	var batch []errlog.Record
	for i := 1; i <= n; i++ {
		batch = append(batch, errlog.Record{At: fmt.Sprintf("2026-01-01T00:%02d:%02dZ", i/60%60, i%60), Tool: "spec", Code: "SPEC_NOT_FOUND"})
		if len(batch) == 64 || i == n {
			if err := st.ErrorRecord(ctx, batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	all, more, err := st.Errors(ctx, errlog.Filter{}, "", 0)
	if err != nil || more {
		t.Fatal(err, more)
	}
	if len(all) != errlog.MaxRecords || all[0].ID != fmt.Sprintf("err-%d", n) || all[len(all)-1].ID != "err-26" {
		t.Fatalf("kept %d records, newest %s, oldest %s", len(all), all[0].ID, all[len(all)-1].ID)
	}
	if _, err := st.ErrorGet(ctx, "err-25"); err == nil {
		t.Fatal("err-25 should have been dropped")
	}
	page, more, err := st.Errors(ctx, errlog.Filter{}, all[9].ID, 10)
	if err != nil || !more || len(page) != 10 || page[0].ID != all[10].ID {
		t.Fatalf("second page: %v %v %d %v", err, more, len(page), page)
	}
}

// testIntakeInbox: add numbers items, list filters by status and pages,
// dismiss keeps the first dismissal, a missing item is NOT_FOUND.
func testIntakeInbox(t *testing.T, open portOpener) {
	st := notesOf(t, open)
	ctx := context.Background()
	for _, title := range []string{"a", "b", "c"} {
		if _, err := st.IntakeAdd(ctx, specs.IntakeItem{Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.IntakeDismiss(ctx, "intake-2", "dup", "2026-01-01T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	it, already, err := st.IntakeDismiss(ctx, "intake-2", "again", "2026-01-02T00:00:00Z")
	if err != nil || !already || it.Reason != "dup" {
		t.Fatalf("second dismiss: %v %v %+v", err, already, it)
	}
	for _, tc := range []struct {
		status, after string
		limit         int
		want          []string
		next          string
	}{
		{specs.IntakeNew, "", 10, []string{"intake-1", "intake-3"}, ""},
		{"all", "", 2, []string{"intake-1", "intake-2"}, "intake-2"},
		{"all", "intake-2", 2, []string{"intake-3"}, ""},
		{specs.IntakeDismissed, "", 10, []string{"intake-2"}, ""},
	} {
		items, next, err := st.IntakeList(ctx, tc.status, tc.after, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range items {
			got = append(got, i.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || next != tc.next {
			t.Errorf("%+v: got %v next %q", tc, got, next)
		}
	}
	if _, _, err := st.IntakeDismiss(ctx, "intake-9", "", ""); codeOf(err) != errcode.NotFound {
		t.Fatalf("dismissing a missing item: %v, want NOT_FOUND", err)
	}
}

// testFullIntakeMakesRoom: a full inbox forgets its oldest dismissed item
// to take a new one, and answers CONFLICT when none is dismissed.
func testFullIntakeMakesRoom(t *testing.T, open portOpener) {
	st := notesOf(t, open)
	capped, ok := any(st).(interface{ SetIntakeCapacity(int) })
	if !ok {
		t.Fatal("the store's intake capacity cannot be set")
	}
	const capacity = 10
	capped.SetIntakeCapacity(capacity)
	ctx := context.Background()
	for i := 0; i < capacity; i++ {
		if _, err := st.IntakeAdd(ctx, specs.IntakeItem{Title: fmt.Sprint("item ", i)}); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	if _, err := st.IntakeAdd(ctx, specs.IntakeItem{Title: "one too many"}); codeOf(err) != errcode.Conflict {
		t.Fatalf("a full inbox with nothing dismissed: %v, want CONFLICT", err)
	}
	for _, id := range []string{"intake-7", "intake-3"} {
		if _, _, err := st.IntakeDismiss(ctx, id, "done", "2026-01-01T00:00:00Z"); err != nil {
			t.Fatal(err)
		}
	}
	added, err := st.IntakeAdd(ctx, specs.IntakeItem{Title: "room made"})
	if err != nil {
		t.Fatalf("a full inbox with dismissed items: %v", err)
	}
	dismissed, _, err := st.IntakeList(ctx, specs.IntakeDismissed, "", 10)
	if err != nil || len(dismissed) != 1 || dismissed[0].ID != "intake-7" || added.ID != fmt.Sprintf("intake-%d", capacity+1) {
		t.Fatalf("after making room: added %s, dismissed left %v (%v); want intake-3 forgotten", added.ID, dismissed, err)
	}
}
