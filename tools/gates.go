package tools

import (
	"context"
	"fmt"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/flags/registry"
)

// setActionFlags sets Action.Flag on every action of r that a flag of the
// registry (flags/registry) gates; a gate naming an action r lacks is a
// programming error.
func setActionFlags(r *mcptool.Registry) {
	for _, f := range registry.Flags {
		for _, g := range f.Gates {
			if g.What != "" {
				continue
			}
			t, ok := r.Tool(g.Tool)
			if !ok {
				continue // a tool set without this tool
			}
			a, ok := t.Action(g.Action)
			if !ok {
				panic("tools: flag " + f.Name + " gates unknown action " + g.Tool + " " + g.Action)
			}
			a.Flag = f.Name
		}
	}
}

// markAvailability sets available:false, with the reason, on the actions of
// t that are off for this caller (unavailableReason).
func markAvailability(ctx context.Context, d *Deps, t *mcptool.Tool, sess mcptool.Session, actions []mcptool.ActionSchema) {
	for i := range actions {
		if reason := unavailableReason(ctx, d, t.Name, sess, &actions[i]); reason != "" {
			actions[i].Available = false
			actions[i].Reason = reason
		}
	}
}

// unavailableReason is why tool's action as is off for this caller, ""
// when it is on: a command-running action (runsCommands) on a server
// started without --enable-verification-execute, else its feature flag
// off for the caller.
func unavailableReason(ctx context.Context, d *Deps, tool string, sess mcptool.Session, as *mcptool.ActionSchema) string {
	if runsCommands(tool, as.Name) && !d.VerificationExecute {
		return "this server was started without --enable-verification-execute"
	}
	if as.Flag == "" || d.Runtime.Flags == nil {
		return ""
	}
	if g := d.Runtime.Flags.Gate(ctx, as.Flag, mcptool.NewFlagContext(sess, tool, as.Name)); !g.On {
		return fmt.Sprintf("feature flag %s is off for this client (source: %s; flag file: %s)", as.Flag, g.Source, d.Runtime.Flags.FileName())
	}
	return ""
}

// runsCommands reports whether tool's action runs a command in the
// workspace (verification execute, test run): off unless the server
// runs with --enable-verification-execute.
func runsCommands(tool, action string) bool {
	return tool == "verification" && action == "execute" || tool == "test" && action == "run"
}

// flagsList is the flags entry of server capabilities.
func flagsList(ctx context.Context, d *Deps, sess mcptool.Session) any {
	if d.Runtime.Flags == nil {
		return []any{}
	}
	return d.Runtime.Flags.List(ctx, mcptool.NewFlagContext(sess, "", ""))
}

// flagsAction is server(action="flags"): rollout health since start.
func flagsAction(d *Deps) mcptool.Action {
	return mcptool.Action{
		Name: "flags", Summary: "Rollout health since start, per feature flag and variant: sessions, calls, errors by error_type, p50/p99 call latency; with the provider and flag file.",
		SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(noArgs{}),
		Typed: mcptool.Typed(func(context.Context, *mcptool.Request, noArgs) mcptool.Result {
			if d.Runtime.Flags == nil {
				return mcptool.OK(noFlagsAnswer{Provider: "none", Rows: []any{}})
			}
			return mcptool.OK(d.Runtime.Flags.Health())
		}),
	}
}

// noFlagsAnswer is server flags' answer on a server without a flag
// provider.
type noFlagsAnswer struct {
	Provider string `json:"provider"`
	Rows     []any  `json:"rows"`
}
