package tools

import (
	"testing"
	"time"
)

// A Deps built without a runtime clock (specd call's path) still has one:
// the wall clock. Before, clock() returned the nil runtime clock and
// intake-add, intake-dismiss, spec-rollback and reset-batch panicked.
func TestClockWithoutRuntimeNowIsTheWallClock(t *testing.T) {
	var d Deps
	before := time.Now()
	got := d.clock()()
	if got.Before(before.Add(-time.Second)) || got.After(time.Now().Add(time.Second)) {
		t.Fatalf("clock() = %v, want about %v", got, before)
	}
	fixed := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	d.Runtime.Now = func() time.Time { return fixed }
	if got := d.clock()(); !got.Equal(fixed) {
		t.Fatalf("clock() with a runtime clock = %v, want %v", got, fixed)
	}
}
