package specs

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/specd/specd/core"
)

// testClock returns a clock that starts at 2025-01-02T03:04:05Z and advances
// one minute per call.
func testClock() core.Clock {
	t := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

func mustNoViolations(t *testing.T, s *Spec, context string) {
	t.Helper()
	if vs := CheckInvariants(s); len(vs) > 0 {
		for _, v := range vs {
			t.Errorf("%s: %s", context, v)
		}
		t.FailNow()
	}
}

func mustCode(t *testing.T, err error, code string) *core.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("expected %s, got nil", code)
	}
	e, ok := err.(*core.Error)
	if !ok {
		t.Fatalf("expected *core.Error %s, got %T %v", code, err, err)
	}
	if e.Code != code {
		t.Fatalf("expected %s, got %s (%s)", code, e.Code, e.Message)
	}
	return e
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// newTestSpec creates an empty spec with a fixed clock.
func newTestSpec(t testing.TB) *Spec {
	t.Helper()
	s, err := NewSpec(NewSpecInput{Name: "Test spec", Mission: "test"}, testClock(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// commit simulates a store commit: applies the view's changes to a fresh
// MemorySource copy and returns a new view over it.
func commit(s *Spec, src MemorySource) (*Spec, MemorySource) {
	put, del := s.Changes()
	next := make(MemorySource, len(src)+len(put))
	for k, v := range src {
		next[k] = v
	}
	next.Apply(put, del)
	v := NewSpecView(s.Header.Clone(), next)
	v.Clock = s.Clock
	return v, next
}

func docJSON(t testing.TB, s *Spec) string {
	t.Helper()
	b, err := json.Marshal(s.Document())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func f64(f float64) *float64 { return &f }

// at is a position argument (0-based).
func at(p int) *int { return &p }
