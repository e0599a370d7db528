package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// DefaultDeadline bounds every call unless the server is configured otherwise.
const DefaultDeadline = 30 * time.Second

// Runtime is what the dispatcher needs besides the tools: clock, id source,
// logger, deadline and the per-process session id used when the protocol
// carries none.
type Runtime struct {
	Now             core.Clock // the server's one clock (nil until Defaults: the wall clock)
	NewID           func() string
	Logger          *slog.Logger
	Deadline        time.Duration
	ProcessSession  string
	OutputSchemaRaw json.RawMessage
	Flags           Flags  // feature flags (nil: every gate open, response-v2 for all)
	Access          Access // shared server's keys, roles and rate limit (nil: none)
	// OKLogLevel is the level of the "call" line of a call that succeeds
	// (zero: info); a refused or failed call's line is at info whatever it
	// says. The board reads at debug, so a page refresh does not flood the
	// log.
	OKLogLevel slog.Level
}

// Defaults fills every zero field of rt with its default (time.Now,
// core.NewUUID, slog.Default(), DefaultDeadline, a fresh per-process session
// id, the envelope output schema). Install and FlagServerOptions call it;
// call it before sharing rt between goroutines, never concurrently.
func (rt *Runtime) Defaults() {
	if rt.Now == nil {
		rt.Now = time.Now
	}
	if rt.NewID == nil {
		rt.NewID = core.NewUUID
	}
	if rt.Logger == nil {
		rt.Logger = slog.Default()
	}
	if rt.Deadline <= 0 {
		rt.Deadline = DefaultDeadline
	}
	if rt.ProcessSession == "" {
		rt.ProcessSession = "proc-" + rt.NewID()
	}
	if rt.OutputSchemaRaw == nil {
		rt.OutputSchemaRaw = listEnvelopeSchema
	}
}

// Install registers every tool of r on s with the envelope's four keys as
// output schema (Runtime.OutputSchemaRaw).
func (r *Registry) Install(s *server.MCPServer, rt Runtime) {
	rt.Defaults()
	for _, t := range r.Tools() {
		s.AddTool(t.MCPTool(rt.OutputSchemaRaw), r.handler(t, rt))
	}
}

// handler returns the MCP handler of t: validate → deadline → call → wrap.
// It never returns a Go error: every outcome, panics included, is an
// envelope result. Over HTTPInput a response-v2 answer is held by the
// response writer (heldResult), which writes the same bytes.
func (r *Registry) handler(t *Tool, rt Runtime) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		env, v2 := r.dispatch(ctx, t, req.GetArguments(), sessionOf(ctx, req, rt), rt)
		if v2 {
			if res := heldResult(ctx, env); res != nil {
				return res, nil
			}
			return ToResult(env), nil
		}
		return LegacyResult(env), nil
	}
}

// Dispatch runs one call of t with raw arguments and returns its envelope.
// It is the transport-independent core of every tool call (the CLI uses it
// too).
func (r *Registry) Dispatch(ctx context.Context, t *Tool, raw map[string]any, sess Session, rt Runtime) core.Envelope {
	env, _ := r.dispatch(ctx, t, raw, sess, rt)
	return env
}

// dispatch is Dispatch, also reporting whether the caller gets the
// response-v2 envelope: the session's contract decision the call was served
// and counted under (Runtime.contractV2), made once per call.
func (r *Registry) dispatch(ctx context.Context, t *Tool, raw map[string]any, sess Session, rt Runtime) (env core.Envelope, v2 bool) {
	rt.Defaults()
	action, _ := raw["action"].(string)
	call := core.NewCall(t.Name, action, rt.Now, rt.NewID)
	sess.KeyID = rt.keyID(ctx) // as sessionFromContext: one identity for every decision
	if sess.Holder == "" {
		sess.Holder = HolderOf(sess)
	}
	log := newCallLog(rt.Logger, call.RequestID, t.Name, action, sess.ID)
	log.add(slog.String("key_id", sess.KeyID))
	var contract, gate FlagDecision
	v2 = true
	if rt.Flags != nil {
		contract = rt.contract(ctx, sess)
		v2 = contract.On
		rt.noteFallback(call, contract)
	}
	defer func() {
		if p := recover(); p != nil {
			log.log(slog.LevelError, "handler panicked", slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
			env = call.Failure(core.Internal(fmt.Errorf("panic: %v", p)))
		}
		logOutcome(log, rt.OKLogLevel, env)
		r.errors.record(t, call.Action, env, rt.Now())
		served := rt.served(contract, gate)
		rt.observe(served, env)
		rt.done(ctx, call, served, env)
	}()
	if raw == nil {
		raw = map[string]any{}
	}
	if e := rt.refuseEarly(ctx, t, call, raw, action); e != nil {
		return call.Failure(e), v2
	}
	a, args, notes, verr := validateNoting(t, raw)
	if verr != nil {
		return call.Failure(withNextCall(t, action, r.heal(ctx, t, raw, verr))), v2
	}
	call.Action = a.Name
	if e := rt.permitted(ctx, t, a, raw); e != nil {
		return call.Failure(e), v2
	}
	var gerr *core.Error
	gate, gerr = rt.gate(ctx, t, a, sess)
	rt.noteFallback(call, gate)
	if gerr != nil {
		return call.Failure(gerr), v2
	}
	deadline := max(rt.Deadline, a.Deadline)
	dctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	req := &Request{Call: call, Args: args, Session: sess}
	r.archiveCheck(ctx, rt, req)
	res := a.Handler(dctx, req)
	res.Meta = append(notes, res.Meta...)
	if res.Err != nil {
		e := handlerError(ctx, dctx, t, a, deadline, res.Err)
		if e.Code == errcode.Internal && e.Cause() != nil {
			log.log(slog.LevelError, "internal error", slog.Any("err", e.Cause()))
		}
		return fitFailure(call, withNextCall(t, a.Name, corrected(t, a, raw, r.takeStep(e))), res.Meta, answerBudget(r.budget, args)), v2
	}
	return r.fitAnswer(call, t, a, args, res, req.ArchiveServed), v2
}

// noteFallback adds to call the FALLBACK_USED warning of d, if d is a
// decision the flag provider could not make.
func (rt *Runtime) noteFallback(call *core.Call, d FlagDecision) {
	if w := rt.fallbackWarning(d); w != nil {
		call.Extra = append(call.Extra, w)
	}
}

// refuseEarly is the refusal a call meets before its arguments are
// validated, checked in this order: the caller's rate limit (charged here
// for every call; RATE_LIMIT_EXCEEDED names the call to retry), a write
// action of a read-only tool, the tool's own Refuse of action. nil admits
// the call.
func (rt *Runtime) refuseEarly(ctx context.Context, t *Tool, call *core.Call, raw map[string]any, action string) *core.Error {
	if e := rt.charge(ctx, call); e != nil {
		if e.Code == errcode.RateLimitExceeded {
			e = rateLimited(t.Name, raw, e)
		}
		return e
	}
	if e := t.refuseWrite(raw); e != nil {
		return e
	}
	if t.Refuse != nil {
		return t.Refuse(action)
	}
	return nil
}

// permitted is the access refusal of action a of t for this caller (nil
// when allowed); FORBIDDEN names the actions the caller may use instead.
func (rt *Runtime) permitted(ctx context.Context, t *Tool, a *Action, raw map[string]any) *core.Error {
	e := rt.permit(ctx, t, a)
	if e != nil && e.Code == errcode.Forbidden {
		e = rt.forbidden(ctx, t, raw, e)
	}
	return e
}

// handlerError is the call's error for err, the error a's handler
// returned: past the call's deadline (dctx expired while the caller's ctx
// did not) it is UNAVAILABLE naming the deadline and how to narrow the
// call, after the client cancelled it is UNAVAILABLE saying so, otherwise
// core.AsError(err).
func handlerError(ctx, dctx context.Context, t *Tool, a *Action, deadline time.Duration, err error) *core.Error {
	e := core.AsError(err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (e.Code == errcode.Internal && dctx.Err() != nil && ctx.Err() == nil):
		return core.NewError(errcode.Unavailable,
			fmt.Sprintf("%s %s did not finish within %s; nothing was changed.", t.Name, a.Name, deadline),
			map[string]any{"timeout_ms": deadline.Milliseconds()}).
			WithRemediation("Narrow the call (smaller limit, one spec, fewer items) and try again.")
	case errors.Is(err, context.Canceled):
		return core.NewError(errcode.Unavailable, "The call was cancelled by the client; nothing was changed.", nil)
	}
	return e
}

// RefuseUnlisted answers a call of a tool outside the registry (one that is not
// offered and refuses every call) with e, as Dispatch would answer it: the
// call is charged to the caller's rate limit like every call (an exhausted
// limit answers RATE_LIMIT_EXCEEDED instead of e), logged like every call,
// and answered in the session's contract shape. rt must have its defaults.
func (rt *Runtime) RefuseUnlisted(ctx context.Context, req mcp.CallToolRequest, call *core.Call, e *core.Error) *mcp.CallToolResult {
	if limited := rt.charge(ctx, call); limited != nil {
		e = limited
		if e.Code == errcode.RateLimitExceeded {
			e = rateLimited(call.Tool, req.GetArguments(), e)
		}
	}
	env := call.Failure(e)
	sess := sessionOf(ctx, req, *rt)
	logOutcome(newCallLog(rt.Logger, call.RequestID, call.Tool, call.Action, sess.ID), rt.OKLogLevel, env)
	return rt.result(ctx, sess, env)
}

// logOutcome writes the one line every call gets: request_id, tool,
// action, session (from log), ok, error_code ("" on success), duration_ms;
// at okLevel when the call succeeded, else at info.
func logOutcome(log *callLog, okLevel slog.Level, env core.Envelope) {
	code := ""
	if m, ok := env.Data.(map[string]any); ok && !env.Success {
		code, _ = m["error_code"].(string)
	}
	outcome := "ok"
	if code != "" {
		outcome = code
	}
	level := slog.LevelInfo
	if env.Success {
		level = okLevel
	}
	log.log(level, "call", slog.Bool("ok", env.Success), slog.String("outcome", outcome), slog.String("error_code", code), slog.Float64("duration_ms", env.Meta.Telemetry.DurationMS))
}

// callLog writes one call's log lines, each starting with the call's
// attributes (request_id, tool, action, session, key_id): the lines a
// logger derived with slog.Logger.With would write, without deriving one
// (With formats the attributes into a new handler on every call, though
// most calls write only their one info line).
type callLog struct {
	l     *slog.Logger
	attrs [10]slog.Attr // the call's attributes ([:n]), then room for a line's own
	n     int
}

// newCallLog is the log of the call requestID of tool and action, in
// session.
func newCallLog(l *slog.Logger, requestID, tool, action, session string) *callLog {
	c := &callLog{l: l}
	c.add(slog.String("request_id", requestID))
	c.add(slog.String("tool", tool))
	c.add(slog.String("action", action))
	c.add(slog.String("session", session))
	return c
}

// add appends a call attribute (at most five).
func (c *callLog) add(a slog.Attr) {
	c.attrs[c.n] = a
	c.n++
}

// log writes msg at level with the call's attributes, then attrs. A line
// with at most five attributes of its own (the "call" line has five) is
// put together in c's spare room instead of a new slice.
func (c *callLog) log(level slog.Level, msg string, attrs ...slog.Attr) {
	ctx := context.Background()
	if !c.l.Enabled(ctx, level) {
		return
	}
	all := c.attrs[:c.n]
	if c.n+len(attrs) > len(c.attrs) {
		all = make([]slog.Attr, c.n, c.n+len(attrs))
		copy(all, c.attrs[:c.n])
	}
	c.l.LogAttrs(ctx, level, msg, append(all, attrs...)...)
}

// ToResult puts the envelope in structuredContent and, as compact JSON, in
// content[0].text; isError is true exactly when success is false.
func ToResult(env core.Envelope) *mcp.CallToolResult {
	b, err := env.Marshal()
	if err != nil {
		// Data that cannot be encoded is a programming error: answer with an
		// internal error envelope rather than a transport error.
		env = core.Envelope{Success: false, Data: core.Internal(err).Payload(env.Meta.RequestID), Meta: env.Meta}
		msg := "Internal error while encoding the answer to " + env.Meta.RequestID + "."
		env.Error = &msg
		b, _ = json.Marshal(env)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.TextContent{Type: "text", Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           !env.Success,
	}
}

// stdioSessionID is the constant id mcp-go gives every stdio session: it
// names the transport, not the session, so two specd processes on stdio
// would share it.
const stdioSessionID = "stdio"

// sessionOf identifies the caller: the MCP session when the protocol has one,
// else the per-process id (also for stdio, whose mcp-go session id is the
// same constant in every process and would let two agents in two processes
// pass for one); client name/version from the session or from the request's
// _meta (protocol 2026-07-28).
func sessionOf(ctx context.Context, req mcp.CallToolRequest, rt Runtime) Session {
	s := sessionFromContext(ctx, rt)
	if s.ClientName == "" && req.Params.Meta != nil {
		if info := req.Params.Meta.ClientInfo(); info != nil {
			s.ClientName, s.ClientVersion = info.Name, info.Version
		}
	}
	return s
}
