package tools

import (
	"fmt"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestOverBudgetSpecReadsPointToSpecGet: New narrows a read about one spec
// whose answer cannot fit the server's budget (and cannot be paged) with
// spec get of that spec, which fits any budget; spec get itself points
// nowhere.
func TestOverBudgetSpecReadsPointToSpecGet(t *testing.T) {
	h := newTaskHarness(t)
	h.d.TokenBudget = 60
	h.reg = New(h.d)
	for _, tc := range []struct{ tool, action, want string }{
		{"spec", "stats", "spec get " + h.specID},
		{"lifecycle", "state", "spec get " + h.specID},
		{"task", "progress", "spec get " + h.specID},
		{"spec", "get", "<nil> <nil>"},
	} {
		env := h.call("s", tc.tool, map[string]any{"action": tc.action})
		if code(env) != errcode.PayloadTooLarge {
			t.Fatalf("%s %s: want PAYLOAD_TOO_LARGE at 60 tokens, got %v", tc.tool, tc.action, env)
		}
		rec := env["data"].(map[string]any)["recovery"].(map[string]any)
		args, _ := rec["suggested_args"].(map[string]any)
		got := fmt.Sprint(rec["suggested_tool"], " ", args["action"])
		if args != nil {
			got += fmt.Sprint(" ", args["spec_id"])
		}
		if got != tc.want {
			t.Errorf("%s %s: recovery %q, want %q", tc.tool, tc.action, got, tc.want)
		}
	}
}
