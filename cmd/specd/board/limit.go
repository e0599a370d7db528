package board

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiterBuckets bounds the buckets a limiter keeps: past it the
// buckets that are full again (their names idle) are forgotten, and while
// none is, newcomers share one overflow bucket. The key buckets never get
// there (the keys file bounds them); the address buckets could.
const maxLimiterBuckets = 4096

// limiter keeps one token bucket of sign-in attempts per name (a client
// address or a key id): perSecond on average, at most burst at once.
type limiter struct {
	perSecond rate.Limit
	burst     int

	mu       sync.Mutex
	buckets  map[string]*rate.Limiter
	overflow *rate.Limiter
}

func newLimiter(perSecond float64, burst int) *limiter {
	return &limiter{perSecond: rate.Limit(perSecond), burst: burst, buckets: map[string]*rate.Limiter{},
		overflow: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// take spends one attempt of name's bucket at now; refused, it reports
// the whole seconds (at least 1) until one is allowed.
func (l *limiter) take(name string, now time.Time) (ok bool, retryAfter int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(name, now)
	if b.AllowN(now, 1) {
		return true, 0
	}
	wait := (1 - b.TokensAt(now)) / float64(l.perSecond)
	return false, max(int(math.Ceil(wait)), 1)
}

// bucket is name's bucket, made on first use (l.mu held).
func (l *limiter) bucket(name string, now time.Time) *rate.Limiter {
	if b, ok := l.buckets[name]; ok {
		return b
	}
	if len(l.buckets) >= maxLimiterBuckets {
		for n, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, n)
			}
		}
	}
	if len(l.buckets) >= maxLimiterBuckets {
		return l.overflow
	}
	b := rate.NewLimiter(l.perSecond, l.burst)
	l.buckets[name] = b
	return b
}

// clientAddr is the rate-limited name of the request's client: its IP
// address, or the /64 of an IPv6 address (one host's usual share). Behind
// a proxy it is the proxy's: forwarding headers are not trusted.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
