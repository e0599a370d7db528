//go:build race

package tests

// budgetSweepStep is the max_tokens step of the spec get budget sweep under
// -race (about ten times slower per call); the non-race run sweeps every 250.
const budgetSweepStep = 1000

// swapCalls is how many digest-create calls TestSwapRaceStaysInside makes
// while a goroutine swaps the file with a symlink. The swap is a race with
// the file system, not with Go memory, so the race detector gains nothing
// from more rounds; the non-race run makes the full 400.
const swapCalls = 100
