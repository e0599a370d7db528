package core

import "unicode/utf8"

// AppendJSONString appends s as encoding/json encodes a string (json.Marshal
// of string(s)), byte for byte: ", \ and the control characters escaped
// (\b \f \n \r \t short, others \u00XX), <, > and & as \u003c \u003e
// \u0026, U+2028 and U+2029 as \u2028 and \u2029, invalid UTF-8 as
// \ufffd, everything else as it is. It is the one hand-written JSON string
// encoder: the stored nodes and headers (specs), the store's chunk lists,
// history and index rows (specs/specstore) and the answer over HTTP
// (core/mcptool) all write their strings with it.
func AppendJSONString[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		var esc string
		size := 1
		if c := s[i]; c < utf8.RuneSelf {
			esc = asciiEscape[c]
		} else {
			var r rune
			r, size = decodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				esc = `\ufffd`
			case r == '\u2028':
				esc = `\u2028`
			case r == '\u2029':
				esc = `\u2029`
			}
		}
		if esc != "" {
			dst = append(append(dst, s[start:i]...), esc...)
			start = i + size
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeRune is utf8.DecodeRune of s, a string or a byte slice, reading at
// most utf8.UTFMax bytes (the conversion copies only those).
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	return utf8.DecodeRuneInString(string(s[:min(len(s), utf8.UTFMax)]))
}

// asciiEscape is how encoding/json writes each ASCII byte in a string with
// HTML escaping on: "" for a byte written as it is.
var asciiEscape = func() (t [utf8.RuneSelf]string) {
	const hexDigits = "0123456789abcdef"
	for c := range utf8.RuneSelf {
		switch {
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			t[c] = `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&0xF])
		case c == '"' || c == '\\':
			t[c] = `\` + string(rune(c))
		}
	}
	for c, e := range map[byte]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`} {
		t[c] = e
	}
	return t
}()
