package degrade

import (
	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// MaxFitRounds bounds how often FitMeasured re-runs Fit.
const MaxFitRounds = 8

// FitMeasured fits doc so that the whole answer built from it — as measure
// counts it in tokens, the answer's other parts included (the dropped ids,
// archive hashes and warning a degraded answer carries) — is within budget.
// It runs Fit with min(dataBudget, budget); while the answer is over, it
// runs Fit again with the data budget lowered by the overshoot (and a
// margin), at most MaxFitRounds times. When reference_only, the smallest
// level, is still over, it tries once more without the archive hashes
// (the answer's next_calls still page through the rest).
//
// ok is false when no level fits. The last call of measure is always on the
// Result returned with ok true, so a caller may keep what measure built.
// The only errors are Fit's.
func FitMeasured(doc specs.Document, dataBudget, budget int, hash Hasher, measure func(Result) int) (r Result, ok bool, err error) {
	fitBudget := min(dataBudget, budget)
	for range MaxFitRounds {
		b, err := Fit(doc, fitBudget, hash)
		if err != nil {
			return Result{}, false, err
		}
		t := measure(b)
		if t <= budget {
			return b, true, nil
		}
		if b.Fidelity == core.FidelityReferenceOnly || fitBudget <= 1 {
			b.Archive = nil
			if measure(b) <= budget {
				return b, true, nil
			}
			return Result{}, false, nil
		}
		fitBudget = max(1, fitBudget-(t-budget)-budget/100-8)
	}
	return Result{}, false, nil
}
