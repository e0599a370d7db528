package tests

import (
	"sync"
	"testing"
	"time"
)

// TestErrorPatternsOrderTies: error patterns seen equally often come
// newest last occurrence first. (The contract walks reach this tie only
// when two equally frequent errors fall in different clock seconds, by
// chance; here a stepped clock makes it certain.)
func TestErrorPatternsOrderTies(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, true)
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	deps.Runtime.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	step := func() { mu.Lock(); defer mu.Unlock(); now = now.Add(time.Second) }
	c, _ := inProcess(t, deps, protocols[0])
	failing := []struct {
		tool string
		args map[string]any
	}{
		{"task", map[string]any{"action": "no-such-action"}},
		{"spec", map[string]any{"action": "get", "spec_id": "no-such-spec"}},
		{"health", map[string]any{"action": "no-such-action"}},
	}
	// Each error twice, the second round a second apart each: health's is
	// the newest, task's the oldest.
	for round := range 2 {
		for _, f := range failing {
			if round == 1 {
				step()
			}
			if env := call(t, c, f.tool, f.args); env["success"] != false {
				t.Fatalf("setup %s %v: %v", f.tool, f.args, env)
			}
		}
	}
	p := ok(t, c, "error", map[string]any{"action": "patterns"})
	ps, _ := p["patterns"].([]any)
	var got []any
	for _, e := range ps {
		e := e.(map[string]any)
		if e["count"] != 2.0 {
			t.Fatalf("pattern %v: want count 2: %v", e, p)
		}
		got = append(got, e["tool"])
	}
	if want := []any{"health", "spec", "task"}; !jsonEqual(got, want) {
		t.Fatalf("equally frequent patterns by tool: %v, want %v (newest last occurrence first): %v", got, want, p)
	}
}
