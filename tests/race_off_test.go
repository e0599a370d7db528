//go:build !race

package tests

// budgetSweepStep is the max_tokens step of the spec get budget sweep; under
// -race it is coarser (race_on_test.go).
const budgetSweepStep = 250
