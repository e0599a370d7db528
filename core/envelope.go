// Package core is the response-v2 contract every specd tool answers with: the
// envelope and its builders, the one error type (codes and their registry are
// in core/errcode, which the domain imports too), request ids, pagination
// cursors, input caps and the envelope's JSON Schema.
//
// No tool builds an envelope by hand: a handler returns a [Result] and the
// dispatcher turns it into an [Envelope] with [Call.Success] or [Call.Failure].
// Both builders guarantee the exact shape {success, data, error, meta}, a
// non-null data object, meta.version "response-v2", a request id and
// telemetry.duration_ms.
package core

import (
	"encoding/json"
	"math"
	"time"
)

// Version is the value of meta.version on every answer.
const Version = "response-v2"

// FidelitySchemaVersion accompanies meta.content_fidelity.
const FidelitySchemaVersion = "1.0"

// Content fidelity levels of a budgeted answer (README "Big specs and big
// answers"), from most to least complete.
const (
	FidelityFull          = "full"
	FidelityPartial       = "partial"
	FidelitySummary       = "summary"
	FidelityReferenceOnly = "reference_only"
)

// Warning codes of meta.warning_details shared by every tool. Tools may add
// their own SCREAMING_SNAKE codes.
const (
	WarnContentTruncated     = "CONTENT_TRUNCATED"
	WarnStaleCache           = "STALE_CACHE"
	WarnPartialFailure       = "PARTIAL_FAILURE"
	WarnDeprecatedField      = "DEPRECATED_FIELD"
	WarnRateLimitApproaching = "RATE_LIMIT_APPROACHING"
	WarnFallbackUsed         = "FALLBACK_USED"
)

// Warning severities.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// Envelope is the response-v2 answer. Its JSON form has exactly these four keys.
type Envelope struct {
	Success bool    `json:"success"`
	Data    any     `json:"data"`
	Error   *string `json:"error"`
	Meta    Meta    `json:"meta"`

	encoded []byte // compact JSON recorded by Encode; see encoded.go
}

// Meta carries everything that is not the payload: metadata never goes into
// data. Optional keys are omitted when unset.
type Meta struct {
	Version                      string            `json:"version"`
	RequestID                    string            `json:"request_id"`
	Warnings                     []string          `json:"warnings,omitempty"`
	WarningDetails               []WarningDetail   `json:"warning_details,omitempty"`
	Pagination                   *Pagination       `json:"pagination,omitempty"`
	RateLimit                    *RateLimit        `json:"rate_limit,omitempty"`
	Telemetry                    Telemetry         `json:"telemetry"`
	ContentFidelity              string            `json:"content_fidelity,omitempty"`
	ContentFidelitySchemaVersion string            `json:"content_fidelity_schema_version,omitempty"`
	DroppedContentIDs            []string          `json:"dropped_content_ids,omitempty"`
	ContentArchiveHashes         map[string]string `json:"content_archive_hashes,omitempty"`
	Deprecated                   *Deprecation      `json:"deprecated,omitempty"`
}

// WarningDetail is the structured form of one warning.
type WarningDetail struct {
	Code     string         `json:"code"`
	Severity string         `json:"severity"`
	Message  string         `json:"message"`
	Context  map[string]any `json:"context,omitempty"`
}

// Pagination describes one page of a list. Cursor is nil on the last page.
// TotalCount is set only where a count is kept incrementally.
type Pagination struct {
	Cursor     *string `json:"cursor"`
	HasMore    bool    `json:"has_more"`
	PageSize   int     `json:"page_size"`
	TotalCount *int    `json:"total_count,omitempty"`
}

// RateLimit reports the caller's rate budget after a call: the bucket size,
// the whole calls left and the seconds until the bucket is full again.
type RateLimit struct {
	Limit        int `json:"limit"`
	Remaining    int `json:"remaining"`
	ResetSeconds int `json:"reset_seconds"`
}

// Telemetry holds timings. DurationMS has two decimals.
type Telemetry struct {
	DurationMS float64            `json:"duration_ms"`
	Timings    map[string]float64 `json:"timings_ms,omitempty"`
}

// Deprecation is reported when a legacy name was used.
type Deprecation struct {
	Action        string `json:"action"`
	Replacement   string `json:"replacement"`
	RemovalTarget string `json:"removal_target"`
}

// MetaOption sets one optional meta key; options apply in order.
type MetaOption func(*Meta)

// WithWarning adds a warning string and its structured detail.
func WithWarning(code, severity, message string, context map[string]any) MetaOption {
	return func(m *Meta) {
		m.Warnings = append(m.Warnings, message)
		m.WarningDetails = append(m.WarningDetails, WarningDetail{Code: code, Severity: severity, Message: message, Context: context})
	}
}

// WithPagination sets meta.pagination. An empty next cursor marks the last page.
// total may be nil: pass a count only where it is kept incrementally.
func WithPagination(next string, pageSize int, total *int) MetaOption {
	return func(m *Meta) {
		p := &Pagination{HasMore: next != "", PageSize: pageSize, TotalCount: total}
		if next != "" {
			c := next
			p.Cursor = &c
		}
		m.Pagination = p
	}
}

// WithRateLimit sets meta.rate_limit.
func WithRateLimit(rl RateLimit) MetaOption {
	return func(m *Meta) { r := rl; m.RateLimit = &r }
}

// WithFidelity reports degraded content: the level, the ids left out and the
// archive ids (archive id → "sha256:<hex>") under which they can be fetched.
// A level of "full" is ignored.
func WithFidelity(level string, dropped []string, archive map[string]string) MetaOption {
	return func(m *Meta) {
		if level == "" || level == FidelityFull {
			return
		}
		m.ContentFidelity = level
		m.ContentFidelitySchemaVersion = FidelitySchemaVersion
		m.DroppedContentIDs = append(m.DroppedContentIDs, dropped...)
		if len(archive) > 0 {
			if m.ContentArchiveHashes == nil {
				m.ContentArchiveHashes = make(map[string]string, len(archive))
			}
			for k, v := range archive {
				m.ContentArchiveHashes[k] = v
			}
		}
	}
}

// WithDeprecated reports that a legacy action name was used.
func WithDeprecated(action, replacement, removalTarget string) MetaOption {
	return func(m *Meta) {
		m.Deprecated = &Deprecation{Action: action, Replacement: replacement, RemovalTarget: removalTarget}
	}
}

// WithTiming records an extra named timing in milliseconds.
func WithTiming(name string, d time.Duration) MetaOption {
	return func(m *Meta) {
		if m.Telemetry.Timings == nil {
			m.Telemetry.Timings = map[string]float64{}
		}
		m.Telemetry.Timings[name] = millis(d)
	}
}

// Call is one tool invocation: its identity and start time. It builds the
// envelope of the answer. A Call is not safe for concurrent use.
type Call struct {
	Tool      string
	Action    string
	RequestID string
	Start     time.Time
	// Extra options go on every envelope of the call, success or failure,
	// before the builder's own (meta.rate_limit of a shared server).
	Extra []MetaOption
	now   Clock
}

// NewCall starts a call. newID returns a UUID string (v7 in production; tests
// inject a deterministic one); now is the clock.
func NewCall(tool, action string, now Clock, newID func() string) *Call {
	if now == nil {
		now = time.Now
	}
	return &Call{Tool: tool, Action: action, RequestID: RequestID(tool, newID()), Start: now(), now: now}
}

// Success builds a success envelope. A nil data becomes {}.
func (c *Call) Success(data any, opts ...MetaOption) Envelope {
	return Envelope{Success: true, Data: nonNil(data), Meta: c.meta(opts)}
}

// Failure builds an error envelope from e (see [Error.Payload]). The message
// of an INTERNAL_ERROR names the request id and never the Go error.
func (c *Call) Failure(e *Error, opts ...MetaOption) Envelope {
	if e == nil {
		e = Internal(nil)
	}
	msg := e.message(c.RequestID)
	return Envelope{Success: false, Data: e.Payload(c.RequestID), Error: &msg, Meta: c.meta(opts)}
}

func (c *Call) meta(opts []MetaOption) Meta {
	m := Meta{Version: Version, RequestID: c.RequestID}
	for _, o := range c.Extra {
		o(&m)
	}
	for _, o := range opts {
		o(&m)
	}
	m.Telemetry.DurationMS = millis(c.now().Sub(c.Start))
	return m
}

func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*100) / 100
}

func nonNil(data any) any {
	if data == nil {
		return map[string]any{}
	}
	return data
}

// Marshal encodes an envelope as compact JSON: the bytes Encode recorded,
// when it did, else a fresh encoding.
func (e Envelope) Marshal() ([]byte, error) {
	if e.encoded != nil {
		return e.encoded, nil
	}
	return json.Marshal(e)
}
