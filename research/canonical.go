package research

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// PageSeparator joins canonical pages in a paged canonical text. A canonical
// page never contains a newline (whitespace is collapsed to single spaces),
// so the pages of a canonical text can always be recovered by splitting it
// on this separator.
const PageSeparator = "\n\n"

// Span is a half-open range [Start, End) of code points in a canonical text.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Len returns the number of code points in the span.
func (s Span) Len() int { return s.End - s.Start }

// Canonicalize returns the canonical form of one page of source text. The
// steps, in this order, are:
//
//  0. invalid UTF-8 sequences become U+FFFD;
//  1. Unicode NFC;
//  2. HTML character references are decoded to a fixed point (see below);
//  3. every tag — '<' followed by an ASCII letter, '/', '!' or '?', up to the
//     next '>' — is replaced by one space;
//  4. Unicode NFC again (skipped when decoding can not have left text
//     outside NFC: every decoded piece was ASCII and followed by ASCII);
//  5. every run of white space (unicode.IsSpace) becomes one U+0020 space;
//  6. leading and trailing space is trimmed.
//
// The order is what makes Canonicalize idempotent, which the fuzz test
// FuzzCanonicalize checks on arbitrary input:
//
//   - Entities are decoded before tags are stripped, so an entity-encoded
//     tag such as "&lt;b&gt;" is decoded to "<b>" and then removed. In the
//     other order the output would still hold "<b>" and a second pass would
//     remove it.
//   - Decoding runs to a fixed point (the output contains no reference that
//     html.UnescapeString would decode): "&amp;lt;" becomes "<", not "&lt;",
//     because a second pass would decode "&lt;". References are resolved
//     right to left, each decoded by html.UnescapeString and then normalised
//     (NFC) on its own, so the decode costs linear time even for adversarial
//     nesting such as "&amp;amp;amp;…".
//   - NFC runs before decoding because NFC maps a few characters to ASCII
//     (U+212A KELVIN SIGN to "K", U+037E GREEK QUESTION MARK to ";"), which
//     could otherwise complete a reference such as "&Kappa;" after decoding.
//     Decoded characters are normalised for the same reason. The second NFC
//     only composes and reorders non-ASCII marks, which can neither create
//     a reference nor a tag.
//   - Tag stripping replaces a tag by a space, which can neither join the
//     pieces of a reference nor those of another tag, and its output holds no
//     '<' that starts a tag closed later on.
//
// A consequence of decoding before stripping is that text which spells out
// angle brackets as entities ("if a &lt;b and c&gt; d") loses the part
// between them, exactly as a literal tag would.
func Canonicalize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = norm.NFC.String(s)
	s, seams := decodeEntities(s)
	s = stripTags(s)
	if seams {
		s = norm.NFC.String(s)
	}
	return collapseSpace(s)
}

// CanonicalizePages canonicalises each page with Canonicalize and joins them
// with PageSeparator. pageSpans[i] is the [start, end) code-point range of
// page i (0-based here; locators number pages from 1) in text. Empty pages
// are kept, so page numbers stay aligned with the input.
func CanonicalizePages(pages []string) (text string, pageSpans []Span) {
	pageSpans = make([]Span, 0, len(pages))
	var b strings.Builder
	pos := 0
	for i, p := range pages {
		if i > 0 {
			b.WriteString(PageSeparator)
			pos += 2
		}
		c := Canonicalize(p)
		n := utf8.RuneCountInString(c)
		b.WriteString(c)
		pageSpans = append(pageSpans, Span{Start: pos, End: pos + n})
		pos += n
	}
	return b.String(), pageSpans
}

// PageSpans recovers the page spans of a canonical text by splitting it on
// PageSeparator. A text without separator is one page; the empty text is one
// empty page.
func PageSpans(canonical string) []Span {
	var spans []Span
	cp, start := 0, 0
	rest := canonical
	for {
		i := strings.Index(rest, PageSeparator)
		if i < 0 {
			cp += utf8.RuneCountInString(rest)
			return append(spans, Span{Start: start, End: cp})
		}
		cp += utf8.RuneCountInString(rest[:i])
		spans = append(spans, Span{Start: start, End: cp})
		cp += 2
		start = cp
		rest = rest[i+len(PageSeparator):]
	}
}

// SourceTextHash returns "sha256:" followed by the 64 lowercase hex digits of
// the SHA-256 of the canonical text's UTF-8 bytes.
func SourceTextHash(canonical string) string {
	h := sha256.New()
	var buf [32 << 10]byte
	for len(canonical) > 0 {
		n := copy(buf[:], canonical)
		h.Write(buf[:n])
		canonical = canonical[n:]
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// QueryHash returns the first 8 lowercase hex digits of the SHA-256 of the
// query's UTF-8 bytes. The query is hashed as given, without normalisation.
func QueryHash(query string) string {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:4])
}

// stripTags replaces every tag with one space. A tag starts at a '<' that is
// followed by an ASCII letter, '/', '!' or '?' and ends at the next '>'; a
// '<' with no '>' after it is text, and so is every later one.
func stripTags(s string) string {
	i := tagStart(s, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i >= 0 {
		j := strings.IndexByte(s[i+1:], '>')
		if j < 0 {
			break
		}
		b.WriteString(s[last:i])
		b.WriteByte(' ')
		last = i + 1 + j + 1
		i = tagStart(s, last)
	}
	b.WriteString(s[last:])
	return b.String()
}

// tagStart returns the byte index of the first '<' at or after from that is
// followed by a tag-name character, or -1.
func tagStart(s string, from int) int {
	for from < len(s) {
		k := strings.IndexByte(s[from:], '<')
		if k < 0 {
			return -1
		}
		i := from + k
		if i+1 < len(s) && tagNameStart[s[i+1]] {
			return i
		}
		from = i + 1
	}
	return -1
}

// tagNameStart holds the bytes that make a '<' start a tag.
var tagNameStart = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz/!?")

// asciiSpace marks the ASCII bytes unicode.IsSpace accepts.
var asciiSpace = [128]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// collapseSpace replaces every run of white space with one space and trims
// the ends. It returns s itself when s is already collapsed. Text between
// changes is copied in bulk: a single ' ' between two non-spaces is kept
// as it is.
func collapseSpace(s string) string {
	var out []byte // nil until the first change
	vs := 0        // start of the verbatim span not yet copied
	for i := 0; i < len(s); {
		size, space := spaceAt(s, i)
		if !space {
			i += size
			continue
		}
		j := spaceRunEnd(s, i)
		if isInnerSpace(s, i, j, i > vs || len(out) > 0) {
			i = j // a single space inside the text: keep it verbatim
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		out = append(out, s[vs:i]...)
		if len(out) > 0 && j < len(s) {
			out = append(out, ' ')
		}
		vs, i = j, j
	}
	if out == nil {
		return s
	}
	out = append(out, s[vs:]...)
	return string(out)
}

// isInnerSpace reports whether the white space run s[i:j] is a single ' '
// with text before it (textBefore) and after it: collapsing keeps it as it
// is.
func isInnerSpace(s string, i, j int, textBefore bool) bool {
	return textBefore && s[i] == ' ' && j == i+1 && j < len(s)
}

// spaceAt returns the size of the code point at byte i of s and whether it
// is white space (unicode.IsSpace).
func spaceAt(s string, i int) (size int, space bool) {
	if c := s[i]; c < utf8.RuneSelf {
		return 1, asciiSpace[c]
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return size, unicode.IsSpace(r)
}

// spaceRunEnd returns the end of the run of white space starting at i.
func spaceRunEnd(s string, i int) int {
	for i < len(s) {
		size, space := spaceAt(s, i)
		if !space {
			return i
		}
		i += size
	}
	return i
}
