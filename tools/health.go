package tools

import (
	"context"
	"math"
	"path/filepath"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// minFreeBytes is the free space below which the store's disk counts as
// full: bbolt grows its file in steps larger than this.
const minFreeBytes = 1 << 20

// storeProblem is why the store cannot take writes now, or nil: the store's
// own answer (LOCK_TIMEOUT, STORE_CORRUPT, STORE_READ_ONLY, STORE_FULL after
// a refused commit), else STORE_FULL when the disk holding it has less than
// minFreeBytes free.
func storeProblem(ctx context.Context, d *Deps) error {
	if err := d.Store.CheckWritable(ctx); err != nil {
		return err
	}
	if free, ok := freeDisk(d.Store.Path()); ok && free < minFreeBytes {
		return core.NewError(errcode.StoreFull, "The disk holding the store has almost no free space left; writes will fail.",
			map[string]any{"store": filepath.Base(d.Store.Path()), "free_bytes": free})
	}
	return nil
}

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
				Name: "readiness", Summary: "Reports whether the store can be locked and written (without writing). Not ready (locked, damaged, read-only, disk full) is a success with ready=false and a warning.",
				SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					checks := map[string]any{"store": "ok", "flags": "not_configured"}
					if err := storeProblem(ctx, d); err != nil {
						checks["store"] = errorSummary(err)
						return OK(map[string]any{"ready": false, "checks": checks},
							warn("STORE_NOT_READY", "The store is not writable right now: "+errorSummary(err)+".", map[string]any{"error_code": core.AsError(err).Code}))
					}
					return OK(map[string]any{"ready": true, "checks": checks})
				},
			},
			{
				Name: "check", Summary: "Detailed health: store path, size, schema version, install id, free disk, flag provider state. status is ok, degraded (read-only store, disk full: reads work) or unavailable (damaged store), with a warning.",
				SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast, Example: map[string]any{},
				Handler: func(ctx context.Context, r *Request) Result {
					info, err := d.Store.Describe(ctx)
					status := "ok"
					var opts []core.MetaOption
					if err != nil {
						if core.AsError(err).Code != errcode.StoreCorrupt {
							return Fail(err)
						}
						status = "unavailable"
						opts = append(opts, warn(errcode.StoreCorrupt, errorSummary(err), map[string]any{"error_code": errcode.StoreCorrupt}))
					} else if perr := storeProblem(ctx, d); perr != nil {
						status = "degraded"
						opts = append(opts, warn(core.AsError(perr).Code, errorSummary(perr), map[string]any{"error_code": core.AsError(perr).Code}))
					}
					disk := map[string]any{"measured": false}
					if free, ok := freeDisk(d.Store.Path()); ok {
						disk = map[string]any{"measured": true, "free_bytes": free}
					}
					info.Path = showServerPath(d.Workspace, info.Path)
					return OK(map[string]any{
						"status":  status,
						"version": d.Version,
						"store":   info,
						"disk":    disk,
						"flags":   map[string]any{"provider": "none", "state": "not_configured"},
					}, opts...)
				},
			},
		},
	}
}
