package tools

import (
	"context"
	"log/slog"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/mcptool"
)

const errorDescription = `Use this when calls fail: the errors this server gave. Use server instead for parameters. error patterns → error get.`

// errorScan bounds how many records stats and patterns read: all that are
// kept.
const errorScan = errlog.MaxRecords

func errorTool(d *Deps, rec *mcptool.ErrorRecorder) *mcptool.Tool {
	read := func(name, summary string, optional []string, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Optional: optional, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Example: mcptool.ArgsOf(errorFilterArgs{}), Answer: answer, Typed: h}
	}
	filters := []string{"tool_name", "error_code"}
	return &mcptool.Tool{
		Name: "error", Title: "specd error", Description: errorDescription,
		Params: []mcptool.Param{
			pCursor, pLimit(core.PageList), pDryRun,
			idParam("error_id", "A recorded error, e.g. err-12."),
			{Name: "tool_name", Type: mcptool.String, MaxLength: 100},
			{Name: "error_code", Type: mcptool.String, MaxLength: 100},
		},
		Actions: []mcptool.Action{
			read("list", "Recorded error answers newest first, filtered, paged.", append(filters, "cursor", "limit"), ErrorListAnswer{}, withRecorder(d.errorList, rec)),
			{Name: "get", Summary: "One recorded error answer.", Required: []string{"error_id"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Answer: errlog.Record{}, Typed: withRecorder(d.errorGet, rec)},
			read("stats", "Counts by error_code, error_type and tool.", filters, errlog.Stats{}, withRecorder(d.errorStats, rec)),
			read("patterns", "Errors that recur (same tool, action and code), most frequent first.", append(filters, "limit"), ErrorPatternsAnswer{}, withRecorder(d.errorPatterns, rec)),
			{Name: "cleanup", Summary: "Deletes every recorded error; dry_run counts them.",
				Optional: []string{"dry_run"}, SideEffects: mcptool.EffectWrite, Idempotent: true, Destructive: true, Latency: mcptool.LatencyFast,
				Example: mcptool.ArgsOf(errorCleanupArgs{DryRun: true}), Answer: ErrorCleanupAnswer{}, Typed: withRecorder(d.errorCleanup, rec)},
		},
	}
}

// withRecorder binds an error handler to the recorder it flushes.
func withRecorder[A any](h func(context.Context, *mcptool.Request, A, *mcptool.ErrorRecorder) mcptool.Result, rec *mcptool.ErrorRecorder) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a A) mcptool.Result { return h(ctx, r, a, rec) })
}

// The error tool's typed arguments (mcptool.Typed).
type (
	// errorFilterArgs filter the recorded errors.
	errorFilterArgs struct {
		ToolName  string `arg:"tool_name"`
		ErrorCode string `arg:"error_code"`
	}
	errorListArgs struct {
		errorFilterArgs
		pageArgs
	}
	errorPatternsArgs struct {
		errorFilterArgs
		Limit *int `arg:"limit"`
	}
	errorGetArgs struct {
		ErrorID string `arg:"error_id,required"`
	}
	errorCleanupArgs struct {
		DryRun bool `arg:"dry_run"`
	}
)

// ErrorListAnswer is error list's answer.
type ErrorListAnswer struct {
	Errors []errlog.Record `json:"errors"`
	Count  int             `json:"count"`
}

// ErrorPatternsAnswer is error patterns' answer.
type ErrorPatternsAnswer struct {
	Patterns []errlog.Pattern `json:"patterns"`
	Count    int              `json:"count"`
	Scanned  int              `json:"scanned"`
}

// ErrorCleanupAnswer is error cleanup's answer.
type ErrorCleanupAnswer struct {
	Deleted int  `json:"deleted"`
	DryRun  bool `json:"dry_run,omitempty"`
}

// filter is the errlog filter a asks for.
func (a errorFilterArgs) filter() errlog.Filter {
	return errlog.Filter{Tool: a.ToolName, Code: a.ErrorCode}
}

// errorLog is the store's error log with every error answered so far
// written (the recorder's queue flushed).
func (d *Deps) errorLog(ctx context.Context, rec *mcptool.ErrorRecorder) (errlog.Store, error) {
	n, err := d.notes()
	if err != nil {
		return nil, err
	}
	rec.Flush(ctx)
	return n, nil
}

func (d *Deps) errorList(ctx context.Context, r *mcptool.Request, a errorListArgs, rec *mcptool.ErrorRecorder) mcptool.Result {
	log, err := d.errorLog(ctx, rec)
	if err != nil {
		return mcptool.Fail(err)
	}
	f := a.filter()
	p, err := mcptool.OpenPage(r, "error", "list", "", core.PageList, toErrorList.Args(errorListArgs{}), f.Tool, f.Code)
	if err != nil {
		return mcptool.Fail(err)
	}
	recs, more, err := log.Errors(ctx, f, p.After, p.Limit)
	if err != nil {
		return mcptool.Fail(err)
	}
	next := ""
	if len(recs) > 0 {
		next = p.Cursor(recs[len(recs)-1].ID, more)
	}
	return mcptool.OK(ErrorListAnswer{Errors: recs, Count: len(recs)}, p.Meta(next))
}

func (d *Deps) errorGet(ctx context.Context, _ *mcptool.Request, a errorGetArgs, rec *mcptool.ErrorRecorder) mcptool.Result {
	log, err := d.errorLog(ctx, rec)
	if err != nil {
		return mcptool.Fail(err)
	}
	return answer(log.ErrorGet(ctx, a.ErrorID))
}

func (d *Deps) errorStats(ctx context.Context, _ *mcptool.Request, a errorFilterArgs, rec *mcptool.ErrorRecorder) mcptool.Result {
	log, err := d.errorLog(ctx, rec)
	if err != nil {
		return mcptool.Fail(err)
	}
	recs, _, err := log.Errors(ctx, a.filter(), "", errorScan)
	return answer(errlog.Summarize(recs), err)
}

func (d *Deps) errorPatterns(ctx context.Context, _ *mcptool.Request, a errorPatternsArgs, rec *mcptool.ErrorRecorder) mcptool.Result {
	log, err := d.errorLog(ctx, rec)
	if err != nil {
		return mcptool.Fail(err)
	}
	recs, _, err := log.Errors(ctx, a.filter(), "", errorScan)
	ps := errlog.Patterns(recs, 2, intOr(a.Limit, core.PageList.Default))
	return answer(ErrorPatternsAnswer{Patterns: ps, Count: len(ps), Scanned: len(recs)}, err)
}

func (d *Deps) errorCleanup(ctx context.Context, _ *mcptool.Request, a errorCleanupArgs, rec *mcptool.ErrorRecorder) mcptool.Result {
	log, err := d.errorLog(ctx, rec)
	if err != nil {
		return mcptool.Fail(err)
	}
	dry := a.DryRun
	n, err := log.ErrorCleanup(ctx, "", dry)
	return answer(ErrorCleanupAnswer{Deleted: n, DryRun: dry}, err)
}

// errorRecorder is the recorder of d's error answers (nil: none are
// recorded, d.Notes is nil).
func (d *Deps) errorRecorder() *mcptool.ErrorRecorder {
	if d.Notes == nil {
		return nil
	}
	return mcptool.NewErrorRecorder(d.Notes, func() *slog.Logger {
		if d.Runtime.Logger != nil {
			return d.Runtime.Logger
		}
		return slog.Default()
	})
}
