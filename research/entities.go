package research

import (
	"html"
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
	last := 0
	for i >= 0 {
		j := i + 1
		for j < len(s) && isReferenceByte(s[j]) {
			j++
		}
		out = append(out, s[last:i]...)
		n := len(out)
		out = d.appendDecoded(out, s[i:j])
		if string(out[n:]) != s[i:j] && (!isASCII(string(out[n:])) || j < len(s) && s[j] >= utf8.RuneSelf) {
			seams = true
		}
		last = j
		k := strings.IndexByte(s[j:], '&')
		if k < 0 {
			break
		}
		i = j + k
	}
	out = append(out, s[last:]...)
	return string(out), seams
}

// isReferenceByte reports the bytes a character reference can be made of.
func isReferenceByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '&' || c == '#' || c == ';'
}

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

// matchReference examines the reference that may start at the '&' on top of
// rev (rev holds the decoded text right of the cursor in reversed byte
// order, so rev[len(rev)-2] is the byte after the '&'). It returns the number
// of bytes the reference occupies, '&' included, and its decoded, NFC
// normalised replacement.
func matchReference(rev []byte, win *[]byte) (consumed int, decoded string, ok bool) {
	at := func(i int) byte { // i-th byte after the '&', or 0 past the end
		j := len(rev) - 2 - i
		if j < 0 {
			return 0
		}
		return rev[j]
	}
	w := append((*win)[:0], '&')
	i := 0
	if at(0) == '#' {
		w = append(w, '#')
		i = 1
		hex := false
		if c := at(1); c == 'x' || c == 'X' {
			w = append(w, c)
			i, hex = 2, true
		}
		for {
			c := at(i)
			if '0' <= c && c <= '9' || hex && ('a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				w = append(w, c)
				i++
				continue
			}
			if c == ';' {
				w = append(w, c)
			}
			break
		}
	} else {
		for i < maxNamedWindow {
			c := at(i)
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				w = append(w, c)
				i++
				continue
			}
			if c == ';' {
				w = append(w, c)
			}
			break
		}
	}
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
	// u is the decoded reference followed by the window bytes it did not
	// consume (a name accepted without ';' as a prefix, e.g. "&ampx"). Only
	// single-rune decodings leave such a rest; the two-rune ones (such as
	// "&fjlig;" = "fj") always consume the whole window.
	_, size := utf8.DecodeRuneInString(u)
	rest := u[size:]
	if strings.HasSuffix(ws, rest) && len(ws)-len(rest) >= 2 {
		decoded, consumed = u[:size], len(ws)-len(rest)
	} else {
		decoded, consumed = u, len(ws)
	}
	if !isASCII(decoded) {
		decoded = norm.NFC.String(decoded)
	}
	return consumed, decoded, true
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
