package mcptool

import (
	"context"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// gateFlags answers every flag with on.
type gateFlags struct{ on bool }

func (g gateFlags) Gate(_ context.Context, flag string, _ FlagContext) FlagDecision {
	return FlagDecision{Flag: flag, On: g.on}
}
func (g gateFlags) Contract(context.Context, FlagContext) FlagDecision { return FlagDecision{On: true} }
func (gateFlags) Forget(string)                                        {}
func (gateFlags) Observe([]FlagDecision, string, time.Duration)        {}
func (gateFlags) List(context.Context, FlagContext) any                { return nil }
func (gateFlags) Health() any                                          { return nil }
func (gateFlags) FileName() string                                     { return "flags.json" }
func (gateFlags) Status() FlagStatus                                   { return FlagStatus{Provider: "file", State: "ready"} }

// denyAccess refuses every action.
type denyAccess struct{ spentAccess }

func (denyAccess) Permit(context.Context, string, string, string) *core.Error {
	return core.NewError(errcode.Forbidden, "no", nil)
}

// TestArchiveServed: archived content is served to a caller only when the
// archive action is registered, not refused by its tool, permitted for the
// caller's role and its flag is on.
func TestArchiveServed(t *testing.T) {
	archiveTool := func(refuse bool) *Tool {
		tl := &Tool{Name: "store", Description: "Use this when testing.", Actions: []Action{{
			Name: "archive-get", Summary: "reads", SideEffects: EffectRead, Latency: LatencyFast, Flag: "archive",
			Handler: func(context.Context, *Request) Result { return OK(nil) }}}}
		if refuse {
			tl.Refuse = func(a string) *core.Error { return core.NewError(errcode.NotSupported, "no", nil) }
		}
		return tl
	}
	n := 0
	tests := []struct {
		name   string
		serve  [2]string
		refuse bool
		rt     Runtime
		want   bool
	}{
		{"served", [2]string{"store", "archive-get"}, false, Runtime{Flags: gateFlags{on: true}}, true},
		{"no flags wired: gates open", [2]string{"store", "archive-get"}, false, Runtime{}, true},
		{"flag off", [2]string{"store", "archive-get"}, false, Runtime{Flags: gateFlags{on: false}}, false},
		{"role may not", [2]string{"store", "archive-get"}, false, Runtime{Access: denyAccess{spentAccess{&n}}}, false},
		{"tool refuses it", [2]string{"store", "archive-get"}, true, Runtime{}, false},
		{"no archive action named", [2]string{}, false, Runtime{}, false},
		{"unknown action", [2]string{"store", "archive-put"}, false, Runtime{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Registry{}
			r.Add(archiveTool(tt.refuse))
			r.ServeArchiveWith(tt.serve[0], tt.serve[1])
			req := &Request{Session: Session{ID: "s"}}
			r.archiveCheck(context.Background(), tt.rt, req)
			for range 2 { // decided once, then remembered
				if got := req.ArchiveServed(); got != tt.want {
					t.Fatalf("Request.ArchiveServed = %v, want %v", got, tt.want)
				}
			}
			if !req.archive.decided {
				t.Fatal("the decision was not remembered")
			}
		})
	}
}
