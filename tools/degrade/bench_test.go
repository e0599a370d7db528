package degrade

import (
	"fmt"
	"testing"
)

// BenchmarkFit fits a 1,000-task spec (10 phases, 50 journal entries, half
// the tasks completed) to the default budget (25,000 tokens: summary or
// reference_only) and to a budget it fits at partial fidelity.
func BenchmarkFit(b *testing.B) {
	doc := bigDoc(b, 10, 100, 50)
	full := tokensOf(Answer{Spec: doc})
	for _, budget := range []int{25_000, full * 9 / 10} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			for b.Loop() {
				if _, err := Fit(doc, budget, testHasher(doc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
