package tools

import (
	"context"
	"fmt"

	"github.com/specd/specd/core/mcptool"
)

// Feature flag names the tools know (the flags package holds the registry;
// a test keeps the two in step).
const (
	FlagTaskBatchOperations = "task_batch_operations"
	FlagResearchDigests     = "research_digests"
	FlagContentArchive      = "content_archive"
	FlagVerificationExecute = FeatureVerificationExecute
)

// actionFlags is which flag gates which action; New sets Action.Flag from
// it, so the gates live in one table.
var actionFlags = map[string]map[string]string{
	"task": {
		"prepare-batch": FlagTaskBatchOperations, "start-batch": FlagTaskBatchOperations,
		"complete-batch": FlagTaskBatchOperations, "reset-batch": FlagTaskBatchOperations,
	},
	"research": {
		"digest-validate": FlagResearchDigests, "digest-create": FlagResearchDigests, "digest-put": FlagResearchDigests,
		"digest-get": FlagResearchDigests, "digest-list": FlagResearchDigests, "digest-delete": FlagResearchDigests,
		"archive-put": FlagContentArchive, "archive-get": FlagContentArchive,
	},
	"verification": {"execute": FlagVerificationExecute},
	"test":         {"run": FlagVerificationExecute},
}

// setActionFlags sets Action.Flag from actionFlags on every tool of r.
func setActionFlags(r *mcptool.Registry) {
	for _, t := range r.Tools() {
		for name, flag := range actionFlags[t.Name] {
			a, ok := t.Action(name)
			if !ok {
				panic("tools: flag gate for unknown action " + t.Name + " " + name)
			}
			a.Flag = flag
		}
	}
}

// markAvailability sets available:false, with the reason, on the actions of
// t that are off for this caller: a flag off, or verification execute on a
// server started without --enable-verification-execute.
func markAvailability(ctx context.Context, d *Deps, t *mcptool.Tool, sess mcptool.Session, actions []mcptool.ActionSchema) {
	for i := range actions {
		as := &actions[i]
		if (t.Name == "verification" && as.Name == "execute" || t.Name == "test" && as.Name == "run") && !d.VerificationExecute {
			as.Available = false
			as.Reason = "this server was started without --enable-verification-execute"
			continue
		}
		if as.Flag == "" || d.Runtime.Flags == nil {
			continue
		}
		if g := d.Runtime.Flags.Gate(ctx, as.Flag, mcptool.NewFlagContext(sess, t.Name, as.Name)); !g.On {
			as.Available = false
			as.Reason = fmt.Sprintf("feature flag %s is off for this client (source: %s; flag file: %s)", as.Flag, g.Source, d.Runtime.Flags.FileName())
		}
	}
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
		SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: map[string]any{},
		Handler: func(ctx context.Context, r *mcptool.Request) mcptool.Result {
			if d.Runtime.Flags == nil {
				return mcptool.OK(map[string]any{"provider": "none", "rows": []any{}})
			}
			return mcptool.OK(d.Runtime.Flags.Health())
		},
	}
}
