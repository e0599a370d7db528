package etcdstore

import (
	"fmt"
	"testing"
)

// TestGuessPausesBounded: every spec whose guess failed is paused, and a
// pause was only forgotten when the same spec was opened again after it
// ended; a server that sees conflicts on many specs it never writes again
// (deleted, archived, written once) must not keep a pause for each
// forever: the pauses are bounded as the guesses are.
func TestGuessPausesBounded(t *testing.T) {
	var g specGuesses
	for i := range 2*maxNodeSnapshots + 1 {
		g.drop(fmt.Sprint("/p/specs/s", i), true)
	}
	if n := len(g.pause); n > maxNodeSnapshots {
		t.Fatalf("%d pauses kept, want at most %d", n, maxNodeSnapshots)
	}
	if g.get("/p/specs/s0") != nil {
		t.Fatal("a guess for a dropped spec")
	}
}
