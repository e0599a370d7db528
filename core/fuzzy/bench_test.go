package fuzzy

import "testing"

// benchNames is a realistic candidate list: action and parameter names of
// the kind the error envelopes rank.
var benchNames = []string{
	"liveness", "readiness", "check", "list", "list-blocked", "complete", "complete-batch",
	"spec-template", "phase-template", "archive-get", "archive-list", "content-archive-hashes",
	"next", "claim", "release", "status", "create", "update", "delete", "history", "notes",
	"subscribe", "unsubscribe", "schema", "tools", "feature-flags", "error-log", "in_progress",
	"pending", "blocked", "completed", "cancelled", "task_id", "spec_id", "tool_name", "template_action",
}

func BenchmarkDistance(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range benchNames {
			_ = Distance("complted-batch", c)
		}
	}
}

func BenchmarkRank(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Rank("list_blokced", benchNames, 5)
	}
}
