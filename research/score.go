package research

import (
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxQueryTerms bounds the distinct terms taken from a query.
	maxQueryTerms = 64
)

// Ranking methods reported in CreateInfo.Ranking.
const (
	RankingBM25     = "bm25"     // scores are BM25 against the query terms, normalised to 0–1
	RankingPosition = "position" // no usable term, or none matched: earlier scores higher
)

// stopWords are dropped from queries (English function words).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
		because been before being below between both but by can cannot could did do does doing down
		during each few for from further had has have having he her here hers herself him himself his
		how i if in into is it its itself just let me more most my myself no nor not now of off on once
		only or other our ours ourselves out over own same she should so some such than that the their
		theirs them themselves then there these they this those through to too under until up very was
		we were what when where which while who whom why will with would you your yours yourself
		yourselves also however whether within without via vs etc`) {
		m[w] = true
	}
	return m
}()

// isWordRune reports letters, digits and combining marks: a term is a
// maximal run of them.
func isWordRune(r rune) bool {
	if uint32(r) < utf8.RuneSelf {
		return alnumBytes[r]
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me)
}

// QueryTerms returns the distinct search terms of a query, in order: the
// query is NFC-normalised and lower-cased, split into runs of letters,
// digits and marks, and stop words and one-character terms are dropped. At
// most 64 terms are kept.
func QueryTerms(query string) []string {
	q := strings.ToLower(norm.NFC.String(strings.ToValidUTF8(query, "\uFFFD")))
	var terms []string
	seen := map[string]bool{}
	for _, t := range strings.FieldsFunc(q, func(r rune) bool { return !isWordRune(r) }) {
		if utf8.RuneCountInString(t) < 2 || stopWords[t] || seen[t] {
			continue
		}
		seen[t] = true
		terms = append(terms, t)
		if len(terms) == maxQueryTerms {
			break
		}
	}
	return terms
}

// tokens is the token stream of a text: the start (code point) of every
// token and the query term it is (-1 for none).
type tokens struct {
	start []int32
	term  []int16
}

// tokenize lower-cases r rune by rune (rune count is preserved) and records
// every token and which query term, if any, it equals.
func tokenize(r []rune, termIndex map[string]int) tokens {
	var t tokens
	buf := make([]byte, 0, 64) // the lower-cased token, when there are terms
	in := false
	var begin int
	for i, c := range r {
		if !isWordRune(c) {
			if in {
				t.add(begin, termOf(termIndex, buf, i-begin))
				buf, in = buf[:0], false
			}
			continue
		}
		if !in {
			in, begin = true, i
		}
		if len(termIndex) > 0 {
			buf = appendLower(buf, c)
		}
	}
	if in {
		t.add(begin, termOf(termIndex, buf, len(r)-begin))
	}
	return t
}

// add records a token starting at code point begin that is query term k
// (-1 for none).
func (t *tokens) add(begin int, k int16) {
	t.start = append(t.start, int32(begin))
	t.term = append(t.term, k)
}

// termOf is the index of the query term word (a token of n code points,
// lower-cased) is, or -1: terms have at least two code points.
func termOf(termIndex map[string]int, word []byte, n int) int16 {
	if n < 2 {
		return -1
	}
	if i, ok := termIndex[string(word)]; ok {
		return int16(i)
	}
	return -1
}

// appendLower appends c lower-cased (one rune for one rune) to buf.
func appendLower(buf []byte, c rune) []byte {
	if c >= utf8.RuneSelf {
		return utf8.AppendRune(buf, unicode.ToLower(c))
	}
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	return append(buf, byte(c))
}

// rank scores docs (sorted, non-overlapping spans) against nTerms query
// terms with BM25, normalised so the best doc scores 1. When there is no
// term or no doc contains one, it falls back to position: doc i of n
// scores (n-i)/n.
func rank(docs []Span, tok tokens, nTerms int) (scores []float64, method string) {
	if nTerms > 0 && len(docs) > 0 {
		scores = countTerms(docs, tok, nTerms).bm25()
		if scaleToBest(scores) {
			return scores, RankingBM25
		}
	}
	return positionScores(len(docs)), RankingPosition
}

// termCounts are the counts BM25 reads: tf[d*nTerms+k] is how often term k
// occurs in doc d, lens[d] how many tokens doc d has, total their sum.
type termCounts struct {
	tf     []int32
	lens   []int
	total  int
	nTerms int
}

// countTerms counts the tokens of tok (sorted by start) inside each of
// docs; tokens between docs are not counted.
func countTerms(docs []Span, tok tokens, nTerms int) termCounts {
	n := len(docs)
	c := termCounts{tf: make([]int32, n*nTerms), lens: make([]int, n), nTerms: nTerms}
	d := 0
	for i, s := range tok.start {
		for d < n && int(s) >= docs[d].End {
			d++
		}
		if d == n {
			break
		}
		if int(s) < docs[d].Start {
			continue
		}
		c.lens[d]++
		c.total++
		if k := tok.term[i]; k >= 0 {
			c.tf[d*nTerms+int(k)]++
		}
	}
	return c
}

// docFreq returns, per term, how many docs contain it.
func (c termCounts) docFreq() []int {
	df := make([]int, c.nTerms)
	for d := range c.lens {
		for k := range c.nTerms {
			if c.tf[d*c.nTerms+k] > 0 {
				df[k]++
			}
		}
	}
	return df
}

// bm25 returns each doc's BM25 score (k1 = bm25K1, b = bm25B; an average
// length of 0 counts as 1). There is at least one doc.
func (c termCounts) bm25() []float64 {
	n := len(c.lens)
	df := c.docFreq()
	avg := float64(c.total) / float64(n)
	if avg == 0 {
		avg = 1
	}
	scores := make([]float64, n)
	for d := range scores {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(c.lens[d])/avg)
		for k := range c.nTerms {
			f := float64(c.tf[d*c.nTerms+k])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (float64(n-df[k])+0.5)/(float64(df[k])+0.5))
			scores[d] += idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	return scores
}

// scaleToBest divides every score by the best one, so it scores 1; false
// (scores untouched) when no score is positive.
func scaleToBest(scores []float64) bool {
	best := 0.0
	for _, s := range scores {
		best = math.Max(best, s)
	}
	if !(best > 0) {
		return false
	}
	for d := range scores {
		scores[d] /= best
	}
	return true
}

// positionScores scores n docs by position: doc i scores (n-i)/n.
func positionScores(n int) []float64 {
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = float64(n-i) / float64(n)
	}
	return scores
}

// byScore returns doc indices ordered by score (highest first), earlier
// docs first among equal scores.
func byScore(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// roundScore rounds a score in [0, 1] to 4 decimals, staying in [0, 1].
func roundScore(s float64) float64 {
	return math.Min(1, math.Max(0, math.Round(s*1e4)/1e4))
}
