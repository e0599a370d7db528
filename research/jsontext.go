package research

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting, as encoding/json does.
const maxJSONDepth = 10000

// decodeJSON parses one JSON value (surrounded by optional white space) into
// the values encoding/json produces with UseNumber: map[string]any, []any,
// string, json.Number, bool and nil. Duplicate keys keep the last value and
// invalid UTF-8 in strings becomes U+FFFD, byte by byte, as in
// encoding/json; FuzzDecodeJSON checks the two agree. It exists because
// Validate spends most of its time decoding and this is several times
// faster than encoding/json on digest-sized payloads.
func decodeJSON(data []byte) (any, error) {
	// Strings without escapes are substrings of this one copy of the input.
	p := jsonParser{data: string(data)}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.errorf("data after the JSON value")
	}
	return v, nil
}

type jsonParser struct {
	data string
	i    int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %q looking for a value", c)
	}
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.i < len(word) || p.data[p.i:p.i+len(word)] != word {
		return p.errorf("invalid literal, expected %s", word)
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nesting deeper than %d", maxJSONDepth)
	}
	p.i++ // '{'
	m := map[string]any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.errorf("expected a string key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.errorf("expected ':' after object key")
		}
		p.i++
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errorf("expected ',' or '}' in object")
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.errorf("nesting deeper than %d", maxJSONDepth)
	}
	p.i++ // '['
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.errorf("expected ',' or ']' in array")
		}
	}
}

func (p *jsonParser) number() (any, error) {
	d, start := p.data, p.i
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return nil, p.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.i = i
			return nil, p.errorf("invalid number: no digit after '.'")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.i = i
			return nil, p.errorf("invalid number: no digit in exponent")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	p.i = i
	return json.Number(d[start:i]), nil
}

// plainEnd returns the end of the run of bytes from i that a JSON string
// holds as they are: no quote, backslash or control character (UTF-8 is
// checked separately). It tests eight bytes at a time: the lowest flagged
// byte of the classic "has zero byte" / "has byte less than" bit tricks is
// always a true hit.
func plainEnd(d string, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for i+8 <= len(d) {
		w := uint64(d[i]) | uint64(d[i+1])<<8 | uint64(d[i+2])<<16 | uint64(d[i+3])<<24 |
			uint64(d[i+4])<<32 | uint64(d[i+5])<<40 | uint64(d[i+6])<<48 | uint64(d[i+7])<<56
		q := w ^ ('"' * ones)
		b := w ^ ('\\' * ones)
		mask := (w - 0x20*ones) &^ w & highs // bytes < 0x20
		mask |= (q - ones) &^ q & highs      // bytes == '"'
		mask |= (b - ones) &^ b & highs      // bytes == '\\'
		if mask != 0 {
			return i + bits.TrailingZeros64(mask)/8
		}
		i += 8
	}
	for i < len(d) {
		if c := d[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
		i++
	}
	return i
}

// str parses a string at p.i (which is '"').
func (p *jsonParser) str() (string, error) {
	d := p.data
	start := p.i + 1
	i := plainEnd(d, start)
	if i < len(d) && d[i] == '"' && utf8.ValidString(d[start:i]) {
		p.i = i + 1
		return d[start:i], nil // no escape, valid UTF-8: a substring
	}
	// Decode escapes and replace invalid UTF-8 into a builder sized for the
	// raw string (decoding never makes it longer except for invalid bytes,
	// which grow by 2 each).
	var b strings.Builder
	b.Grow(rawStringEnd(d, i) - start)
	appendRun(&b, d[start:i])
	for {
		if i >= len(d) {
			p.i = i
			return "", p.errorf("unterminated string")
		}
		switch c := d[i]; {
		case c == '"':
			p.i = i + 1
			return b.String(), nil
		case c < 0x20:
			p.i = i
			return "", p.errorf("control character in string")
		}
		// A backslash.
		i++
		if i >= len(d) {
			p.i = i
			return "", p.errorf("unterminated escape")
		}
		switch e := d[i]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
			i++
		case 'b':
			b.WriteByte('\b')
			i++
		case 'f':
			b.WriteByte('\f')
			i++
		case 'n':
			b.WriteByte('\n')
			i++
		case 'r':
			b.WriteByte('\r')
			i++
		case 't':
			b.WriteByte('\t')
			i++
		case 'u':
			r, ok := hex4(d, i+1)
			if !ok {
				p.i = i
				return "", p.errorf("invalid \\u escape")
			}
			i += 5
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(0), false
				if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					r2, ok2 = hex4(d, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default:
			p.i = i
			return "", p.errorf("invalid escape %q", e)
		}
		j := plainEnd(d, i)
		appendRun(&b, d[i:j])
		i = j
	}
}

// rawStringEnd returns the offset of the quote that closes the string whose
// body continues at i (or len(d)), skipping escaped characters.
func rawStringEnd(d string, i int) int {
	for {
		i = plainEnd(d, i)
		if i >= len(d) || d[i] != '\\' {
			return i
		}
		i += 2
	}
}

// appendRun appends a run of unescaped string bytes, each byte of an
// invalid UTF-8 sequence becoming U+FFFD (the run ends before an ASCII
// byte, so it never cuts a valid sequence).
func appendRun(b *strings.Builder, run string) {
	if utf8.ValidString(run) {
		b.WriteString(run)
		return
	}
	for k := 0; k < len(run); {
		r, size := utf8.DecodeRuneInString(run[k:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(run[k : k+size])
		}
		k += size
	}
}

// hex4 reads the 4 hex digits of a \u escape at d[i:].
func hex4(d string, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for k := i; k < i+4; k++ {
		c := d[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
