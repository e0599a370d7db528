package board

import (
	"fmt"
	"testing"
	"time"
)

// TestLimiterKeepsBoundedBuckets: a limiter keeps at most
// maxLimiterBuckets buckets however many addresses try; while every
// bucket is in use, newcomers share the overflow bucket (so they are
// still limited); once buckets are full again they are forgotten and
// newcomers get their own.
func TestLimiterKeepsBoundedBuckets(t *testing.T) {
	l := newLimiter(1, 1)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < maxLimiterBuckets+100; i++ {
		l.take(fmt.Sprintf("192.0.2.%d", i), now)
	}
	if n := len(l.buckets); n > maxLimiterBuckets {
		t.Fatalf("%d buckets after %d addresses, cap %d", n, maxLimiterBuckets+100, maxLimiterBuckets)
	}
	if ok, after := l.take("198.51.100.1", now); ok || after < 1 {
		t.Errorf("a newcomer while every bucket is in use shares the spent overflow bucket: ok %v, retry after %d", ok, after)
	}
	now = now.Add(time.Second)
	if ok, _ := l.take("198.51.100.2", now); !ok || len(l.buckets) != 1 {
		t.Errorf("after the buckets refilled: ok %v with %d buckets, want a fresh bucket among 1", ok, len(l.buckets))
	}
}
