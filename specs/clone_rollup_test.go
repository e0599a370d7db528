package specs

import (
	"reflect"
	"testing"
)

// TestCloneSharesOnlyTheRollupSummary: a node's copy shares its rollup
// summary (replaced whole by the rollups, never changed in place) and
// copies every other metadata value; a rollup of the copy replaces the
// summary and leaves the original's as it was.
func TestCloneSharesOnlyTheRollupSummary(t *testing.T) {
	s := newTestSpec(t)
	phase, err := AddPhase(s, PhaseInput{Title: "p"})
	noErr(t, err)
	_, err = AddTask(s, phase.PhaseID, TaskInput{Title: "t"})
	noErr(t, err)
	src := MemorySource{}
	s, src = commit(s, src)
	orig := src[phase.PhaseID]
	orig.Metadata["nested"] = map[string]any{"k": "v"}
	before, _ := orig.Metadata[RollupMetaKey].(map[string]any)
	if before == nil {
		t.Fatalf("phase without a summary: %v", orig.Metadata)
	}
	want := map[string]any{"in_progress": before["in_progress"], "first_open": before["first_open"]}

	c := orig.Clone()
	if got, _ := c.Metadata[RollupMetaKey].(map[string]any); reflect.ValueOf(got).Pointer() != reflect.ValueOf(before).Pointer() {
		t.Errorf("the copy's summary is a copy: %v", got)
	}
	if reflect.ValueOf(c.Metadata["nested"]).Pointer() == reflect.ValueOf(orig.Metadata["nested"]).Pointer() {
		t.Error("the copy shares a nested metadata map")
	}

	// starting the phase's task moves the phase's summary (in_progress 0 -> 1)
	task := orig.Children.At(0)
	_, err = Start(s, task, TransitionOptions{})
	noErr(t, err)
	after, _ := s.Node(phase.PhaseID).Metadata[RollupMetaKey].(map[string]any)
	if after["in_progress"] != 1.0 {
		t.Fatalf("summary after the start %v", after)
	}
	if !reflect.DeepEqual(before, want) || !reflect.DeepEqual(src[phase.PhaseID].Metadata[RollupMetaKey], want) {
		t.Errorf("the stored phase's summary changed: %v, want %v", before, want)
	}
}
