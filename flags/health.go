package flags

import (
	"math"
	"math/bits"
	"sort"
	"sync"
	"time"

	"github.com/specd/specd/flags/registry"
)

// Latency histogram: 4 sub-buckets per power of two of microseconds (about
// 19% resolution), from 1 µs to beyond an hour.
const (
	subBuckets = 4
	nBuckets   = 64 * subBuckets
)

func bucketOf(d time.Duration) int {
	us := uint64(d / time.Microsecond)
	if us < 1 {
		return 0
	}
	exp := bits.Len64(us) - 1 // us in [2^exp, 2^(exp+1))
	sub := 0
	if exp >= 2 {
		sub = int((us >> (exp - 2)) & (subBuckets - 1))
	} else {
		sub = int(us-(1<<exp)) * subBuckets >> exp
	}
	return exp*subBuckets + sub
}

// bucketUpper is the upper bound of bucket i in milliseconds.
func bucketUpper(i int) float64 {
	exp, sub := i/subBuckets, i%subBuckets
	lo := math.Ldexp(1, exp)
	return lo * (1 + float64(sub+1)/subBuckets) / 1000
}

type stat struct {
	sessions, calls int64
	errors          map[string]int64
	hist            [nBuckets]int64
}

type health struct {
	mu    sync.Mutex
	since time.Time
	stats map[[2]string]*stat
}

func newHealth() *health { return &health{since: time.Now(), stats: map[[2]string]*stat{}} }

func (h *health) get(flag, variant string) *stat {
	k := [2]string{flag, variant}
	st := h.stats[k]
	if st == nil {
		st = &stat{errors: map[string]int64{}}
		h.stats[k] = st
	}
	return st
}

func (h *health) session(flag, variant string) {
	h.mu.Lock()
	h.get(flag, variant).sessions++
	h.mu.Unlock()
}

func (h *health) call(flag, variant, errorType string, d time.Duration) {
	b := bucketOf(d)
	h.mu.Lock()
	st := h.get(flag, variant)
	st.calls++
	if errorType != "" {
		st.errors[errorType]++
	}
	st.hist[b]++
	h.mu.Unlock()
}

// HealthRow is one flag and variant of the rollout health table.
type HealthRow struct {
	Flag     string           `json:"flag"`
	Variant  string           `json:"variant"`
	Sessions int64            `json:"sessions"`
	Calls    int64            `json:"calls"`
	Errors   map[string]int64 `json:"errors"` // by error_type
	P50MS    float64          `json:"p50_ms"`
	P99MS    float64          `json:"p99_ms"`
}

// HealthReport is the rollout health table since start.
type HealthReport struct {
	Since    time.Time   `json:"since"`
	Provider string      `json:"provider"`
	FlagFile string      `json:"flag_file"`
	Rows     []HealthRow `json:"rows"`
}

func (h *health) report() HealthReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := HealthReport{Since: h.since, Rows: make([]HealthRow, 0, len(h.stats))}
	for k, st := range h.stats {
		row := HealthRow{Flag: k[0], Variant: k[1], Sessions: st.sessions, Calls: st.calls, Errors: map[string]int64{}}
		for t, n := range st.errors {
			row.Errors[t] = n
		}
		row.P50MS, row.P99MS = quantile(&st.hist, st.calls, 0.50), quantile(&st.hist, st.calls, 0.99)
		r.Rows = append(r.Rows, row)
	}
	order := map[string]int{}
	for i, f := range registry.Flags {
		order[f.Name] = i
	}
	sort.Slice(r.Rows, func(i, j int) bool {
		a, b := r.Rows[i], r.Rows[j]
		if a.Flag != b.Flag {
			return order[a.Flag] < order[b.Flag]
		}
		return a.Variant < b.Variant
	})
	return r
}

// quantile is the upper bound (ms, 2 decimals) of the bucket holding the
// q-th call; 0 without calls.
func quantile(hist *[nBuckets]int64, n int64, q float64) float64 {
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for i, c := range hist {
		seen += c
		if seen >= rank {
			return math.Round(bucketUpper(i)*100) / 100
		}
	}
	return 0
}
