package store_test

import (
	"context"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestRollbackHonoursExpectedVersion (issue 8 item 17): spec-rollback with a
// stale expected_version is VERSION_CONFLICT and changes nothing (no new
// version, no node restored); with the current one it rolls back.
func TestRollbackHonoursExpectedVersion(t *testing.T) {
	st := storetest.Open(t)
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
