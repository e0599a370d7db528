package tools

import (
	"context"
	"math"
	"time"
)

const healthDescription = `Use this when you need to know whether specd is up and its store usable before relying on it: liveness (the process answers), readiness (store open and writable), check (store path, size, schema version, free disk). ` +
	`Use server instead to learn what the tools and actions are, and spec or task for actual work. ` +
	`Typical composition: health readiness → spec list → task next. All actions are read-only and never change the store.`

func healthTool(d *Deps) *Tool {
	return &Tool{
		Name:        "health",
		Title:       "specd health",
		Description: healthDescription,
		Actions: []Action{
			{
				Name: "liveness", Summary: "Answers immediately if the server process is running; touches nothing.",
				SideEffects: EffectNone, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					return OK(map[string]any{
						"status":         "alive",
						"version":        d.Version,
						"uptime_seconds": math.Round(time.Since(d.Started).Seconds()*100) / 100,
					})
				},
			},
			{
				Name: "readiness", Summary: "Reports whether the store can be locked and written (without writing). Not ready is a success with ready=false and a warning.",
				SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					checks := map[string]any{"store": "ok", "flags": "not_configured"}
					if err := d.Store.CheckWritable(ctx); err != nil {
						checks["store"] = errorSummary(err)
						return OK(map[string]any{"ready": false, "checks": checks},
							warn("STORE_NOT_READY", "The store is not writable right now: "+errorSummary(err)+".", nil))
					}
					return OK(map[string]any{"ready": true, "checks": checks})
				},
			},
			{
				Name: "check", Summary: "Detailed health: store path, size, schema version, install id, free disk, flag provider state.",
				SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					info, err := d.Store.Describe(ctx)
					if err != nil {
						return Fail(err)
					}
					disk := map[string]any{"measured": false}
					if free, ok := freeDisk(info.Path); ok {
						disk = map[string]any{"measured": true, "free_bytes": free}
					}
					info.Path = showServerPath(d.Workspace, info.Path)
					return OK(map[string]any{
						"status":  "ok",
						"version": d.Version,
						"store":   info,
						"disk":    disk,
						"flags":   map[string]any{"provider": "none", "state": "not_configured"},
					})
				},
			},
		},
	}
}
