package mcptool

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// The answer budget (README "Big specs and big answers"). Every tool
// answer passes through one
// step, fitAnswer, after its handler returns and before it is encoded for
// the transport: the whole envelope — data and meta — is encoded once and
// measured as tokens = compact JSON bytes / 4. Under the budget, those same
// bytes are what the transport sends (core.Encode remembers them). Over it:
//
//   - an answer whose handler declared how it may shrink (Result.Degrade: a
//     ListAnswer for lists, the spec document's own levels for spec get) is
//     replaced by the fullest form that fits, which reports itself in meta
//     (content_fidelity, dropped_content_ids, content_archive_hashes, a
//     CONTENT_TRUNCATED warning, and for lists a cursor to the rest);
//   - a read that cannot shrink is not sent: it becomes PAYLOAD_TOO_LARGE
//     with a recovery call that narrows it (a smaller limit, or the spec
//     read that always fits);
//   - a write that cannot shrink has happened, so it stays a success, cut
//     to reference_only: its small top-level fields only, the others named
//     in dropped_content_ids.
//
// Resources get the same budget through resourceContents.

// Degrader is how an answer may shrink to fit the token budget. A handler
// declares it in Result.Degrade; the budget step calls it only when the
// whole envelope is over the budget.
type Degrader interface {
	// Degrade returns the fullest form of the answer whose whole envelope
	// fits f.Budget, as data and the meta options that report what was left
	// out; ok is false when no form fits.
	Degrade(f Fit) (data any, meta []core.MetaOption, ok bool, err error)
}

// DegradeFunc is a Degrader written as a function.
type DegradeFunc func(f Fit) (data any, meta []core.MetaOption, ok bool, err error)

// Degrade calls fn.
func (fn DegradeFunc) Degrade(f Fit) (any, []core.MetaOption, bool, error) { return fn(f) }

// Fit is what a Degrader works against.
type Fit struct {
	// Budget is the token budget of the whole answer.
	Budget int
	// Measure returns the tokens of the whole answer (envelope, or resource
	// document) with data and the handler's meta plus meta.
	Measure func(data any, meta []core.MetaOption) int
	// ArchiveServed is Request.ArchiveServed: whether the answer's messages
	// may tell the caller to fetch what was left out by its archive ids.
	ArchiveServed bool
}

// widestDurationMS stands in for meta.telemetry.duration_ms while a
// degraded answer is measured: no call takes 10⁸ ms (27 hours), and every
// duration below it, with its two decimals, is at most as long in JSON.
// Measuring with the duration of the moment instead made the fit depend
// on timing: a page that fit by a byte was sent a few microseconds later
// with a longer number, over the budget, and refused as PAYLOAD_TOO_LARGE.
const widestDurationMS = 99999999.99

// tokensOfBytes is the budget's estimate: bytes / 4, rounded up.
func tokensOfBytes(n int) int { return (n + 3) / 4 }

// answerBudget is the budget of one call: the server's, or the call's
// smaller max_tokens where the action takes it.
func answerBudget(server int, args Args) int {
	if server <= 0 {
		server = core.DefaultTokenBudget
	}
	if mt, ok := args.Int("max_tokens"); ok && mt > 0 && mt < server {
		return mt
	}
	return server
}

// fitAnswer builds the envelope of res and enforces the budget on it (see
// the comment at the top of this file). The envelope it returns carries its
// encoding (core.Encode), so ToResult does not encode it again. served is
// asked only when the answer is degraded (Fit.ArchiveServed).
func (r *Registry) fitAnswer(call *core.Call, t *Tool, a *Action, args Args, res Result, served func() bool) core.Envelope {
	budget := answerBudget(r.budget, args)
	if res.Err != nil {
		return fitFailure(call, core.AsError(res.Err), res.Meta, budget)
	}
	env, b, err := core.Encode(call.Success(res.Data, joinMeta(res.Meta, res.DataMeta)...))
	if err != nil {
		return call.Failure(core.Internal(err))
	}
	if tokensOfBytes(len(b)) <= budget {
		return env
	}
	answerTokens := tokensOfBytes(len(b))
	if env, ok := degrade(call, res, budget, served); ok {
		return env
	}
	if a.SideEffects == EffectWrite {
		return referenceOnlyWrite(call, env, joinMeta(res.Meta, res.DataMeta), budget, answerTokens)
	}
	return tooLargeRead(call, t, a, args, env, budget, answerTokens, answerBudget(r.budget, nil), r.narrow)
}

// degrade shrinks the answer res with its Degrader to fit budget and
// returns its envelope; ok is false when res has no Degrader or the
// answer cannot fit. A Degrader's error is an INTERNAL failure (ok true).
func degrade(call *core.Call, res Result, budget int, served func() bool) (env core.Envelope, ok bool) {
	if res.Degrade == nil {
		return core.Envelope{}, false
	}
	data, meta, ok, err := res.Degrade.Degrade(Fit{Budget: budget, Measure: measureWith(call, res.Meta, budget), ArchiveServed: served()})
	if err != nil {
		return call.Failure(core.Internal(err)), true
	}
	if !ok {
		return core.Envelope{}, false
	}
	env, b, err := core.Encode(call.Success(data, joinMeta(res.Meta, meta)...))
	return env, err == nil && tokensOfBytes(len(b)) <= budget
}

// measureWith is the Fit.Measure of call's answers: the tokens of the
// envelope of data with meta after base, measured with the widest duration
// the answer may carry (it is encoded again when sent, with the duration
// at that moment, whose number may have grown a digit since: 9.99 →
// 10.01); over budget when it cannot be encoded.
func measureWith(call *core.Call, base []core.MetaOption, budget int) func(data any, meta []core.MetaOption) int {
	return func(data any, meta []core.MetaOption) int {
		env := call.Success(data, joinMeta(base, meta)...)
		env.Meta.Telemetry.DurationMS = widestDurationMS
		b, err := json.Marshal(env)
		if err != nil {
			return budget + 1
		}
		return tokensOfBytes(len(b))
	}
}

func joinMeta(a, b []core.MetaOption) []core.MetaOption {
	return append(a[:len(a):len(a)], b...)
}

// tooLargeRead answers a read whose answer cannot shrink below the budget:
// PAYLOAD_TOO_LARGE naming the budget and the answer's size, with a
// recovery call that narrows the read — the same call with a smaller limit
// when the action pages, the same call without a max_tokens below the
// server's budget, else the registry's Narrower's call (specd: spec get of
// the same spec, whose levels fit any server budget) — or none when none
// applies.
func tooLargeRead(call *core.Call, t *Tool, a *Action, args Args, env core.Envelope, budget, answerTokens, serverBudget int, narrow Narrower) core.Envelope {
	e := core.NewError(errcode.PayloadTooLarge,
		fmt.Sprintf("The answer to %s %s is %d tokens, over the %d-token budget, and cannot be shortened; nothing was left out silently, so nothing is returned.", t.Name, a.Name, answerTokens, budget),
		map[string]any{"field": "answer", "constraint": fmt.Sprintf("≤ %d tokens", budget), "limit": budget, "received": answerTokens,
			"budget_tokens": budget, "answer_tokens": answerTokens})
	pageSize := 0
	if env.Meta.Pagination != nil {
		pageSize = env.Meta.Pagination.PageSize
	}
	if n, ok := args.Int("limit"); ok {
		pageSize = n
	}
	switch {
	case args.Has("max_tokens") && budget < serverBudget:
		rec := maps.Clone(map[string]any(args))
		delete(rec, "max_tokens")
		rec["action"] = a.Name
		e = e.WithRemediation(fmt.Sprintf("max_tokens %d is too small for even the smallest form of this answer: call %s %s again without max_tokens (the server's budget, %d tokens).", budget, t.Name, a.Name, serverBudget)).
			WithRecovery(t.Name, rec, nil)
	case a.takes("limit") && pageSize > 1:
		smaller := max(1, min(pageSize-1, pageSize*budget/answerTokens*9/10))
		rec := maps.Clone(map[string]any(args))
		rec["action"], rec["limit"] = a.Name, smaller
		e = e.WithRemediation(fmt.Sprintf("Ask for fewer items: call %s %s again with limit %d.", t.Name, a.Name, smaller)).
			WithRecovery(t.Name, rec, nil)
	case narrow != nil && narrowed(narrow, t, a, args, &e):
	default:
		e = e.WithRemediation("Narrow the call (fewer items, one spec) or ask the operator for a larger --token-budget.")
	}
	return encoded(call.Failure(e))
}

// Narrower names the call that reads, in a form that fits any budget, what
// a read of tool's action with args answers when that answer is over the
// budget and neither a smaller limit nor the server's full budget would
// make it fit: the call's tool, its arguments (with "action") and one
// sentence of remediation; ok false when none applies.
type Narrower func(tool, action string, args Args) (next string, nextArgs map[string]any, remediation string, ok bool)

// narrowed sets the remediation and recovery of *e from narrow, reporting
// whether narrow named a call.
func narrowed(narrow Narrower, t *Tool, a *Action, args Args, e **core.Error) bool {
	next, nextArgs, remediation, ok := narrow(t.Name, a.Name, args)
	if ok {
		*e = (*e).WithRemediation(remediation).WithRecovery(next, nextArgs, nil)
	}
	return ok
}

// referenceOnlyWrite answers a write whose answer cannot shrink below the
// budget. The change happened, so the answer stays a success, cut to
// reference_only: the top-level fields of data whose own encoding is at
// most maxReferenceField bytes are kept; the others are named
// "item:<key>" in dropped_content_ids.
func referenceOnlyWrite(call *core.Call, env core.Envelope, meta []core.MetaOption, budget, answerTokens int) core.Envelope {
	full, _ := env.Data.(map[string]any)
	if full == nil {
		full = StructMap(env.Data)
	}
	kept := map[string]any{}
	var dropped []string
	for _, k := range slices.Sorted(maps.Keys(full)) {
		b, err := json.Marshal(full[k])
		if err == nil && len(b) <= maxReferenceField {
			kept[k] = full[k]
		} else {
			dropped = append(dropped, "item:"+k)
		}
	}
	opts := joinMeta(meta, []core.MetaOption{
		core.WithFidelity(core.FidelityReferenceOnly, dropped, nil),
		core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
			fmt.Sprintf("The change was made, but its answer (%d tokens) is over the %d-token budget: only its small fields are shown; re-read what you need (e.g. spec get, task info).", answerTokens, budget),
			map[string]any{"dropped_count": len(dropped), "total_count": len(full), "reason": "token_budget", "budget_tokens": budget, "answer_tokens": answerTokens}),
	})
	out := encoded(call.Success(kept, opts...))
	if tokensOfBytes(len(out.Encoded())) > budget {
		// Only a pathological meta gets here; still never over the budget.
		out = encoded(call.Success(map[string]any{}, core.WithFidelity(core.FidelityReferenceOnly, []string{"item:*"}, nil),
			core.WithWarning(core.WarnContentTruncated, core.SeverityWarning, "The change was made; its answer is over the token budget and was left out.",
				map[string]any{"dropped_count": len(full), "total_count": len(full), "reason": "token_budget", "budget_tokens": budget})))
	}
	return out
}

// maxReferenceField bounds a top-level field a reference_only write answer
// keeps (ids, versions, counts, statuses).
const maxReferenceField = 200

// fitFailure builds a failure envelope within the budget. Error payloads are
// small by construction (received values are truncated, fuzzy matches are
// at most 5); one that is not loses its details but keeps its code, type,
// remediation and recovery.
func fitFailure(call *core.Call, e *core.Error, meta []core.MetaOption, budget int) core.Envelope {
	env := encoded(call.Failure(e, meta...))
	if tokensOfBytes(len(env.Encoded())) <= budget {
		return env
	}
	small := *e
	small.Details = map[string]any{"details_dropped": "over the token budget"}
	if field, ok := e.Details["field"]; ok {
		small.Details["field"] = field
	}
	return encoded(call.Failure(&small))
}

// encoded is core.Encode for envelopes the builders made (whose encoding
// cannot fail but for a programming error, which ToResult reports).
func encoded(env core.Envelope) core.Envelope {
	out, _, err := core.Encode(env)
	if err != nil {
		return env
	}
	return out
}
