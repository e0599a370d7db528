//go:build race

package tests

// The knobs below make fewer repetitions under -race; make unit runs the
// tests that use them again without -race, with the full count (NORACE_RUN
// in the Makefile names them: keep the two lists in step).

// budgetSweepStep is the max_tokens step of the spec get budget sweep under
// -race (about ten times slower per call): 5 points from 3,250 to 21,250
// tokens, none on the test's fixed points (multiples of 500); the non-race
// run sweeps every 250.
const budgetSweepStep = 4500

// swapCalls is how many digest-create calls TestSwapRaceStaysInside makes
// while a goroutine swaps the file with a symlink. The swap is a race with
// the file system, not with Go memory, so the race detector gains nothing
// from more rounds; the non-race run makes the full 400.
const swapCalls = 100

// largeTextBytes is the size of TestResearchPathAndLargeText's large text
// under -race: 384 KB, still nearly four times the 100 KB request cap and
// four archive-get windows of the default budget; the non-race run sends
// the full 1 MB (eleven windows).
const largeTextBytes = 384 << 10
