package httpguard

import (
	"context"
	"fmt"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// approachingShare is the share of the bucket under which answers carry
// RATE_LIMIT_APPROACHING.
const approachingShare = 0.10

// Access decides each tool call of an HTTP caller (it implements
// mcptool.Access, the hook every call passes through): the rate budget of its
// key and what its role may run. Calls without an identity in their context
// (stdio, the CLI) pass untouched.
type Access struct {
	Rate    *RateLimiter // nil: no rate limit
	Metrics *Metrics     // nil: nothing recorded
	// Admin reports whether an action is server administration (admin
	// only); nil: none is.
	Admin func(tool, action, sideEffects string) bool
}

// Charge spends one call of the caller's rate budget. The options put
// meta.rate_limit {limit, remaining, reset_seconds} on the answer, and a
// RATE_LIMIT_APPROACHING warning when under 10% is left; an empty bucket
// answers RATE_LIMIT_EXCEEDED with data.retry_after_seconds and
// retry_after_ms (also in data.details); the dispatcher makes the same call
// its recovery.
func (a *Access) Charge(ctx context.Context) ([]core.MetaOption, *core.Error) {
	id, ok := IdentityFrom(ctx)
	if !ok || a == nil || a.Rate == nil {
		return nil, nil
	}
	q := a.Rate.Take(bucket(id))
	opts := []core.MetaOption{core.WithRateLimit(core.RateLimit{Limit: q.Limit, Remaining: q.Remaining, ResetSeconds: q.ResetSeconds})}
	if !q.Allowed {
		a.Metrics.RateRejected(bucket(id))
		e := core.NewError(errcode.RateLimitExceeded,
			fmt.Sprintf("Rate limit of key %s reached (%d calls at once, refilling over %d s); nothing was done.", bucket(id), q.Limit, q.ResetSeconds),
			map[string]any{"retry_after_seconds": q.RetryAfterSeconds, "retry_after_ms": q.RetryAfterMS, "limit": q.Limit}).
			WithRemediation(fmt.Sprintf("Wait %d seconds (data.retry_after_seconds), then send the same call again.", q.RetryAfterSeconds))
		e.Extra = map[string]any{"retry_after_seconds": q.RetryAfterSeconds}
		return opts, e
	}
	if float64(q.Remaining) < approachingShare*float64(q.Limit) {
		opts = append(opts, core.WithWarning(core.WarnRateLimitApproaching, core.SeverityWarning,
			fmt.Sprintf("%d of %d calls left; the bucket is full again in %d s.", q.Remaining, q.Limit, q.ResetSeconds),
			map[string]any{"remaining": q.Remaining, "reset_seconds": q.ResetSeconds}))
	}
	return opts, nil
}

// Permit decides whether the caller's role may run an action with these
// side effects: observer runs none/read actions only, maintainer all but
// server administration, admin everything. A refusal is FORBIDDEN naming
// the role.
func (a *Access) Permit(ctx context.Context, tool, action, sideEffects string) *core.Error {
	id, ok := IdentityFrom(ctx)
	if !ok || a == nil {
		return nil
	}
	admin := a.Admin != nil && a.Admin(tool, action, sideEffects)
	if allows(id.Role, admin, sideEffects) {
		return nil
	}
	need := Maintainer
	if admin {
		need = Admin
	}
	return core.NewError(errcode.Forbidden,
		fmt.Sprintf("Key %s has role %s, which may not run %s %s (side effects: %s); it needs role %s.", id.KeyID, id.Role, tool, action, sideEffects, need),
		map[string]any{"role": string(id.Role), "required_role": string(need), "tool": tool, "action": action}).
		WithRemediation(fmt.Sprintf("Use a key with role %s (an operator adds one with: specd keys add ID --role %s).", need, need))
}

// allows reports whether role may run an action with sideEffects (admin:
// the action is server administration): admin runs everything, maintainer
// all but administration, observer only actions without writes (none or
// read) that are not administration; any other role nothing.
func allows(role Role, admin bool, sideEffects string) bool {
	switch role {
	case Admin:
		return true
	case Maintainer:
		return !admin
	case Observer:
		return !admin && (sideEffects == "none" || sideEffects == "read")
	}
	return false
}

// KeyID is the caller's key id ("" without keys or outside HTTP).
func (a *Access) KeyID(ctx context.Context) string {
	id, _ := IdentityFrom(ctx)
	return id.KeyID
}

// Done records a finished call in the metrics: the call, and one served
// call under each flag decision it was served under.
func (a *Access) Done(ctx context.Context, tool, action, outcome string, d time.Duration, served []mcptool.FlagDecision) {
	if a == nil {
		return
	}
	a.Metrics.Call(tool, action, outcome, d)
	for _, s := range served {
		a.Metrics.Variant(s.Flag, s.Variant)
	}
}

// bucket is the rate bucket of id: its key id, or "anonymous" without keys.
func bucket(id Identity) string {
	if id.KeyID == "" {
		return "anonymous"
	}
	return id.KeyID
}
