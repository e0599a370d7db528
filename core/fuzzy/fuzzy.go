// Package fuzzy ranks candidate names by similarity to a mistyped one, for
// the recovery.fuzzy_matches of error envelopes.
//
// The measure: both strings are lower-cased and '_' is read as '-'. The score
// is 1 − d/max(len(a), len(b)), where d is the optimal-string-alignment
// (Damerau–Levenshtein with adjacent transpositions) distance in runes.
// Containment and shared words rank above raw edit distance: a candidate
// that contains the query, or is contained by it, scores at least 0.75; one
// that starts with the query at least 0.8 (so "task-1" finds "task-1-10");
// one that holds every word of a query of two or more words ('-'-separated)
// at least 0.85 (so "detect-runner" finds "detect-test-runner" before
// "detect"). A candidate equal to the query after normalisation but spelt
// differently ("phase_1" for "phase-1") scores 1 and comes first: it is
// almost certainly what was meant. Candidates scoring below 0.4 are
// dropped; the rest are ordered by score, then by name, and at most n are
// returned.
//
// The distance is hand-written on purpose. github.com/agnivade/levenshtein
// v1.2.2 is about 4x faster (13-16 µs against 55 µs for 36 names,
// BenchmarkDistance) but measures plain Levenshtein, where a swap of two
// adjacent letters costs 2 ("blokced"/"blocked"); it differed from this
// distance on 1,076 of 200,000 random pairs. github.com/hbollon/go-edlib
// v1.7.0's OSA distance agreed on all 200,000 pairs but was no faster
// (30-48 µs, more allocations). Ranking runs once per refused call, so
// neither gain is worth a dependency.
package fuzzy

import (
	"cmp"
	"slices"
	"strings"
)

// MinScore is the lowest similarity a match may have.
const MinScore = 0.4

// Match is one ranked candidate.
type Match struct {
	Name  string
	Score float64
}

// Rank returns up to n candidates most similar to query (see the package
// comment for the measure). A candidate identical to query is never
// returned (the caller is asking because the query did not match); one
// equal to it after normalisation is returned first.
func Rank(query string, candidates []string, n int) []string {
	ms := Score(query, candidates)
	out := make([]string, 0, min(n, len(ms)))
	for _, m := range ms {
		if len(out) == n {
			break
		}
		out = append(out, m.Name)
	}
	return out
}

// Score returns every candidate scoring at least MinScore, best first.
func Score(query string, candidates []string) []Match {
	q := normalise(query)
	qWords := strings.Split(q, "-")
	seen := make(map[string]bool, len(candidates))
	var ms []Match
	for _, c := range candidates {
		if seen[c] || c == query {
			continue
		}
		seen[c] = true
		if s := score(q, normalise(c), qWords); s >= MinScore {
			ms = append(ms, Match{Name: c, Score: s})
		}
	}
	slices.SortFunc(ms, func(a, b Match) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.Name, b.Name))
	})
	return ms
}

// score is how similar the normalised candidate nc is to the normalised
// query q (split into qWords): their Similarity, 1 when they are equal,
// and at least 0.85 when nc holds every word of a query of several words,
// 0.8 when nc starts with q, 0.75 when one contains the other. An empty
// query or candidate gets the plain Similarity (an empty name is in every
// query, and is no match for it).
func score(q, nc string, qWords []string) float64 {
	s := Similarity(q, nc)
	switch {
	case q == "" || nc == "":
	case nc == q:
		s = 1
	case len(qWords) > 1 && holdsWords(nc, qWords):
		s = max(s, 0.85)
	case strings.HasPrefix(nc, q):
		s = max(s, 0.8)
	case strings.Contains(nc, q) || strings.Contains(q, nc):
		s = max(s, 0.75)
	}
	return s
}

// holdsWords reports whether every one of words is a '-'-separated word of
// name.
func holdsWords(name string, words []string) bool {
	have := strings.Split(name, "-")
	for _, w := range words {
		if w == "" || !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func normalise(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
}

// Similarity is 1 − OSA distance / longer length, in [0, 1].
func Similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	longest := max(len(ra), len(rb))
	if longest == 0 {
		return 1
	}
	return 1 - float64(osa(ra, rb))/float64(longest)
}

// Distance is the optimal-string-alignment distance between a and b in
// runes: insertions, deletions, substitutions and transpositions of two
// adjacent runes each cost 1. It is never more than the Levenshtein
// distance. No normalisation is applied.
func Distance(a, b string) int { return osa([]rune(a), []rune(b)) }

// osa is the optimal string alignment distance.
func osa(a, b []rune) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
