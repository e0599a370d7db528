package specs

import (
	"math/rand/v2"
	"testing"
)

// singleNumberRef is singleNumber as it was: idNumbers with one number.
func singleNumberRef(id, prefix string) (int, bool) {
	if nums, ok := idNumbers(id, prefix); ok && len(nums) == 1 {
		return nums[0], true
	}
	return 0, false
}

// TestSingleNumberMatchesIDNumbers: singleNumber answers what idNumbers
// of a single number does, on edge cases and on random ids made of the
// characters ids are made of.
func TestSingleNumberMatchesIDNumbers(t *testing.T) {
	ids := []string{"", "phase", "phase-", "phase-1", "phase-01", "phase-+1", "phase--1", "phase-1-", "phase-1-2",
		"phase-x", "phasex-1", "phase1", "Phase-1", "phase-99999999999999999999", "phase- 1", "phase-1 ", "req-3", "-1", "phase-0"}
	chars := []byte("phasereq-0123456789+ x")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := []byte("phase-")
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b)+1)]
		}
		for range r.IntN(6) {
			b = append(b, chars[r.IntN(len(chars))])
		}
		ids = append(ids, string(b))
	}
	for _, id := range ids {
		for _, prefix := range []string{"phase", "req", "ph", ""} {
			gn, gok := singleNumber(id, prefix)
			wn, wok := singleNumberRef(id, prefix)
			if gn != wn || gok != wok {
				t.Fatalf("singleNumber(%q, %q) = %d, %v; idNumbers gives %d, %v", id, prefix, gn, gok, wn, wok)
			}
		}
	}
}
