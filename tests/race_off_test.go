//go:build !race

package tests

// budgetSweepStep is the max_tokens step of the spec get budget sweep; under
// -race it is coarser (race_on_test.go). make unit runs the tests that use
// these knobs without -race too (NORACE_RUN in the Makefile).
const budgetSweepStep = 250

// swapCalls is how many digest-create calls TestSwapRaceStaysInside makes
// while a goroutine swaps the file with a symlink (fewer under -race:
// race_on_test.go).
const swapCalls = 400

// largeTextBytes is the size of TestResearchPathAndLargeText's large text
// (smaller under -race: race_on_test.go).
const largeTextBytes = 1 << 20
