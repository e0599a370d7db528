package mcptool

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// spentAccess is a shared server whose caller has no calls left: Charge
// refuses every call, Permit allows it.
type spentAccess struct{ charged *int }

func (a spentAccess) Charge(context.Context) ([]core.MetaOption, *core.Error) {
	*a.charged++
	return nil, core.NewError(errcode.RateLimitExceeded, "Too many calls.", map[string]any{"retry_after_seconds": 1})
}
func (spentAccess) Permit(context.Context, string, string, string) *core.Error { return nil }
func (spentAccess) KeyID(context.Context) string                               { return "k1" }
func (spentAccess) Done(context.Context, string, string, string, time.Duration, []FlagDecision) {
}

// TestRefuseUnlistedIsChargedLikeEveryCall: a call of an unlisted tool
// answers the given refusal, except that it is charged to the caller's
// rate limit first, and a caller over it gets RATE_LIMIT_EXCEEDED.
func TestRefuseUnlistedIsChargedLikeEveryCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		access bool
		want   string
	}{
		{"no access hook", false, errcode.NotSupported},
		{"rate limit spent", true, errcode.RateLimitExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charged := 0
			rt := &Runtime{}
			if tc.access {
				rt.Access = spentAccess{&charged}
			}
			rt.Defaults()
			call := core.NewCall("review", "spec", rt.Now, rt.NewID)
			res := rt.RefuseUnlisted(context.Background(), mcp.CallToolRequest{}, call, core.NewError(errcode.NotSupported, "Not offered.", nil))
			var env struct {
				Success bool           `json:"success"`
				Data    map[string]any `json:"data"`
			}
			if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &env); err != nil {
				t.Fatal(err)
			}
			if env.Success || env.Data["error_code"] != tc.want || !res.IsError {
				t.Fatalf("want %s, got %+v", tc.want, env)
			}
			if tc.access && charged != 1 {
				t.Errorf("charged %d times, want 1", charged)
			}
		})
	}
}
