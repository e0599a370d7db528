package tests

import (
	"strings"
	"testing"
)

// TestUpdateMetadataNullTitleIsRefusedEndToEnd: task update-metadata with
// metadata {"title": null} (null deletes a key, but a title cannot be
// deleted) is refused as INVALID_FORMAT with a recovery that runs, and the
// title stays.
func TestUpdateMetadataNullTitleIsRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	spec, _, task, _ := foundryToolsSpec(t, c)
	d := failsWith(t, c, "INVALID_FORMAT", "task", map[string]any{"action": "update-metadata", "spec_id": spec, "task_id": task,
		"metadata": map[string]any{"title": nil}})
	if det, _ := d["details"].(map[string]any); det["field"] != "title" {
		t.Errorf("refused on field %v, want title: %v", det["field"], d)
	}
	info := ok(t, c, "task", map[string]any{"action": "info", "spec_id": spec, "task_id": task})
	if got := mustJSON(t, info); !strings.Contains(got, `"title":"A"`) {
		t.Errorf("the title changed: %s", got)
	}
}
