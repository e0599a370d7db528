package httpguard

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the server's Prometheus registry; every name starts with
// specd_. Labels are bounded: tool and action come from the registry, the
// outcome is "ok" or a registered error code, the reason of a rejection is
// one of the front door's fixed words.
type Metrics struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	lockWait   prometheus.Histogram
	sessions   prometheus.Gauge
	rateReject *prometheus.CounterVec
	rejected   *prometheus.CounterVec
	variants   *prometheus.CounterVec
}

// NewMetrics registers specd's metrics and the Go and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_calls_total",
			Help: "Tool calls by tool, action and outcome (ok or the error code)."}, []string{"tool", "action", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "specd_call_duration_seconds",
			Help: "Tool call latency by tool and action.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}, []string{"tool", "action"}),
		lockWait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "specd_store_lock_wait_seconds",
			Help: "Time a store transaction waited for the store lock.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "specd_sessions",
			Help: "Live MCP sessions."}),
		rateReject: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_rate_limit_rejections_total",
			Help: "Calls refused with RATE_LIMIT_EXCEEDED, by key id."}, []string{"key"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_http_rejections_total",
			Help: "HTTP requests the front door refused, by reason."}, []string{"reason"}),
		variants: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd_flag_variants_served_total",
			Help: "Calls served under each feature flag variant."}, []string{"flag", "variant"}),
	}
	m.reg.MustRegister(m.calls, m.latency, m.lockWait, m.sessions, m.rateReject, m.rejected, m.variants,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Call records one finished tool call.
func (m *Metrics) Call(tool, action, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.calls.WithLabelValues(tool, action, outcome).Inc()
	m.latency.WithLabelValues(tool, action).Observe(d.Seconds())
}

// LockWait records how long a store transaction waited for the lock.
func (m *Metrics) LockWait(d time.Duration) {
	if m != nil {
		m.lockWait.Observe(d.Seconds())
	}
}

// Sessions sets the live session count.
func (m *Metrics) Sessions(n int) {
	if m != nil {
		m.sessions.Set(float64(n))
	}
}

// RateRejected counts one RATE_LIMIT_EXCEEDED for key.
func (m *Metrics) RateRejected(key string) {
	if m != nil {
		m.rateReject.WithLabelValues(key).Inc()
	}
}

// Rejected counts one request refused at the door for reason.
func (m *Metrics) Rejected(reason string) {
	if m != nil {
		m.rejected.WithLabelValues(reason).Inc()
	}
}

// Declare exports, at 0 from the start, the rate-limit rejections of each
// key id ("anonymous" is the bucket of a server without keys) and the calls
// served under each flag variant, so a dashboard or an alert sees every
// series before its first event.
func (m *Metrics) Declare(keyIDs []string, variants [][2]string) {
	if m == nil {
		return
	}
	if len(keyIDs) == 0 {
		keyIDs = []string{"anonymous"}
	}
	for _, k := range keyIDs {
		m.rateReject.WithLabelValues(k)
	}
	for _, v := range variants {
		m.variants.WithLabelValues(v[0], v[1])
	}
}

// Variant counts one call served under flag's variant.
func (m *Metrics) Variant(flag, variant string) {
	if m != nil && flag != "" {
		m.variants.WithLabelValues(flag, variant).Inc()
	}
}
