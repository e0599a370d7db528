package fuzzy

import (
	"reflect"
	"testing"
)

func TestRank(t *testing.T) {
	actions := []string{"liveness", "readiness", "check", "list", "list-blocked", "complete", "complete-batch"}
	tests := []struct {
		name  string
		query string
		n     int
		want  []string
	}{
		{"typo", "livenes", 5, []string{"liveness"}},
		{"transposition", "chekc", 5, []string{"check"}},
		{"snake case of an existing name comes first", "list_blocked", 5, []string{"list-blocked", "list"}},
		{"every word of the query ranks above containment", "complete-batches", 2, []string{"complete-batch", "complete"}},
		{"snake case typo", "list_blokced", 1, []string{"list-blocked"}},
		{"prefix", "complet", 2, []string{"complete", "complete-batch"}},
		{"nothing close", "zzzzzzzz", 5, []string{}},
		{"limit", "l", 1, []string{"list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rank(tt.query, actions, tt.n)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Rank(%q) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestSimilarity(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "abc", 1},
		{"abc", "acb", 1 - 1.0/3},
		{"abc", "", 0},
		{"kitten", "sitting", 1 - 3.0/7},
	} {
		if got := Similarity(tt.a, tt.b); got-tt.want > 1e-9 || tt.want-got > 1e-9 {
			t.Errorf("Similarity(%q,%q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestRankWordsAndNormalisedIDs: the rankings agents rely on — the candidate that
// holds every word of the query ranks above one the query merely contains,
// and an id equal to the query after '_'→'-' comes first instead of being
// dropped (which offered the agent a sibling).
func TestRankWordsAndNormalisedIDs(t *testing.T) {
	env := []string{"detect", "detect-test-runner", "verify-toolchain", "verify-env", "get-config", "init", "setup"}
	if got := Rank("detect-runner", env, 2); !reflect.DeepEqual(got, []string{"detect-test-runner", "detect"}) {
		t.Errorf("detect-runner: %q", got)
	}
	if got := Rank("phase_1", []string{"phase-2", "phase-1", "phase-10"}, 3); len(got) == 0 || got[0] != "phase-1" {
		t.Errorf("phase_1: %q, want phase-1 first", got)
	}
	if got := Rank("Task_1_1", []string{"task-1-2", "task-1-1"}, 2); len(got) == 0 || got[0] != "task-1-1" {
		t.Errorf("Task_1_1: %q, want task-1-1 first", got)
	}
}

func TestRankNeverReturnsExactMatchAndCapsAtN(t *testing.T) {
	cands := []string{"task-1-1", "task-1-2", "task-1-3", "task-1-4", "task-1-5", "task-1-6", "task-1-10"}
	got := Rank("task-1-1", cands, 5)
	if len(got) != 5 {
		t.Fatalf("got %d matches, want 5: %q", len(got), got)
	}
	for _, g := range got {
		if g == "task-1-1" {
			t.Fatalf("exact match returned: %q", got)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"pending", "pending", 0},
		{"complted", "completed", 1},  // insertion
		{"blokced", "blocked", 1},     // adjacent swap: Levenshtein says 2
		{"pnedign", "pending", 2},     // two swaps: Levenshtein says 4
		{"in_progress", "blocked", 9}, // only the o lines up
		{"ca", "abc", 3},              // OSA, not full Damerau (which says 2)
		{"größe", "grösse", 2},        // runes, not bytes
		{"Pending", "pending", 1},     // no normalisation
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestEmptyCandidateIsNoMatch: an empty name is contained in every query,
// which must not make it a 0.75 match for all of them.
func TestEmptyCandidateIsNoMatch(t *testing.T) {
	for _, q := range []string{"task", "spec-list", "a"} {
		if ms := Score(q, []string{""}); len(ms) != 0 {
			t.Errorf("Score(%q, [\"\"]) = %v, want no match", q, ms)
		}
	}
}
