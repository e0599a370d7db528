//go:build race

package tests

// budgetSweepStep is the max_tokens step of the spec get budget sweep under
// -race (about ten times slower per call): 16 points from 1,750 to 24,250
// tokens, none on the test's fixed points (multiples of 500); the non-race
// run sweeps every 250.
const budgetSweepStep = 1500

// swapCalls is how many digest-create calls TestSwapRaceStaysInside makes
// while a goroutine swaps the file with a symlink. The swap is a race with
// the file system, not with Go memory, so the race detector gains nothing
// from more rounds; the non-race run makes the full 400.
const swapCalls = 100
