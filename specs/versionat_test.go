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

// versionsAt imports the basic spec (version 1, made at its fixture's
// last_updated) and makes versions 2 and 3 on 2026-01-02 and 2026-01-03
// at noon UTC.
func versionsAt(t *testing.T) *specstore.Repo {
	t.Helper()
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	for day := 2; day <= 3; day++ {
		_, err := st.MutateSpec(context.Background(), basicID, specs.RepoWriteOptions{Action: "test"}, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = func() time.Time { return time.Date(2026, 1, day, 12, 0, 0, 0, time.UTC) }
			_, err := specs.RecordVerificationNote(sp, j, "verify-1-1", specs.VerificationRecord{Result: "PASSED"}, "tester")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func TestResolveVersion(t *testing.T) {
	tests := []struct {
		name    string
		ref     string
		want    int64
		wantErr string
	}{
		{name: "empty is the default", ref: "", want: 0},
		{name: "a number", ref: "2", want: 2},
		{name: "foundry backup id between versions", ref: "2026-01-02T18-20-13.456789", want: 2},
		{name: "foundry backup id after the newest", ref: "2026-02-01T00-00-00", want: 3},
		{name: "the very second a version was made", ref: "2026-01-03T12:00:00Z", want: 3},
		{name: "RFC 3339 with an offset", ref: "2026-01-03T13:30:00+02:00", want: 2},
		{name: "lower-case t and z", ref: "2026-01-03t12:00:00z", want: 3},
		{name: "RFC 3339 without a zone is UTC", ref: "2026-01-02T11:59:59", want: 1},
		{name: "before the spec existed", ref: "1999-01-01T00-00-00", wantErr: errcode.VersionNotFound},
		{name: "not a version", ref: "yesterday", wantErr: errcode.InvalidFormat},
		{name: "zero is not a version", ref: "0", wantErr: errcode.InvalidFormat},
		{name: "a bare date is not a moment", ref: "2026-01-02", wantErr: errcode.InvalidFormat},
	}
	st := versionsAt(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := specs.ResolveVersion(context.Background(), st, basicID, "version", tt.ref)
			if errCode(err) != tt.wantErr {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("version = %d, want %d", got, tt.want)
			}
		})
	}
}

// A moment before the oldest kept version, once older ones are pruned,
// names no version; after it, the oldest kept one.
func TestVersionAtPrunedHistory(t *testing.T) {
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	for day := 2; day <= 5; day++ {
		_, err := st.MutateSpec(context.Background(), basicID, specs.RepoWriteOptions{Action: "test", Keep: 2}, func(sp *specs.Spec, j specs.JournalWriter) error {
			sp.Clock = func() time.Time { return time.Date(2026, 1, day, 12, 0, 0, 0, time.UTC) }
			_, err := specs.RecordVerificationNote(sp, j, "verify-1-1", specs.VerificationRecord{Result: "PASSED"}, "tester")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Versions 2..5 were made on days 2..5; records 4 and 5 are kept, so
	// version 3 (day 3) is the oldest that can be rebuilt.
	for _, tt := range []struct {
		at      time.Time
		want    int64
		wantErr string
	}{
		{at: time.Date(2026, 1, 3, 13, 0, 0, 0, time.UTC), want: 3},
		{at: time.Date(2026, 1, 4, 13, 0, 0, 0, time.UTC), want: 4},
		{at: time.Date(2026, 1, 2, 13, 0, 0, 0, time.UTC), wantErr: errcode.VersionNotFound},
	} {
		got, err := specs.VersionAt(context.Background(), st, basicID, "version", tt.at)
		if errCode(err) != tt.wantErr || got != tt.want {
			t.Errorf("at %s: version %d, err %v; want %d, %q", tt.at, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCompareSpecRef(t *testing.T) {
	st := versionsAt(t)
	ctx := context.Background()
	c, err := specs.CompareSpecRef(ctx, st, basicID, "2026-01-02T18-00-00.000001", "")
	if err != nil || c.OldVersion != 2 || c.NewVersion != 3 {
		t.Fatalf("target timestamp: %+v, %v", c, err)
	}
	c, err = specs.CompareSpecRef(ctx, st, basicID, "", "2026-01-02T18:00:00Z")
	if err != nil || c.OldVersion != 2 {
		t.Fatalf("version timestamp: %+v, %v", c, err)
	}
	if _, err := specs.CompareSpecRef(ctx, st, basicID, "Not/An/ID", ""); code(err) != errcode.InvalidFormat {
		t.Fatalf("bad target: %v", err)
	}
}

func TestRollbackByTimestamp(t *testing.T) {
	st := versionsAt(t)
	v, res, err := specs.Rollback(context.Background(), st, basicID, "2026-01-02T18-00-00", specs.RepoWriteOptions{Action: "test"}, func() string { return "2026-01-04T00:00:00Z" })
	if err != nil || v != 2 || res.Version != 4 {
		t.Fatalf("rollback: restored %d as %d, %v", v, res.Version, err)
	}
	if _, _, err := specs.Rollback(context.Background(), st, basicID, "", specs.RepoWriteOptions{}, nil); code(err) != errcode.MissingRequired {
		t.Fatalf("no version: %v", err)
	}
}

func TestReadHistoryFrom(t *testing.T) {
	st := versionsAt(t)
	h, err := specs.ReadHistoryFrom(context.Background(), st, basicID, "2026-01-02T18-00-00", 0, 10)
	if err != nil || len(h.Versions) == 0 || h.Versions[0].Version != 2 {
		t.Fatalf("history from day 2: %+v, %v", h.Versions, err)
	}
}

// errCode is err's code, "" for nil.
func errCode(err error) string {
	if err == nil {
		return ""
	}
	return code(err)
}

// With no history record yet (a spec just imported), the current version
// counts from its last_updated on; before it, VERSION_NOT_FOUND names it as
// the oldest.
func TestVersionAtEmptyHistory(t *testing.T) {
	st := specstore.New(storetest.Open(t), nil)
	importBasic(t, st)
	ctx := context.Background()
	h, err := specs.ReadHistory(ctx, st, basicID, 0, 10)
	if err != nil || len(h.Versions) != 0 {
		t.Fatalf("history after import: %+v, %v", h.Versions, err)
	}
	got, err := specs.VersionAt(ctx, st, basicID, "version", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || got != 1 {
		t.Fatalf("after the import: version %d, %v; want 1", got, err)
	}
	_, err = specs.VersionAt(ctx, st, basicID, "version", time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC))
	var e *core.Error
	if !errors.As(err, &e) || e.Code != errcode.VersionNotFound || e.Details["oldest_version"] != int64(1) || e.Details["oldest_timestamp"] == "" {
		t.Fatalf("before the import: %v (%+v)", err, e)
	}
}
