package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
)

func fixedCall(tool string) *Call {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	return NewCall(tool, "a", func() time.Time { r := now; now = now.Add(1234567 * time.Nanosecond); return r }, func() string {
		return "0190a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b"
	})
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func roundTrip(t *testing.T, e Envelope) map[string]any {
	t.Helper()
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSuccessShape(t *testing.T) {
	c := fixedCall("spec")
	m := roundTrip(t, c.Success(nil))
	if got := keys(m); !reflect.DeepEqual(got, []string{"data", "error", "meta", "success"}) {
		t.Fatalf("top-level keys %v", got)
	}
	if m["error"] != nil || m["success"] != true {
		t.Fatalf("success envelope %v", m)
	}
	if d, ok := m["data"].(map[string]any); !ok || len(d) != 0 {
		t.Fatalf("nil data must become {}: %v", m["data"])
	}
	meta := m["meta"].(map[string]any)
	if meta["version"] != "response-v2" || meta["request_id"] != "spec_2c3d4e5f6a7b" {
		t.Fatalf("meta %v", meta)
	}
	if meta["telemetry"].(map[string]any)["duration_ms"] != 1.23 {
		t.Fatalf("duration_ms must have 2 decimals: %v", meta["telemetry"])
	}
	for _, k := range []string{"warnings", "pagination", "content_fidelity", "rate_limit", "deprecated"} {
		if _, ok := meta[k]; ok {
			t.Fatalf("unset meta key %q present", k)
		}
	}
}

func TestMetaOptions(t *testing.T) {
	total := 7
	m := roundTrip(t, fixedCall("x").Success(map[string]any{"a": 1},
		WithWarning(WarnContentTruncated, SeverityWarning, "cut", map[string]any{"dropped_count": 2}),
		WithPagination("abc", 10, &total),
		WithFidelity(FidelitySummary, []string{"node:task-1"}, map[string]string{"spec:s@1/node:task-1": "sha256:" + strings.Repeat("a", 64)}),
		WithDeprecated("old", "new", "v2"),
		WithRateLimit(RateLimit{Limit: 10, Remaining: 1, ResetSeconds: 6}),
	))["meta"].(map[string]any)
	if meta := m; meta["warnings"].([]any)[0] != "cut" || meta["warning_details"].([]any)[0].(map[string]any)["code"] != WarnContentTruncated {
		t.Fatalf("warnings %v", meta)
	}
	p := m["pagination"].(map[string]any)
	if p["cursor"] != "abc" || p["has_more"] != true || p["total_count"].(float64) != 7 {
		t.Fatalf("pagination %v", p)
	}
	if m["content_fidelity"] != "summary" || m["content_fidelity_schema_version"] != "1.0" {
		t.Fatalf("fidelity %v", m)
	}
	last := roundTrip(t, fixedCall("x").Success(nil, WithPagination("", 10, nil)))["meta"].(map[string]any)["pagination"].(map[string]any)
	if last["cursor"] != nil || last["has_more"] != false {
		t.Fatalf("last page %v", last)
	}
	if _, ok := last["total_count"]; ok {
		t.Fatalf("total_count must be omitted when not kept")
	}
	full := roundTrip(t, fixedCall("x").Success(nil, WithFidelity(FidelityFull, nil, nil)))["meta"].(map[string]any)
	if _, ok := full["content_fidelity"]; ok {
		t.Fatalf("full fidelity is not reported")
	}
}

func TestFailureShape(t *testing.T) {
	c := fixedCall("task")
	e := NewError(errcode.TaskNotFound, "No task task-9.", map[string]any{"field": "task_id", "received": strings.Repeat("y", 500)}).
		WithRecovery("task", map[string]any{"action": "list"}, []string{"task-1"})
	m := roundTrip(t, c.Failure(e))
	if m["success"] != false || m["error"] != "No task task-9." {
		t.Fatalf("failure %v", m)
	}
	d := m["data"].(map[string]any)
	if got := keys(d); !reflect.DeepEqual(got, []string{"details", "error_code", "error_type", "recovery", "remediation"}) {
		t.Fatalf("data keys %v", got)
	}
	if d["error_type"] != errcode.TypeNotFound || d["remediation"] == "" {
		t.Fatalf("registry not applied: %v", d)
	}
	if r := d["details"].(map[string]any)["received"].(string); len([]rune(r)) > 201 {
		t.Fatalf("received not truncated: %d", len(r))
	}
	rec := d["recovery"].(map[string]any)
	if rec["suggested_tool"] != "task" || rec["fuzzy_matches"].([]any)[0] != "task-1" {
		t.Fatalf("recovery %v", rec)
	}
}

func TestInternalErrorsNeverLeak(t *testing.T) {
	c := fixedCall("spec")
	for _, err := range []error{errors.New("open /home/me/secret: permission denied"), nil} {
		e := AsError(err)
		if err == nil {
			e = Internal(nil)
		}
		b, _ := c.Failure(e).Marshal()
		if strings.Contains(string(b), "secret") || strings.Contains(string(b), "/home") {
			t.Fatalf("leaked: %s", b)
		}
		if !strings.Contains(string(b), c.RequestID) {
			t.Fatalf("internal error must name the request id: %s", b)
		}
	}
	unknown := &Error{Code: "NOT_A_CODE", Message: "x"}
	if d := roundTrip(t, c.Failure(unknown))["data"].(map[string]any); d["error_code"] != errcode.Internal {
		t.Fatalf("unregistered codes must become INTERNAL_ERROR: %v", d)
	}
}

// TestAsErrorFindsWrappedErrors: an *Error wrapped by fmt.Errorf keeps its
// code, message and details; CodeOf reads the code through the wrapping and
// is "" for errors that carry none.
func TestAsErrorFindsWrappedErrors(t *testing.T) {
	inner := NewError(errcode.TaskBlocked, "Task task-1 is blocked.", map[string]any{"blocked_by": []string{"task-0"}})
	wrapped := fmt.Errorf("start: %w", inner)
	if e := AsError(wrapped); e != inner {
		t.Fatalf("%+v", e)
	}
	if CodeOf(wrapped) != errcode.TaskBlocked || CodeOf(errors.New("plain")) != "" || CodeOf(nil) != "" {
		t.Fatal("CodeOf")
	}
}

func TestRegistryIsComplete(t *testing.T) {
	types := map[string]bool{errcode.TypeValidation: true, errcode.TypeAuthentication: true, errcode.TypeAuthorization: true, errcode.TypeNotFound: true,
		errcode.TypeConflict: true, errcode.TypeRateLimit: true, errcode.TypeFeatureFlag: true, errcode.TypeInternal: true, errcode.TypeUnavailable: true}
	if len(errcode.Codes()) < 32 {
		t.Fatalf("registry has %d codes", len(errcode.Codes()))
	}
	for _, c := range errcode.Codes() {
		r, _ := errcode.Lookup(c)
		if !types[r.Type] || r.Remediation == "" || strings.ToUpper(c) != c {
			t.Errorf("bad registry row %+v", r)
		}
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct{ tool, id, want string }{
		{"spec", "0190a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7b", "spec_2c3d4e5f6a7b"},
		{"weird tool!", "ABCDEF012345", "weird_tool__abcdef012345"},
		{"", "abc", "specd_abc"},
		{"é-x_Z9[`{@/:", "A-B", "__-x_Z9_______ab"},
	} {
		if got := RequestID(tc.tool, tc.id); got != tc.want || !ValidRequestID(got) {
			t.Errorf("RequestID(%q,%q) = %q, want %q", tc.tool, tc.id, got, tc.want)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		id := RequestID("t", NewUUID())
		if seen[id] {
			t.Fatalf("request id collision after %d ids", i)
		}
		seen[id] = true
	}
}

func TestCursor(t *testing.T) {
	fp := Fingerprint("spec", "list", "", "active")
	c := EncodeCursor("spec-2026-01-01-001", fp)
	if strings.ContainsAny(c, "=+/") {
		t.Fatalf("cursor must be unpadded base64url: %q", c)
	}
	k, err := DecodeCursor(c, fp)
	if err != nil || k != "spec-2026-01-01-001" {
		t.Fatalf("round trip: %q %v", k, err)
	}
	if _, err := DecodeCursor(c, Fingerprint("spec", "list", "", "archived")); err == nil || err.Code != errcode.InvalidCursor {
		t.Fatalf("cursor from another filter accepted: %v", err)
	}
	for _, bad := range []string{"!!!", "e30", "eyJ2IjoyLCJrIjoiYSIsImYiOiJ4In0"} {
		if _, err := DecodeCursor(bad, fp); err == nil || err.Code != errcode.InvalidCursor {
			t.Fatalf("bad cursor %q accepted", bad)
		}
	}
	if k, err := DecodeCursor("", fp); k != "" || err != nil {
		t.Fatalf("empty cursor is the first page")
	}
}

func FuzzDecodeCursor(f *testing.F) {
	fp := Fingerprint("t", "a", "")
	f.Add(EncodeCursor("key", fp))
	f.Add("")
	f.Add("e30")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := DecodeCursor(s, fp)
		if err == nil && s != "" {
			// Anything accepted must re-encode to a cursor decoding to the same key.
			if k2, err2 := DecodeCursor(EncodeCursor(k, fp), fp); err2 != nil || k2 != k {
				t.Fatalf("accepted %q → %q but re-encoding fails", s, k)
			}
		}
	})
}

func TestMutationCheckVersion(t *testing.T) {
	v := int64(3)
	if err := (Mutation{ExpectedVersion: &v}).CheckVersion(3); err != nil {
		t.Fatal(err)
	}
	err := (Mutation{ExpectedVersion: &v}).CheckVersion(4)
	if err == nil || err.Code != errcode.VersionConflict || err.Details["current_version"] != int64(4) {
		t.Fatalf("%v", err)
	}
	if err := (Mutation{}).CheckVersion(9); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkEnvelopeBuildEncode(b *testing.B) {
	data := map[string]any{"spec_id": "demo-2026-01-01-001", "found": true, "task_id": "task-1-2", "title": "Write the parser", "status": "pending"}
	b.ReportAllocs()
	for b.Loop() {
		c := NewCall("task", "next", nil, NewUUID)
		env := c.Success(data, WithWarning(WarnStaleCache, SeverityInfo, "x", nil))
		if _, err := env.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClockNow: a Clock's time comes in UTC; a nil Clock is the wall clock.
func TestClockNow(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600))
	if got := Clock(func() time.Time { return at }).Now(); got.Location() != time.UTC || !got.Equal(at) {
		t.Fatalf("fixed clock: %v", got)
	}
	var wall Clock
	if got := wall.Now(); got.Location() != time.UTC || got.IsZero() {
		t.Fatalf("nil clock: %v", got)
	}
}

// TestRequestIDOnePass: the one-pass build of an ASCII id gives what
// requestIDOf (lowercase the whole id without dashes, keep the last 12,
// clean the tool) gives, for ids of every length and case, with and
// without dashes, and for tool names with bytes outside the id class.
func TestRequestIDOnePass(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789abcdefABCDEF-xyzXYZ_ !"
	for range 5000 {
		id := make([]byte, r.IntN(40))
		for i := range id {
			id[i] = alphabet[r.IntN(len(alphabet))]
		}
		tool := []string{"spec", "task", "weird tool!", "é-x", "a.b/c"}[r.IntN(5)]
		if got, want := RequestID(tool, string(id)), requestIDOf(tool, string(id)); got != want {
			t.Fatalf("RequestID(%q, %q) = %q, want %q", tool, id, got, want)
		}
	}
	for _, id := range []string{"ÉCOLE-0190a0b0-c0d0-7e0f-8a1b-2c3d4e5f6a7B", "abc\xffDEF-0123456789", "İ-ABCDEF012345"} {
		if got, want := RequestID("t", id), requestIDOf("t", id); got != want {
			t.Fatalf("RequestID(t, %q) = %q, want %q", id, got, want)
		}
	}
}

// BenchmarkRequestID builds one call's request id from a UUIDv7.
func BenchmarkRequestID(b *testing.B) {
	id := NewUUID()
	b.ReportAllocs()
	for b.Loop() {
		RequestID("task", id)
	}
}
