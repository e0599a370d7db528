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

func isCJKSentenceEnd(r rune) bool { return r == '。' || r == '！' || r == '？' }

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
		if isCJKSentenceEnd(r[p-1]) {
			return sentenceBoundary
		}
		if r[p-1] == '、' || r[p-1] == '，' || r[p-1] == '；' {
			return clauseBoundary
		}
		return noBoundary
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
		lo := pos + chunkMin
		hi := pos + chunkMax
		if hi > end-chunkMin {
			hi = end - chunkMin
		}
		cut := bestCut(r, pos, lo, hi, start, end)
		out = append(out, Span{Start: pos, End: cut})
		pos = nextStart(r, cut)
	}
	if pos < end {
		out = append(out, Span{Start: pos, End: end})
	}
	return out
}

// bestCut chooses a cut position in [lo, hi] for a piece starting at pos.
func bestCut(r []rune, pos, lo, hi, start, end int) int {
	target := pos + chunkTarget
	var best [sentenceBoundary + 1]int // best[k]: cut of kind >= k closest to target; 0 = none
	for p := lo; p <= hi; p++ {
		k := boundaryAt(r, p, start, end)
		for ; k > noBoundary; k-- {
			if b := best[k]; b == 0 || abs(p-target) <= abs(b-target) {
				best[k] = p
			}
		}
	}
	for k := sentenceBoundary; k > noBoundary; k-- {
		if best[k] != 0 && best[k]-pos >= chunkAccept {
			return best[k]
		}
	}
	for k := sentenceBoundary; k > noBoundary; k-- {
		if best[k] != 0 {
			return best[k]
		}
	}
	p := target
	if p > hi {
		p = hi
	}
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
