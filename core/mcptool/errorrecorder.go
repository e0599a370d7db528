package mcptool

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
)

// recordTimeout bounds writing one batch of error records: a slow or
// locked store must not keep records queued for long.
const recordTimeout = 2 * time.Second

// maxPendingErrors bounds the records waiting to be written; beyond it new
// ones are dropped (and counted), so a flood of bad calls cannot grow memory.
const maxPendingErrors = 256

// unrecorded are the codes not recorded: the store itself is the problem,
// so writing to it would fail or wait again.
var unrecorded = map[string]bool{errcode.LockTimeout: true, errcode.StoreCorrupt: true, errcode.StoreFull: true, errcode.StoreReadOnly: true, errcode.StorePathInvalid: true}

// ErrorRecorder keeps the error answers in the store without slowing them:
// Dispatch queues a record and a writer goroutine (started when the queue
// fills, gone when it is empty) writes the queue in one transaction per
// batch; Flush writes what is queued before the error tool reads, so
// error list sees every error answered before it. A failed write is
// logged at debug level and never changes an answer.
type ErrorRecorder struct {
	log     ErrorSink
	logger  func() *slog.Logger
	wmu     sync.Mutex // held while a batch is written
	mu      sync.Mutex
	pending []errlog.Record
	running bool
	dropped int
}

// record queues env's error, when it is a failure worth recording.
func (e *ErrorRecorder) record(t *Tool, action string, env core.Envelope, now time.Time) {
	if e == nil || env.Success {
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
	rec := errlog.Record{At: now.UTC().Format(time.RFC3339), RequestID: env.Meta.RequestID, Tool: t.Name, Action: action, Code: code, Type: typ, Message: msg}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) >= maxPendingErrors {
		e.dropped++
		return
	}
	e.pending = append(e.pending, rec)
	if !e.running {
		e.running = true
		go e.run()
	}
}

// ErrorSink is where an errorRecorder writes error records: one
// transaction per call.
type ErrorSink interface {
	ErrorRecord(ctx context.Context, recs ...errlog.Record) error
}

// NewErrorRecorder records error answers into sink, logging a failed write
// to logger() at debug level. Answers whose code means the store itself is
// failing (LOCK_TIMEOUT, STORE_CORRUPT, STORE_FULL, STORE_READ_ONLY,
// STORE_PATH_INVALID) are not recorded; past maxPendingErrors queued
// records new ones are dropped and counted in a warning.
func NewErrorRecorder(sink ErrorSink, logger func() *slog.Logger) *ErrorRecorder {
	return &ErrorRecorder{log: sink, logger: logger}
}

// run writes batches until the queue is empty.
func (e *ErrorRecorder) run() {
	for {
		e.mu.Lock()
		if len(e.pending) == 0 {
			e.running = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		e.Flush(context.Background())
	}
}

// Flush writes every queued record, waiting for a batch being written, in
// at most recordTimeout (even when ctx is cancelled: the records are
// already answered). A nil recorder does nothing.
func (e *ErrorRecorder) Flush(ctx context.Context) {
	if e == nil {
		return
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.mu.Lock()
	batch, dropped := e.pending, e.dropped
	e.pending, e.dropped = nil, 0
	e.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := e.log.ErrorRecord(ctx, batch...); err != nil {
		e.logger().Debug("could not record error answers", "count", len(batch), "err", err)
	}
	if dropped > 0 {
		e.logger().Warn("error answers not recorded: too many at once", "dropped", dropped)
	}
}

// FlushErrors writes the error answers still queued for the store; call it
// once no more calls come, before the store is closed.
func (r *Registry) FlushErrors(ctx context.Context) { r.errors.Flush(ctx) }
