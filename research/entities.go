package research

import (
	"html"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxNamedWindow bounds the run of name characters examined after '&'. The
// longest HTML5 entity name has 32 characters including ';' and names
// accepted without ';' have at most 6, so html.UnescapeString decides a run
// longer than this exactly as it decides its first maxNamedWindow bytes.
const maxNamedWindow = 64

// decodeEntities decodes HTML character references in s until none is left,
// that is until html.UnescapeString would return its input unchanged.
//
// A reference only ever spans bytes of [&#;0-9A-Za-z], and decoding never
// consumes any other byte, so the text splits into independent segments at
// every other byte: only a segment that holds an '&' needs work, from that
// '&' to the segment's end; everything else is copied as is.
//
// Within a segment decoding runs right to left: the text to the right of the
// cursor is always fully decoded. Whether a reference starts at an '&'
// depends only on what follows it, so when an '&' is prepended the reference
// (if any) is decoded with html.UnescapeString on a short window, normalised
// to NFC and pushed back in front of the cursor, where it is examined again
// (this is what turns "&amp;lt;" into "<"). Every decode removes at least one
// code point, so the work is linear in len(s) apart from a bounded window
// per '&'.
//
// seams reports whether the result may need NFC again: some decoded text
// is not ASCII or is followed by a non-ASCII byte (a combining mark could
// follow an ASCII letter). Stripping tags and collapsing white space keep
// NFC, so when seams is false the text stays NFC up to the end.
//
// Precondition: s is valid UTF-8 in NFC.
func decodeEntities(s string) (decoded string, seams bool) {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s, false
	}
	var d segmentDecoder
	out := make([]byte, 0, len(s))
	for i >= 0 {
		out = append(out, s[:i]...)
		s = s[i:]
		j := referenceRun(s)
		n := len(out)
		out = d.appendDecoded(out, s[:j])
		seams = seams || mayBreakNFC(s[:j], out[n:], s[j:])
		s = s[j:]
		i = strings.IndexByte(s, '&')
	}
	out = append(out, s...)
	return string(out), seams
}

// referenceRun is the length of the run of reference bytes s starts with.
func referenceRun(s string) int {
	n := 0
	for n < len(s) && isReferenceByte(s[n]) {
		n++
	}
	return n
}

// mayBreakNFC reports whether the segment seg, decoded to dec and followed
// by rest, may leave text that is not NFC: it was decoded and the result
// is not ASCII, or a non-ASCII byte follows it (a combining mark could
// follow an ASCII letter).
func mayBreakNFC(seg string, dec []byte, rest string) bool {
	if string(dec) == seg {
		return false
	}
	return !isASCII(string(dec)) || rest != "" && rest[0] >= utf8.RuneSelf
}

// Byte classes of character references.
const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

var (
	alnumBytes     = byteSet(alnum)
	digitBytes     = byteSet("0123456789")
	hexDigitBytes  = byteSet("0123456789ABCDEFabcdef")
	referenceBytes = byteSet(alnum + "&#;")
)

// byteSet is the set of the bytes of chars.
func byteSet(chars string) *[256]bool {
	var set [256]bool
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return &set
}

// isReferenceByte reports the bytes a character reference can be made of.
func isReferenceByte(c byte) bool { return referenceBytes[c] }

// segmentDecoder holds the buffers of the right-to-left decoder.
type segmentDecoder struct {
	work []byte // a stack: bytes still to prepend, popped from the end
	rev  []byte // the decoded text right of the cursor, in reversed byte order
	win  []byte
}

// appendDecoded appends the fixed-point decoding of seg to out.
func (d *segmentDecoder) appendDecoded(out []byte, seg string) []byte {
	d.work = append(d.work[:0], seg...)
	d.rev = d.rev[:0]
	for len(d.work) > 0 {
		b := d.work[len(d.work)-1]
		d.work = d.work[:len(d.work)-1]
		d.rev = append(d.rev, b)
		if b != '&' {
			continue
		}
		consumed, decoded, ok := matchReference(d.rev, &d.win)
		if !ok {
			continue
		}
		d.rev = d.rev[:len(d.rev)-consumed]
		d.work = append(d.work, decoded...)
	}
	for i := len(d.rev) - 1; i >= 0; i-- {
		out = append(out, d.rev[i])
	}
	return out
}

// afterAmp is the reversed decoded text of segmentDecoder.rev seen from
// the '&' on its top.
type afterAmp []byte

// at is the i-th byte after the '&', or 0 past the end.
func (r afterAmp) at(i int) byte {
	j := len(r) - 2 - i
	if j < 0 {
		return 0
	}
	return r[j]
}

// referenceWindow appends to w (which holds the '&') the bytes after the
// '&' that html.UnescapeString may read as one reference: '#', an optional
// 'x' or 'X' and the (hex) digits of a numeric reference, or at most
// maxNamedWindow name characters, each followed by a ';' when there is one.
func referenceWindow(r afterAmp, w []byte) []byte {
	i, limit, accept := 0, maxNamedWindow, alnumBytes
	if r.at(0) == '#' {
		w = append(w, '#')
		i, limit, accept = 1, math.MaxInt, digitBytes
		if c := r.at(1); c == 'x' || c == 'X' {
			w = append(w, c)
			i, accept = 2, hexDigitBytes
		}
	}
	for ; i < limit && accept[r.at(i)]; i++ {
		w = append(w, r.at(i))
	}
	if i < limit && r.at(i) == ';' {
		w = append(w, ';')
	}
	return w
}

// matchReference examines the reference that may start at the '&' on top of
// rev (rev holds the decoded text right of the cursor in reversed byte
// order, so rev[len(rev)-2] is the byte after the '&'). It returns the number
// of bytes the reference occupies, '&' included, and its decoded, NFC
// normalised replacement.
func matchReference(rev []byte, win *[]byte) (consumed int, decoded string, ok bool) {
	w := referenceWindow(rev, append((*win)[:0], '&'))
	*win = w
	if len(w) < 2 {
		return 0, "", false
	}
	if c, ok := commonReferences[string(w)]; ok {
		return len(w), c, true
	}
	ws := string(w)
	u := html.UnescapeString(ws)
	if u == ws {
		return 0, "", false
	}
	consumed, decoded = splitDecoded(ws, u)
	if !isASCII(decoded) {
		decoded = norm.NFC.String(decoded)
	}
	return consumed, decoded, true
}

// splitDecoded splits u, html.UnescapeString of the window ws, into the
// decoded reference and the number of window bytes it consumed. u is the
// decoded reference followed by the window bytes it did not consume (a
// name accepted without ';' as a prefix, e.g. "&ampx"). Only single-rune
// decodings leave such a rest; the two-rune ones (such as "&fjlig;" =
// "fj") always consume the whole window.
func splitDecoded(ws, u string) (consumed int, decoded string) {
	_, size := utf8.DecodeRuneInString(u)
	rest := u[size:]
	if strings.HasSuffix(ws, rest) && len(ws)-len(rest) >= 2 {
		return len(ws) - len(rest), u[:size]
	}
	return len(ws), u
}

// commonReferences short-cuts the most frequent references (their decoding
// is what html.UnescapeString gives).
var commonReferences = map[string]string{
	"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#39;": "'", "&apos;": "'",
	"&nbsp;": "\u00a0", "&#160;": "\u00a0",
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
