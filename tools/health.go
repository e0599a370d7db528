package tools

import (
	"context"
	"math"
	"path/filepath"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/diskspace"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
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
	if free, ok := diskspace.Free(d.Store.Path()); ok && free < minFreeBytes {
		return core.NewErrorOf(errcode.StoreFull, "The disk holding the store has almost no free space left; writes will fail.",
			storeFullDetail{Store: filepath.Base(d.Store.Path()), FreeBytes: free})
	}
	return nil
}

const healthDescription = `Use this when you need to know whether specd is up and its store usable before relying on it: liveness (the process answers), readiness (store open and writable), check (store path, size, schema version, free disk). ` +
	`Use server instead to learn what the tools and actions are, and spec or task for actual work. ` +
	`Typical composition: health readiness → spec list → task next. All actions are read-only and never change the store.`

func healthTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name:        "health",
		Title:       "specd health",
		Description: healthDescription,
		Params:      []mcptool.Param{{Name: "include_details", Type: mcptool.Boolean, Description: "check: store, disk and flags too (default true)."}},
		Actions: []mcptool.Action{
			{
				Name: "liveness", Summary: "Answers immediately if the server process is running; touches nothing.",
				SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(noArgs{}),
				Answer: LivenessAnswer{}, Typed: withoutArgs(d.healthLiveness),
			},
			{
				Name: "readiness", Summary: "Reports whether the store can be locked and written (without writing). Not ready (locked, damaged, read-only, disk full) is a success with ready=false and a warning.",
				SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(noArgs{}),
				Answer: ReadinessAnswer{}, Typed: withoutArgs(d.healthReadiness),
			},
			{
				Name: "check", Summary: "Detailed health: store path, size, schema version, install id, free disk, flag provider state (include_details false: status and version only). status is ok, degraded (read-only store, disk full: reads work) or unavailable (damaged store), with a warning.",
				Optional: []string{"include_details"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(healthCheckArgs{}),
				Answer: HealthCheckAnswer{}, Typed: mcptool.Typed(d.healthCheck),
			},
		},
	}
}

// LivenessAnswer is health liveness's answer.
type LivenessAnswer struct {
	Status        string  `json:"status"` // alive
	Version       string  `json:"version"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

func (d *Deps) healthLiveness(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mcptool.OK(LivenessAnswer{Status: "alive", Version: d.Version, UptimeSeconds: math.Round(time.Since(d.Started).Seconds()*100) / 100})
}

// ReadinessAnswer is health readiness's answer.
type ReadinessAnswer struct {
	Ready  bool            `json:"ready"`
	Checks ReadinessChecks `json:"checks"`
}

// ReadinessChecks are the parts of readiness: "ok", or what is wrong.
type ReadinessChecks struct {
	Store string `json:"store"`
	Flags string `json:"flags"`
}

func (d *Deps) healthReadiness(ctx context.Context, r *mcptool.Request) mcptool.Result {
	a := ReadinessAnswer{Ready: true, Checks: ReadinessChecks{Store: "ok", Flags: "not_configured"}}
	if err := storeProblem(ctx, d); err != nil {
		a.Ready, a.Checks.Store = false, errorSummary(err)
		return mcptool.OK(a, warnOf("STORE_NOT_READY", "The store is not writable right now: "+errorSummary(err)+".", errorCodeContext{ErrorCode: core.AsError(err).Code}))
	}
	return mcptool.OK(a)
}

// HealthCheckAnswer is health check's answer: status ok, degraded (reads
// work) or unavailable; the details (store, disk, flags) unless
// include_details is false, as in foundry.
type HealthCheckAnswer struct {
	Status  string            `json:"status"`
	Version string            `json:"version"`
	Store   *bucketstore.Info `json:"store,omitempty"`
	Disk    *DiskInfo         `json:"disk,omitempty"`
	Flags   *FlagsHealth      `json:"flags,omitempty"`
}

// DiskInfo is the free space of the disk holding the store, when the
// platform can measure it.
type DiskInfo struct {
	Measured  bool    `json:"measured"`
	FreeBytes *uint64 `json:"free_bytes,omitempty"` // set when measured
}

// FlagsHealth is the flag provider's state as health check sees it:
// provider none and state not_configured without flags; else file or
// flagd, and ready, not_ready, stale, error or fatal. What is wrong now (a
// refused flag file, a provider not ready) is a warning of the answer.
type FlagsHealth struct {
	Provider string `json:"provider"`
	State    string `json:"state"`
}

func (d *Deps) healthCheck(ctx context.Context, _ *mcptool.Request, args healthCheckArgs) mcptool.Result {
	info, err := d.Store.Info(ctx)
	a := HealthCheckAnswer{Status: "ok", Version: d.Version}
	var opts []core.MetaOption
	if err != nil {
		if core.AsError(err).Code != errcode.StoreCorrupt {
			return mcptool.Fail(err)
		}
		a.Status = "unavailable"
		opts = append(opts, warnOf(errcode.StoreCorrupt, errorSummary(err), errorCodeContext{ErrorCode: errcode.StoreCorrupt}))
	} else if perr := storeProblem(ctx, d); perr != nil {
		a.Status = "degraded"
		opts = append(opts, warnOf(core.AsError(perr).Code, errorSummary(perr), errorCodeContext{ErrorCode: core.AsError(perr).Code}))
	}
	opts = append(opts, d.mirrorWarnings()...)
	if args.IncludeDetails != nil && !*args.IncludeDetails {
		return mcptool.OK(a, opts...)
	}
	a.Disk = &DiskInfo{}
	if free, ok := diskspace.Free(d.Store.Path()); ok {
		a.Disk = &DiskInfo{Measured: true, FreeBytes: &free}
	}
	info.Path = showServerPath(d.Workspace, info.Path)
	a.Store, a.Flags = &info, &FlagsHealth{Provider: "none", State: "not_configured"}
	if d.Runtime.Flags != nil {
		st := d.Runtime.Flags.Status()
		a.Flags = &FlagsHealth{Provider: st.Provider, State: st.State}
		if st.Warning != "" {
			opts = append(opts, warn(st.Warning, st.Problem, st.Context))
		}
	}
	return mcptool.OK(a, opts...)
}

// healthCheckArgs are health check's typed arguments (mcptool.Typed):
// details are included unless include_details is false.
type healthCheckArgs struct {
	IncludeDetails *bool `arg:"include_details"`
}
