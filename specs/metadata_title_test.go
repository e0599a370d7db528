package specs

import (
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestUpdateMetadataNullTitleIsRefused: a null value deletes a metadata
// key, but a node's title cannot be deleted: metadata {"title": null} (a
// task's or a phase's) is refused as an invalid title, not a panic, and
// changes nothing.
func TestUpdateMetadataNullTitleIsRefused(t *testing.T) {
	s := twoPhases(t)
	for _, c := range []struct {
		name   string
		update func() error
		id     string
	}{
		{"task", func() error { _, err := UpdateMetadata(s, "task-1-1", map[string]any{"title": nil}); return err }, "task-1-1"},
		{"phase", func() error { _, err := UpdatePhaseMetadata(s, "phase-1", map[string]any{"title": nil}); return err }, "phase-1"},
	} {
		before := s.Node(c.id).Title
		e := mustCode(t, c.update(), errcode.InvalidFormat)
		if e.Details["field"] != "title" {
			t.Errorf("%s: refused on field %v, want title", c.name, e.Details["field"])
		}
		if got := s.Node(c.id).Title; got != before {
			t.Errorf("%s: title %q after the refusal, want %q", c.name, got, before)
		}
	}
}
