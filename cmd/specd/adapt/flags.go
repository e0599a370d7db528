package adapt

import (
	"context"
	"time"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags"
)

// Flags presents a flags.Service as tools.Flags. Close shuts the service
// down (bounded to flags.ShutdownTimeout).
func Flags(s *flags.Service) *FlagsAdapter { return &FlagsAdapter{s} }

// FlagsAdapter is the flags service behind tools.Flags.
type FlagsAdapter struct{ S *flags.Service }

var _ mcptool.Flags = (*FlagsAdapter)(nil)

func flagsContext(c mcptool.FlagContext) flags.Context {
	return flags.Context{SessionID: c.SessionID, ClientName: c.ClientName, ClientVersion: c.ClientVersion,
		APIKeyID: c.APIKeyID, Tool: c.Tool, Action: c.Action}
}

func decision(d flags.Decision) mcptool.FlagDecision {
	return mcptool.FlagDecision{Flag: d.Flag, On: d.Value, Variant: d.Variant, Source: d.Source}
}

// Gate implements tools.Flags.
func (a *FlagsAdapter) Gate(ctx context.Context, flag string, c mcptool.FlagContext) mcptool.FlagDecision {
	return decision(a.S.Evaluate(ctx, flag, flagsContext(c)))
}

// Contract implements tools.Flags.
func (a *FlagsAdapter) Contract(ctx context.Context, c mcptool.FlagContext) mcptool.FlagDecision {
	return decision(a.S.Contract(ctx, flagsContext(c)))
}

// Forget implements tools.Flags.
func (a *FlagsAdapter) Forget(sessionID string) { a.S.Forget(sessionID) }

// Observe implements tools.Flags.
func (a *FlagsAdapter) Observe(ds []mcptool.FlagDecision, errorType string, d time.Duration) {
	var buf [2]flags.Decision
	out := buf[:0]
	for _, x := range ds {
		out = append(out, flags.Decision{Flag: x.Flag, Value: x.On, Variant: x.Variant, Source: x.Source})
	}
	a.S.Observe(out, errorType, d)
}

// List implements tools.Flags.
func (a *FlagsAdapter) List(ctx context.Context, c mcptool.FlagContext) any {
	return a.S.List(ctx, flagsContext(c))
}

// Health implements tools.Flags.
func (a *FlagsAdapter) Health() any { return a.S.Health() }

// FileName implements tools.Flags.
func (a *FlagsAdapter) FileName() string { return a.S.FileName() }

// Close shuts the flags service down.
func (a *FlagsAdapter) Close() error { return a.S.Close() }
