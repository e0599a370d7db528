package tools

import (
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// BenchmarkValidateIDParams validates a call carrying two id parameters,
// each checked against specs.IDPattern.
func BenchmarkValidateIDParams(b *testing.B) {
	tool := &mcptool.Tool{Name: "task", Params: []mcptool.Param{idParam("spec_id", "s"), idParam("task_id", "t")},
		Actions: []mcptool.Action{{Name: "info", Required: []string{"spec_id", "task_id"}}}}
	args := map[string]any{"action": "info", "spec_id": "csv-export-2025-11-03-001", "task_id": "task-1-2-3"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := mcptool.Validate(tool, args); err != nil {
			b.Fatal(err)
		}
	}
}
