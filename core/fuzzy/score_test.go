package fuzzy

import (
	"reflect"
	"testing"
)

// TestScoreFloors pins the scores Score gives: the similarity raised to
// 0.85 for a candidate holding every word of the query, 0.8 for one
// starting with it, 0.75 for one containing it or contained in it, 1 for
// one equal after normalisation; duplicates and the query itself left out;
// best first, then by name.
func TestScoreFloors(t *testing.T) {
	cands := []string{"detect-test-runner", "detect", "runner-detect", "task-1-10", "task-10", "phase-1", "phase_1", "Phase_1", "specs", "aspect", "spec", "blocked", "locked", "detect", "x"}
	for _, c := range []struct {
		query string
		want  []Match
	}{
		{"detect-runner", []Match{{"detect-test-runner", 0.85}, {"runner-detect", 0.85}, {"detect", 0.75}}},
		{"task-1", []Match{{"task-10", 0.8571428571428572}, {"task-1-10", 0.85}, {"Phase_1", 0.5714285714285714}, {"phase-1", 0.5714285714285714}, {"phase_1", 0.5714285714285714}}},
		{"Phase_1", []Match{{"phase-1", 1}, {"phase_1", 1}, {"task-10", 0.4285714285714286}}},
		{"spec", []Match{{"specs", 0.8}, {"aspect", 0.75}}},
		{"blokced", []Match{{"blocked", 0.8571428571428572}, {"locked", 0.7142857142857143}}},
		{"", nil},
	} {
		if got := Score(c.query, cands); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Score(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}
