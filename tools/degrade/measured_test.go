package degrade

import (
	"testing"

	"github.com/specd/specd/core"
)

// TestFitMeasuredCountsTheWholeAnswer: the answer measured with what a
// degraded answer carries besides the data (here 40 tokens per archive
// hash and 10 per dropped id) fits the budget, at the highest level that
// does; reference_only may go without its archive hashes; when nothing
// fits, ok is false.
func TestFitMeasuredCountsTheWholeAnswer(t *testing.T) {
	doc := bigDoc(t, 4, 6, 30)
	hash := testHasher(doc)
	measure := func(b Result) int { return b.Tokens + 10*len(b.Dropped) + 40*len(b.Archive) }
	full, err := Fit(doc, 1<<30, hash)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Fit(doc, 1, hash)
	if err != nil || ref.Fidelity != core.FidelityReferenceOnly {
		t.Fatalf("Fit(1) = %s, %v", ref.Fidelity, err)
	}
	// pushed: a budget the data alone fits, but not with its meta.
	pushed := 0
	for b := full.Tokens - 1; b > 0 && pushed == 0; b -= 50 {
		if alone, _ := Fit(doc, b, hash); alone.Tokens <= b && measure(alone) > b {
			pushed = b
		}
	}
	if pushed == 0 {
		t.Fatal("no budget where the meta pushes the answer over")
	}
	refBare := ref
	refBare.Archive = nil
	tests := []struct {
		name        string
		budget      int
		ok          bool
		fidelity    string
		noArchive   bool
		belowDataFn bool // less data than Fit alone gives within the budget
	}{
		{"everything fits", full.Tokens + 10, true, core.FidelityFull, false, false},
		{"meta pushes the data down", pushed, true, "", false, true},
		{"reference_only without its archive hashes", measure(refBare), true, core.FidelityReferenceOnly, true, false},
		{"nothing fits", measure(refBare) - 1, false, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var last Result
			got, ok, err := FitMeasured(doc, tt.budget, tt.budget, hash, func(b Result) int {
				calls++
				last = b
				return measure(b)
			})
			if err != nil || ok != tt.ok {
				t.Fatalf("ok %v, %v; want ok %v", ok, err, tt.ok)
			}
			if !ok {
				return
			}
			if m := measure(got); m > tt.budget {
				t.Fatalf("answer measures %d tokens, budget %d", m, tt.budget)
			}
			if tt.fidelity != "" && got.Fidelity != tt.fidelity {
				t.Fatalf("fidelity %s, want %s", got.Fidelity, tt.fidelity)
			}
			if tt.noArchive != (got.Archive == nil) {
				t.Fatalf("archive %v, want omitted %v", got.Archive, tt.noArchive)
			}
			if calls > MaxFitRounds+1 || last.Fidelity != got.Fidelity || len(last.Archive) != len(got.Archive) {
				t.Fatalf("%d measure calls; the last one was not on the result", calls)
			}
			if tt.belowDataFn { // Fit alone is over once measured (pushed)
				alone, _ := Fit(doc, tt.budget, hash)
				if got.Tokens >= alone.Tokens {
					t.Fatalf("got %d data tokens (%s); Fit alone gave %d (%s), which measures %d", got.Tokens, got.Fidelity, alone.Tokens, alone.Fidelity, measure(alone))
				}
			}
		})
	}
}
