package main

import (
	"runtime/debug"
	"testing"
)

// TestServerGCPercent: without GOGC the HTTP server collects at
// serverGCPercent; a GOGC in the environment is left as the runtime set it.
func TestServerGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	if p, env := setServerGC(func(string) string { return "" }); p != "200" || env {
		t.Fatalf("without GOGC: %s, from env %v", p, env)
	}
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Fatalf("GC percent %d, want %d", got, serverGCPercent)
	}
	if p, env := setServerGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	}); p != "50" || !env {
		t.Fatalf("with GOGC=50: %s, from env %v", p, env)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC in the environment overridden: percent %d", got)
	}
}
