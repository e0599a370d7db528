package tools

import (
	"context"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
)

// ErrorLog is the store's record of the error answers specd gave (bounded
// to errlog.MaxRecords); every method is one transaction.
type ErrorLog interface {
	ErrorRecord(ctx context.Context, rec errlog.Record) error
	Errors(ctx context.Context, f errlog.Filter, before string, limit int) ([]errlog.Record, bool, error)
	ErrorGet(ctx context.Context, id string) (errlog.Record, error)
	ErrorCleanup(ctx context.Context, before string, dryRun bool) (int, error)
}

const errorDescription = `Use this when calls fail: the errors this server gave. Use server instead for parameters. error patterns → error get.`

// errorScan bounds how many records stats and patterns read: all that are
// kept.
const errorScan = errlog.MaxRecords

func errorTool(d *Deps) *Tool {
	read := func(name, summary string, optional []string, answer any, h Handler) Action {
		return Action{Name: name, Summary: summary, Optional: optional, SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast,
			Example: map[string]any{}, Answer: answer, Handler: h}
	}
	filters := []string{"tool_name", "error_code"}
	return &Tool{
		Name: "error", Title: "specd error", Description: errorDescription,
		Params: []Param{
			pCursor, pLimit(core.PageList), pDryRun,
			idParam("error_id", "A recorded error, e.g. err-12."),
			{Name: "tool_name", Type: String, MaxLength: 100},
			{Name: "error_code", Type: String, MaxLength: 100},
		},
		Actions: []Action{
			read("list", "Recorded error answers newest first, filtered, paged.", append(filters, "cursor", "limit"), ErrorListAnswer{}, d.errorList),
			{Name: "get", Summary: "One recorded error answer.", Required: []string{"error_id"}, SideEffects: EffectRead, Idempotent: true, Latency: LatencyFast,
				Answer: errlog.Record{}, Handler: d.errorGet},
			read("stats", "Counts by error_code, error_type and tool.", filters, errlog.Stats{}, d.errorStats),
			read("patterns", "Errors that recur (same tool, action and code), most frequent first.", append(filters, "limit"), ErrorPatternsAnswer{}, d.errorPatterns),
			{Name: "cleanup", Summary: "Deletes every recorded error; dry_run counts them.",
				Optional: []string{"dry_run"}, SideEffects: EffectWrite, Idempotent: true, Destructive: true, Latency: LatencyFast,
				Example: map[string]any{"dry_run": true}, Answer: ErrorCleanupAnswer{}, Handler: d.errorCleanup},
		},
	}
}

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

func errorFilter(a Args) errlog.Filter {
	return errlog.Filter{Tool: a.String("tool_name"), Code: a.String("error_code")}
}

func (d *Deps) errorLog() (ErrorLog, error) {
	n, err := d.notes()
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (d *Deps) errorList(ctx context.Context, r *Request) Result {
	log, err := d.errorLog()
	if err != nil {
		return Fail(err)
	}
	f := errorFilter(r.Args)
	p, err := OpenPage(r, "error", "list", "", core.PageList, map[string]any{"action": "list"}, f.Tool, f.Code)
	if err != nil {
		return Fail(err)
	}
	recs, more, err := log.Errors(ctx, f, p.After, p.Limit)
	if err != nil {
		return Fail(err)
	}
	next := ""
	if len(recs) > 0 {
		next = p.Cursor(recs[len(recs)-1].ID, more)
	}
	return OK(ErrorListAnswer{Errors: recs, Count: len(recs)}, p.Meta(next))
}

func (d *Deps) errorGet(ctx context.Context, r *Request) Result {
	log, err := d.errorLog()
	if err != nil {
		return Fail(err)
	}
	return answer(log.ErrorGet(ctx, r.Args.String("error_id")))
}

func (d *Deps) errorStats(ctx context.Context, r *Request) Result {
	log, err := d.errorLog()
	if err != nil {
		return Fail(err)
	}
	recs, _, err := log.Errors(ctx, errorFilter(r.Args), "", errorScan)
	return answer(errlog.Summarize(recs), err)
}

func (d *Deps) errorPatterns(ctx context.Context, r *Request) Result {
	log, err := d.errorLog()
	if err != nil {
		return Fail(err)
	}
	recs, _, err := log.Errors(ctx, errorFilter(r.Args), "", errorScan)
	ps := errlog.Patterns(recs, 2, r.Args.IntOr("limit", core.PageList.Default))
	return answer(ErrorPatternsAnswer{Patterns: ps, Count: len(ps), Scanned: len(recs)}, err)
}

func (d *Deps) errorCleanup(ctx context.Context, r *Request) Result {
	log, err := d.errorLog()
	if err != nil {
		return Fail(err)
	}
	dry := r.Args.Bool("dry_run")
	n, err := log.ErrorCleanup(ctx, "", dry)
	return answer(ErrorCleanupAnswer{Deleted: n, DryRun: dry}, err)
}

// recordTimeout bounds recording one error answer: a slow or locked store
// must not hold the answer up for long.
const recordTimeout = 500 * time.Millisecond

// unrecorded are the codes not recorded: the store itself is the problem,
// so writing to it would fail or wait again.
var unrecorded = map[string]bool{errcode.LockTimeout: true, errcode.StoreCorrupt: true, errcode.StoreFull: true, errcode.StoreReadOnly: true}

// recordError keeps env in the error log when it is a failure (best effort:
// a failed write is logged at debug level and never changes the answer).
func (r *Registry) recordError(ctx context.Context, t *Tool, action string, env core.Envelope, rt Runtime) {
	if r.errors == nil || env.Success {
		return
	}
	m, _ := env.Data.(map[string]any)
	code, _ := m["error_code"].(string)
	if unrecorded[code] {
		return
	}
	typ, _ := m["error_type"].(string)
	msg := ""
	if env.Error != nil {
		msg = *env.Error
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	rec := errlog.Record{At: rt.Now().UTC().Format(time.RFC3339), RequestID: env.Meta.RequestID, Tool: t.Name, Action: action, Code: code, Type: typ, Message: msg}
	if err := r.errors.ErrorRecord(rctx, rec); err != nil {
		rt.Logger.Debug("could not record the error answer", "err", err)
	}
}

// errorRecorder is where the registry records error answers: d.Notes, or
// nil.
func (d *Deps) errorRecorder() ErrorLog {
	if d.Notes == nil {
		return nil
	}
	return d.Notes
}
