package httpguard

import (
	"math"
	"sync"
	"time"

	"github.com/specd/specd/core"
	"golang.org/x/time/rate"
)

// RateLimiter keeps one token bucket per key id: PerSecond calls a second on
// average, at most Burst at once. Buckets are made on a key's first call; the
// number of keys is bounded by the keys file (all anonymous callers share
// one bucket).
type RateLimiter struct {
	perSecond rate.Limit
	burst     int
	now       core.Clock

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewRateLimiter returns a limiter of perSecond calls a second with bursts
// of burst; now is the clock (nil: time.Now).
func NewRateLimiter(perSecond float64, burst int, now core.Clock) *RateLimiter {
	if now == nil {
		now = time.Now
	}
	return &RateLimiter{perSecond: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*rate.Limiter{}}
}

// Quota is the state of a key's bucket after one call.
type Quota struct {
	Allowed           bool
	Limit             int // the bucket size (burst)
	Remaining         int // whole calls left now
	ResetSeconds      int // seconds until the bucket is full again
	RetryAfterSeconds int // when refused: seconds until one call is allowed
	RetryAfterMS      int // when refused: the same wait in milliseconds (rounded up, at least 1)
}

// Take spends one call of key's budget and reports what is left.
func (l *RateLimiter) Take(key string) Quota {
	l.mu.Lock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(l.perSecond, l.burst)
		l.buckets[key] = b
	}
	l.mu.Unlock()
	now := l.now()
	q := Quota{Allowed: b.AllowN(now, 1), Limit: l.burst}
	tokens := b.TokensAt(now)
	q.Remaining = max(int(math.Floor(tokens)), 0)
	q.ResetSeconds = secondsFor(float64(l.burst)-tokens, l.perSecond)
	if !q.Allowed {
		q.RetryAfterSeconds = max(secondsFor(1-tokens, l.perSecond), 1)
		q.RetryAfterMS = max(secondsFor((1-tokens)*1000, l.perSecond), 1)
	}
	return q
}

// secondsFor is the whole seconds (rounded up) the bucket needs to gain
// tokens at r.
func secondsFor(tokens float64, r rate.Limit) int {
	if tokens <= 0 {
		return 0
	}
	if r <= 0 {
		return math.MaxInt32
	}
	return int(math.Ceil(tokens / float64(r)))
}
