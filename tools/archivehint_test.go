package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags/registry"
)

// offFlags turns the flags in off off for every caller; every other flag
// (the response contract included) is on.
type offFlags struct{ off map[string]bool }

func (f offFlags) Gate(_ context.Context, flag string, _ mcptool.FlagContext) mcptool.FlagDecision {
	return mcptool.FlagDecision{Flag: flag, On: !f.off[flag], Source: "file"}
}
func (f offFlags) Contract(ctx context.Context, c mcptool.FlagContext) mcptool.FlagDecision {
	return f.Gate(ctx, registry.ResponseContractV2, c)
}
func (offFlags) Forget(string)                                         {}
func (offFlags) Observe([]mcptool.FlagDecision, string, time.Duration) {}
func (offFlags) List(context.Context, mcptool.FlagContext) any         { return nil }
func (offFlags) Health() any                                           { return nil }
func (offFlags) FileName() string                                      { return "flags.json" }
func (offFlags) Status() mcptool.FlagStatus {
	return mcptool.FlagStatus{Provider: "file", State: "ready"}
}

// TestDegradedAnswersNameArchiveGetOnlyWhenServed: an answer cut to the
// token budget tells the caller to fetch what it left out with research
// archive-get only when content_archive is on for that caller (archive-get
// would be refused otherwise); the archive hashes are reported either way.
// Covers the spec get levels (budgeted in the handler and again in the
// budget step) and a list answer (journal list).
func TestDegradedAnswersNameArchiveGetOnlyWhenServed(t *testing.T) {
	for _, archiveOff := range []bool{false, true} {
		h := newTaskHarness(t)
		h.d.Runtime.Flags = offFlags{off: map[string]bool{registry.ContentArchive: archiveOff}}
		for i := range 8 {
			h.call("s", "journal", map[string]any{"action": "add", "title": fmt.Sprintf("note %d", i), "content": strings.Repeat("a decision worth keeping. ", 30)})
		}
		h.d.TokenBudget = 1000
		h.reg = New(h.d)
		for _, tc := range []struct {
			name string
			args map[string]any
			tool string
		}{
			{"spec get, max_tokens", map[string]any{"action": "get", "max_tokens": 800}, "spec"},
			{"spec get, server budget", map[string]any{"action": "get"}, "spec"},
			{"journal list", map[string]any{"action": "list"}, "journal"},
		} {
			env := h.call("s", tc.tool, tc.args)
			meta, _ := env["meta"].(map[string]any)
			if env["success"] != true || meta["content_fidelity"] == nil || meta["content_fidelity"] == "full" {
				t.Fatalf("%s: want a degraded success, got %v", tc.name, env)
			}
			var msgs []string
			for _, w := range meta["warnings"].([]any) {
				msgs = append(msgs, w.(string))
			}
			all := strings.Join(msgs, " | ")
			if archiveOff == strings.Contains(all, "archive-get") {
				t.Errorf("content_archive off=%v, %s: warnings %q", archiveOff, tc.name, all)
			}
			if meta["content_archive_hashes"] == nil {
				t.Errorf("%s: no content_archive_hashes", tc.name)
			}
		}
	}
}
