package specs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

// mutate runs fn as one stored mutation of the basic spec.
func mutate(t *testing.T, st *specstore.Repo, fn func(sp *specs.Spec, j specs.JournalWriter) error) error {
	t.Helper()
	_, err := st.MutateSpec(context.Background(), basicID, specs.RepoWriteOptions{Action: "test"}, func(sp *specs.Spec, j specs.JournalWriter) error {
		sp.Clock = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
		return fn(sp, j)
	})
	return err
}

func journal(t *testing.T, st *specstore.Repo, taskID, entryType string) []specs.JournalEntry {
	t.Helper()
	var out []specs.JournalEntry
	err := st.ReadSpec(context.Background(), basicID, func(_ *specs.Spec, j specs.JournalReader) error {
		var err error
		out, _, err = specs.ReadJournal(j, taskID, entryType, 0, 100)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMoveSpecJournalsFolderChanges(t *testing.T) {
	tests := []struct {
		name        string
		to          specs.Lifecycle
		force       bool
		wantErr     string
		wantEntries int
		wantWarn    bool
	}{
		{name: "same folder warns, no entry", to: specs.LifecycleActive, wantWarn: true},
		{name: "archive journals", to: specs.LifecycleArchived, wantEntries: 1},
		{name: "complete below 100% refused", to: specs.LifecycleCompleted, wantErr: errcode.InvalidTransition},
		{name: "complete with force warns and journals", to: specs.LifecycleCompleted, force: true, wantEntries: 1, wantWarn: true},
		{name: "unknown folder", to: "elsewhere", wantErr: errcode.InvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := specstore.New(storetest.Open(t), nil)
			importBasic(t, st)
			var m specs.LifecycleMove
			err := mutate(t, st, func(sp *specs.Spec, j specs.JournalWriter) error {
				var err error
				m, err = specs.MoveSpec(sp, j, tt.to, tt.force, "tester")
				return err
			})
			if tt.wantErr != "" {
				if core.CodeOf(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.FromFolder != specs.LifecycleActive || m.ToFolder != tt.to || m.Lifecycle != tt.to || (len(m.Warnings) > 0) != tt.wantWarn {
				t.Errorf("move = %+v", m)
			}
			entries := journal(t, st, "", "status_change")
			if len(entries) != tt.wantEntries {
				t.Fatalf("status_change entries = %+v, want %d", entries, tt.wantEntries)
			}
			if len(entries) == 1 && (entries[0].Author != "tester" || entries[0].Metadata["to"] != string(tt.to) || entries[0].Timestamp != "2026-01-02T03:04:05Z") {
				t.Errorf("entry = %+v", entries[0])
			}
		})
	}
}

func TestAddJournalEntry(t *testing.T) {
	tests := []struct {
		name     string
		entry    specs.JournalEntry
		wantType string
		wantErr  string
	}{
		{name: "defaults to note", entry: specs.JournalEntry{Title: "t"}, wantType: "note"},
		{name: "keeps its type and clears needs_journaling", entry: specs.JournalEntry{Title: "t", EntryType: "decision", TaskID: "phase-1"}, wantType: "decision"},
		{name: "unknown task", entry: specs.JournalEntry{Title: "t", TaskID: "task-9-9"}, wantErr: errcode.TaskNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := specstore.New(storetest.Open(t), nil)
			importBasic(t, st)
			before := unjournaled(t, st)
			var got specs.JournalEntry
			err := mutate(t, st, func(sp *specs.Spec, j specs.JournalWriter) error {
				var err error
				got, err = specs.AddJournalEntry(sp, j, tt.entry)
				return err
			})
			if tt.wantErr != "" {
				if core.CodeOf(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.EntryType != tt.wantType || got.Timestamp != "2026-01-02T03:04:05Z" {
				t.Errorf("entry = %+v", got)
			}
			if n := len(journal(t, st, tt.entry.TaskID, tt.wantType)); n != 1 {
				t.Errorf("stored %d matching entries, want 1", n)
			}
			if after := unjournaled(t, st); tt.entry.TaskID != "" && len(after) != len(before)-1 {
				t.Errorf("unjournaled %v → %v: the task was not marked", before, after)
			}
		})
	}
}

func unjournaled(t *testing.T, st *specstore.Repo) []specs.UnjournaledTask {
	t.Helper()
	var out []specs.UnjournaledTask
	if err := st.ReadSpec(context.Background(), basicID, func(sp *specs.Spec, _ specs.JournalReader) error {
		var nodes []*specs.Node
		out, nodes = specs.UnjournaledTasks(sp)
		for i, n := range nodes {
			if n.ID != out[i].TaskID {
				t.Errorf("node %s listed as %s", n.ID, out[i].TaskID)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRecordVerificationNote(t *testing.T) {
	tests := []struct {
		name       string
		id         string
		rec        specs.VerificationRecord
		wantResult string
		wantErr    string
	}{
		{name: "records and journals", id: "verify-1-1", rec: specs.VerificationRecord{Result: "passed", Command: "go test"}, wantResult: "PASSED"},
		{name: "not a verify node", id: "task-1-1", rec: specs.VerificationRecord{Result: "PASSED"}, wantErr: errcode.Validation},
		{name: "bad result", id: "verify-1-1", rec: specs.VerificationRecord{Result: "MAYBE"}, wantErr: errcode.InvalidFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := specstore.New(storetest.Open(t), nil)
			importBasic(t, st)
			var got specs.VerificationRecorded
			err := mutate(t, st, func(sp *specs.Spec, j specs.JournalWriter) error {
				var err error
				got, err = specs.RecordVerificationNote(sp, j, tt.id, tt.rec, "tester")
				return err
			})
			if tt.wantErr != "" {
				if core.CodeOf(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Result != tt.wantResult || got.LastResult != tt.wantResult || got.HistoryCount != 1 || !got.Recorded || got.Record["command"] != "go test" {
				t.Errorf("recorded = %+v", got)
			}
			entries := journal(t, st, tt.id, "note")
			if len(entries) != 1 || entries[0].Title != "Verification PASSED: Run tests" || entries[0].Author != "tester" {
				t.Errorf("journal = %+v", entries)
			}
		})
	}
}

func TestCommandRunOutcome(t *testing.T) {
	long := make([]byte, specs.MaxVerificationOutput+10)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name          string
		run           specs.CommandRun
		wantResult    string
		wantIssues    string
		wantExit      *int
		wantTruncated bool
	}{
		{name: "exit 0 passes", run: specs.CommandRun{ExitCode: 0, Output: "ok"}, wantResult: "PASSED", wantExit: intp(0)},
		{name: "exit 2 fails", run: specs.CommandRun{ExitCode: 2}, wantResult: "FAILED", wantIssues: "exit code 2", wantExit: intp(2)},
		{name: "timeout fails without exit code", run: specs.CommandRun{ExitCode: -1, TimedOut: true}, wantResult: "FAILED", wantIssues: "timed out after 5s"},
		{name: "long output keeps its end", run: specs.CommandRun{Output: string(long)}, wantResult: "PASSED", wantExit: intp(0), wantTruncated: true},
		{name: "dropped output is truncated", run: specs.CommandRun{Output: "tail", Dropped: true}, wantResult: "PASSED", wantExit: intp(0), wantTruncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, rec := tt.run.Outcome("make test", 5*time.Second)
			if rec.Result != tt.wantResult || rec.Issues != tt.wantIssues || out.OutputTruncated != tt.wantTruncated || !out.Executed || out.TimeoutSeconds != 5 {
				t.Errorf("outcome = %+v, record = %+v", out, rec)
			}
			if (out.ExitCode == nil) != (tt.wantExit == nil) || (out.ExitCode != nil && *out.ExitCode != *tt.wantExit) {
				t.Errorf("exit code = %v, want %v", out.ExitCode, tt.wantExit)
			}
			if rec.Output != out.Output || len([]rune(out.Output)) > specs.MaxVerificationOutput {
				t.Errorf("output %d characters", len([]rune(out.Output)))
			}
		})
	}
}

func intp(i int) *int { return &i }

func TestCompareSpec(t *testing.T) {
	tests := []struct {
		name       string
		target     string
		version    int64
		wantOld    int64
		wantTarget string
		wantField  string
		wantErr    string
	}{
		{name: "default is the version before", wantOld: 2},
		{name: "numeric target is a version", target: "1", wantOld: 1},
		{name: "version 0 as target clamps to 1", target: "0", wantOld: 1},
		{name: "another spec", target: "other-spec", wantTarget: "other-spec"},
		{name: "missing other spec names target", target: "nope", wantErr: errcode.SpecNotFound, wantField: "target"},
		{name: "missing version", version: 99, wantErr: errcode.VersionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := specstore.New(storetest.Open(t), nil)
			importBasic(t, st)
			for range 2 { // versions 2 and 3
				if err := mutate(t, st, func(sp *specs.Spec, j specs.JournalWriter) error {
					_, err := specs.RecordVerificationNote(sp, j, "verify-1-1", specs.VerificationRecord{Result: "PASSED"}, "tester")
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			other, _ := specs.ParseDocument(fixture(t, "foundry_basic.json"))
			other.SpecID = "other-spec"
			if err := st.ImportSpec(ctx, specs.FromDocument(*specs.Fix(other, specs.FixOptions{}).Document), nil, false); err != nil {
				t.Fatal(err)
			}
			c, err := specs.CompareSpec(ctx, st, basicID, tt.target, tt.version)
			if tt.wantErr != "" {
				if code(err) != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				var fe *specs.FieldError
				if got := errors.As(err, &fe); got != (tt.wantField != "") || (got && fe.Field != tt.wantField) {
					t.Errorf("field error = %v, want field %q", fe, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Target != tt.wantTarget || c.OldSpec != basicID {
				t.Errorf("comparison = %+v", c)
			}
			if tt.wantTarget == "" {
				if c.OldVersion != tt.wantOld || c.NewVersion != 3 || len(c.Diff.Modified) != 1 || c.Diff.Modified[0].ID != "verify-1-1" {
					t.Errorf("versions %d→%d, modified %+v", c.OldVersion, c.NewVersion, c.Diff.Modified)
				}
			} else if c.NewSpec != tt.wantTarget || len(c.Diff.Modified) == 0 {
				t.Errorf("spec comparison = %+v", c.Diff)
			}
		})
	}
}
