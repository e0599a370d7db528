package specs_test

import (
	"context"
	"testing"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

func TestFindSpecs(t *testing.T) {
	ctx := context.Background()
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	tests := []struct {
		query string
		want  int
	}{
		{"CSV", 1},        // title, any case
		{"2025-11-03", 1}, // id
		{"nothing", 0},
		{"", 1},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got, err := specs.FindSpecs(ctx, st, tt.query, 1)
			if err != nil || len(got) != tt.want || got == nil {
				t.Fatalf("FindSpecs(%q) = %v, %v; want %d", tt.query, got, err, tt.want)
			}
		})
	}
}

func TestReadDocumentAndHistory(t *testing.T) {
	ctx := context.Background()
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	for range 3 { // versions 2..4, each with a journal note
		if err := mutate(t, st, func(sp *specs.Spec, j specs.JournalWriter) error {
			_, err := specs.RecordVerificationNote(sp, j, "verify-1-1", specs.VerificationRecord{Result: "PASSED"}, "tester")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		version     int64
		journalMax  int
		wantVersion int64
		wantJournal int
		wantErr     string
	}{
		{name: "current", wantVersion: 4, journalMax: 10, wantJournal: 3},
		{name: "stored version, newest journal", version: 2, journalMax: 2, wantVersion: 2, wantJournal: 2},
		{name: "unknown version", version: 40, journalMax: 10, wantErr: errcode.VersionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := specs.ReadDocument(ctx, st, basicID, tt.version, tt.journalMax)
			if tt.wantErr != "" {
				if code(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || doc.Version != tt.wantVersion || len(doc.Journal) != tt.wantJournal {
				t.Fatalf("doc v%d with %d entries, %v", doc.Version, len(doc.Journal), err)
			}
			for i := 1; i < len(doc.Journal); i++ {
				if doc.Journal[i-1].Seq >= doc.Journal[i].Seq {
					t.Errorf("journal not oldest first: %d then %d", doc.Journal[i-1].Seq, doc.Journal[i].Seq)
				}
			}
		})
	}
	h, err := specs.ReadHistory(ctx, st, basicID, 0, 2)
	if err != nil || len(h.Versions) != 2 || h.Versions[0].Version != 4 || !h.More || h.Revisions == nil {
		t.Fatalf("history = %+v, %v", h, err)
	}
	if _, err := specs.ReadHistory(ctx, st, "nope", 0, 2); code(err) != errcode.SpecNotFound {
		t.Fatalf("history of a missing spec: %v", err)
	}
}

func TestFixSpecStoresOnlyWhatChanged(t *testing.T) {
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	tests := []struct {
		name        string
		breakIt     bool
		wantApplied bool
	}{
		{name: "valid spec: nothing applied"},
		{name: "wrong counts recounted", breakIt: true, wantApplied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res specs.FixResult
			wr, err := st.MutateSpec(context.Background(), basicID, specs.RepoWriteOptions{DryRun: true}, func(sp *specs.Spec, _ specs.JournalWriter) error {
				if tt.breakIt {
					sp.Edit("phase-1").TotalTasks = 99
				}
				res = specs.FixSpec(sp, nil)
				if got := sp.Node("phase-1").TotalTasks; got == 99 {
					t.Errorf("phase-1 total_tasks still 99 after fix")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if (len(res.Applied) > 0) != tt.wantApplied || !res.Report.IsValid {
				t.Errorf("applied %+v, valid %v", res.Applied, res.Report.IsValid)
			}
			if !tt.wantApplied && len(wr.Changes) != 0 {
				t.Errorf("a valid spec changed: %+v", wr.Changes)
			}
		})
	}
}

func TestStateOfAndListRows(t *testing.T) {
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	_ = st.ReadSpec(context.Background(), basicID, func(sp *specs.Spec, _ specs.JournalReader) error {
		s := specs.StateOf(sp)
		if s.SpecID != basicID || s.Lifecycle != specs.LifecycleActive || s.CanComplete || len(s.Allowed) == 0 {
			t.Errorf("state = %+v", s)
		}
		return nil
	})
	rows, _, err := st.ListSpecs(context.Background(), "all", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, withProgress := range []bool{true, false} {
		got := specs.ListRows(rows, withProgress)
		if len(got) != 1 || got[0].SpecID != basicID || (got[0].SpecProgress != nil) != withProgress {
			t.Errorf("rows(progress=%v) = %+v", withProgress, got)
		}
		// status is the folder, as in foundry; the spec's own status moves
		// to work_status.
		if got[0].Status != "active" || got[0].WorkStatus != rows[0].Status || got[0].WorkStatus == "active" {
			t.Errorf("status %q, work_status %q; want the folder and %q", got[0].Status, got[0].WorkStatus, rows[0].Status)
		}
	}
	if e := specs.SpecEnums(); len(e.Templates) == 0 || len(e.LifecycleFolders) != 4 {
		t.Errorf("enums = %+v", e)
	}
}
