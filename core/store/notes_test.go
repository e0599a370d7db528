package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestErrorLogIsBounded: past errlog.MaxRecords the oldest records go, the
// ids keep counting, and list pages newest first without gaps.
func TestErrorLogIsBounded(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	n := errlog.MaxRecords + 25
	for i := 1; i <= n; i++ {
		if err := st.ErrorRecord(ctx, errlog.Record{At: fmt.Sprintf("2026-01-01T00:%02d:%02dZ", i/60%60, i%60), Tool: "spec", Code: "SPEC_NOT_FOUND"}); err != nil {
			t.Fatal(err)
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

// TestIntakeInbox: add numbers items, list filters by status and pages,
// dismiss keeps the first dismissal.
func TestIntakeInbox(t *testing.T) {
	st := storetest.Open(t)
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
	if _, _, err := st.IntakeDismiss(ctx, "intake-9", "", ""); err == nil {
		t.Fatal("dismissing a missing item must fail")
	}
}
