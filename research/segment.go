package research

import "unicode"

// Chunking parameters, in code points.
const (
	chunkTarget = 400
	chunkMax    = MaxSnippetChars // 500: a chunk must fit in a snippet
	chunkMin    = 50
	// chunkAccept: a boundary of a preferred kind is taken when it leaves a
	// piece at least this long; otherwise a lesser kind nearer the target wins.
	chunkAccept = chunkTarget / 2
)

// boundary kinds, weakest first. A stronger boundary is also every weaker one.
const (
	noBoundary = iota
	wordBoundary
	clauseBoundary
	sentenceBoundary
)

// Canonical text has single spaces as its only white space inside a page,
// so a "paragraph" is a page: pages are the only paragraph boundaries the
// splitter sees (CanonicalizePages joins them with "\n\n"; a single text is
// one paragraph). Within a page the splitter prefers sentence, then clause,
// then word boundaries, and cuts inside a word only when a stretch of
// chunkMax characters has no space (e.g. CJK text without punctuation).

func isSentenceEnd(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '‽', '。', '！', '？', '؟', '।', '॥':
		return true
	}
	return false
}

func isClauseEnd(r rune) bool {
	switch r {
	case ',', ';', ':', '—', '–', '、', '，', '；', '：':
		return true
	}
	return false
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '”', '’', '»', '」', '』', '›':
		return true
	}
	return false
}

// boundaryAt classifies the cut before position p of the page r[start:end]
// (start < p < end). A cut at a space drops the space: the next piece starts
// at p+1.
func boundaryAt(r []rune, p, start, end int) int {
	if r[p] != ' ' {
		return boundaryAfter(r[p-1])
	}
	q := p - 1
	for q > start && isCloser(r[q]) {
		q--
	}
	switch {
	case isSentenceEnd(r[q]):
		if p+1 < end && unicode.IsLower(r[p+1]) {
			return clauseBoundary // "e.g. the", "etc. and"
		}
		return sentenceBoundary
	case isClauseEnd(r[p-1]):
		return clauseBoundary
	}
	return wordBoundary
}

// boundaryAfter classifies a cut with no space after prev: only CJK
// punctuation ends a sentence or a clause there.
func boundaryAfter(prev rune) int {
	switch prev {
	case '。', '！', '？':
		return sentenceBoundary
	case '、', '，', '；':
		return clauseBoundary
	}
	return noBoundary
}

// nextStart is where the piece after a cut at p begins.
func nextStart(r []rune, p int) int {
	if p < len(r) && r[p] == ' ' {
		return p + 1
	}
	return p
}

// isMark reports combining marks, which a hard cut must not separate from
// their base.
func isMark(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) || r == '\u200d'
}

// splitRange splits the page range r[start:end] into pieces of at most
// chunkMax code points, each (but a range shorter than chunkMin) at least
// chunkMin long, cut near chunkTarget at the strongest boundary available.
// Pieces never start with a space.
func splitRange(r []rune, start, end int, out []Span) []Span {
	pos := start
	for end-pos > chunkMax {
		lo, hi := pos+chunkMin, min(pos+chunkMax, end-chunkMin)
		cut := bestCut(r, pos, lo, hi, start, end)
		out = append(out, Span{Start: pos, End: cut})
		pos = nextStart(r, cut)
	}
	if pos < end {
		out = append(out, Span{Start: pos, End: end})
	}
	return out
}

// bestCut chooses a cut position in [lo, hi] for a piece starting at pos:
// the strongest boundary that leaves a piece of at least chunkAccept, else
// the strongest boundary at all, else a hard cut near the target.
func bestCut(r []rune, pos, lo, hi, start, end int) int {
	target := pos + chunkTarget
	best := closestCuts(r, lo, hi, target, start, end)
	if c := best.strongest(pos + chunkAccept); c != 0 {
		return c
	}
	if c := best.strongest(0); c != 0 {
		return c
	}
	return hardCut(r, min(target, hi), lo)
}

// cutTable holds, per boundary kind k, the cut of kind >= k closest to the
// target (0: none).
type cutTable [sentenceBoundary + 1]int

// closestCuts finds, per boundary kind, the cut in [lo, hi] closest to
// target (the later one of two as close).
func closestCuts(r []rune, lo, hi, target, start, end int) cutTable {
	var best cutTable
	for p := lo; p <= hi; p++ {
		for k := boundaryAt(r, p, start, end); k > noBoundary; k-- {
			if b := best[k]; b == 0 || abs(p-target) <= abs(b-target) {
				best[k] = p
			}
		}
	}
	return best
}

// strongest is the cut of the strongest kind at or after atLeast, 0 when
// there is none.
func (t cutTable) strongest(atLeast int) int {
	for k := sentenceBoundary; k > noBoundary; k-- {
		if t[k] != 0 && t[k] >= atLeast {
			return t[k]
		}
	}
	return 0
}

// hardCut cuts inside a word at p, moved back (not below lo) so that no
// combining mark is separated from its base.
func hardCut(r []rune, p, lo int) int {
	for p > lo && isMark(r[p]) {
		p--
	}
	return p
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// sentences splits the page range r[start:end] at sentence boundaries;
// sentences longer than MaxKeyPointChars are split further by splitRange.
func sentences(r []rune, start, end int, out []Span) []Span {
	s := start
	for p := start + 1; p < end; p++ {
		if boundaryAt(r, p, start, end) == sentenceBoundary {
			out = splitSentence(r, s, p, out)
			s = nextStart(r, p)
			p = s
		}
	}
	if s < end {
		out = splitSentence(r, s, end, out)
	}
	return out
}

func splitSentence(r []rune, s, e int, out []Span) []Span {
	if e-s <= MaxKeyPointChars {
		return append(out, Span{Start: s, End: e})
	}
	return splitRange(r, s, e, out)
}
