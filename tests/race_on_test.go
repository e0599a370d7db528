//go:build race

package tests

// budgetSweepStep is the max_tokens step of the spec get budget sweep under
// -race (about ten times slower per call); the non-race run sweeps every 250.
const budgetSweepStep = 1000
