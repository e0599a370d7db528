package tools

import (
	"testing"

	"github.com/specd/specd/flags/registry"
)

// TestActionFlagsFromRegistry: every tool action the flag registry says a
// flag gates carries that flag, and no other action carries one: the
// registry is the one place the gates are named.
func TestActionFlagsFromRegistry(t *testing.T) {
	h := newTaskHarness(t)
	gated := 0
	for _, tl := range h.reg.Tools() {
		for _, a := range tl.Actions {
			want := registry.Gated(tl.Name, a.Name)
			if a.Flag != want {
				t.Errorf("%s %s: flag %q, the registry says %q", tl.Name, a.Name, a.Flag, want)
			}
			if want != "" {
				gated++
			}
		}
	}
	n := 0
	for _, f := range registry.Flags {
		for _, g := range f.Gates {
			if g.What == "" {
				n++
			}
		}
	}
	if gated != n {
		t.Fatalf("%d actions gated, the registry names %d", gated, n)
	}
}
