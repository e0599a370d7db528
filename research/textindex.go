package research

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// indexStride is the number of code points between two recorded byte
// offsets in a TextIndex.
const indexStride = 128

// TextIndex is a canonical text prepared for code-point addressing. It is
// built once in O(len(text)) and then answers Slice in O(indexStride), so
// verifying many locators against a large text scans the text only once.
// A TextIndex is immutable and safe for concurrent use.
type TextIndex struct {
	text  string
	n     int   // code points
	ascii bool  // every byte is ASCII: code point i is byte i
	marks []int // marks[k] = byte offset of code point k*indexStride
	pages []Span

	hashOnce sync.Once
	hash     string
}

// NewTextIndex indexes a canonical text. pageSpans are the page spans as
// returned by CanonicalizePages; nil means "recover them from the text"
// (see PageSpans), which gives the same spans for any canonical text.
func NewTextIndex(canonical string, pageSpans []Span) *TextIndex {
	x := &TextIndex{text: canonical, ascii: true}
	for i := 0; i < len(canonical); i++ {
		if canonical[i] >= utf8.RuneSelf {
			x.ascii = false
			break
		}
	}
	if x.ascii {
		x.n = len(canonical)
	} else {
		x.marks = make([]int, 0, len(canonical)/indexStride+1)
		cp := 0
		for i := range canonical { // ranges over code points (invalid bytes count as one)
			if cp%indexStride == 0 {
				x.marks = append(x.marks, i)
			}
			cp++
		}
		x.n = cp
	}
	if pageSpans == nil {
		pageSpans = x.recoverPages()
	}
	x.pages = append([]Span(nil), pageSpans...)
	return x
}

// recoverPages is PageSpans using the index for the offsets.
func (x *TextIndex) recoverPages() []Span {
	if !strings.Contains(x.text, PageSeparator) {
		return []Span{{Start: 0, End: x.n}}
	}
	return PageSpans(x.text)
}

// Text returns the indexed text.
func (x *TextIndex) Text() string { return x.text }

// SourceHash returns SourceTextHash of the text, computed once.
func (x *TextIndex) SourceHash() string {
	x.hashOnce.Do(func() { x.hash = SourceTextHash(x.text) })
	return x.hash
}

// Len returns the length of the text in code points.
func (x *TextIndex) Len() int { return x.n }

// Pages returns a copy of the page spans (at least one page).
func (x *TextIndex) Pages() []Span { return append([]Span(nil), x.pages...) }

// byteOffset returns the byte offset of code point cp, 0 <= cp <= Len().
func (x *TextIndex) byteOffset(cp int) int {
	if x.ascii {
		return cp
	}
	if cp >= x.n {
		return len(x.text)
	}
	off := x.marks[cp/indexStride]
	for k := cp % indexStride; k > 0; k-- {
		_, size := utf8.DecodeRuneInString(x.text[off:])
		off += size
	}
	return off
}

// Slice returns the code points [start, end) of the text; ok is false when
// the range is not inside the text.
func (x *TextIndex) Slice(start, end int) (s string, ok bool) {
	if start < 0 || end < start || end > x.n {
		return "", false
	}
	b := x.byteOffset(start)
	if end == start {
		return "", true
	}
	// Walk from start when the end is close, otherwise jump through marks.
	var e int
	if end-start <= indexStride {
		e = b
		for k := end - start; k > 0; k-- {
			_, size := utf8.DecodeRuneInString(x.text[e:])
			e += size
		}
	} else {
		e = x.byteOffset(end)
	}
	return x.text[b:e], true
}
