package core

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// numberMark starts the string that stands for a JSON number literal a
// float64 cannot hold (1e309). A decoded JSON string can hold a NUL only if
// the client wrote \u0000 on purpose, so the mark does not collide with
// ordinary text.
const numberMark = "\x00specd:number:"

// MarkedNumber reports whether s is the stand-in MarkUnrepresentableNumbers
// wrote for a number literal, and returns that literal.
func MarkedNumber(s string) (literal string, ok bool) {
	if !strings.HasPrefix(s, numberMark) {
		return "", false
	}
	return s[len(numberMark):], true
}

// MarkUnrepresentableNumbers returns msg (one JSON text) with every number
// literal outside float64's range (1e309, -1e400) replaced by a JSON string
// that MarkedNumber recognises, so that decoding succeeds and the validator
// can answer INVALID_FORMAT naming the field and the literal, instead of the
// transport failing the whole message. Such a message could not be decoded
// before, so no valid message changes: when msg has no such literal (or is
// not JSON at all) msg itself is returned.
func MarkUnrepresentableNumbers(msg []byte) []byte {
	var out []byte // nil until a literal is replaced
	last := 0      // msg[last:] is not yet copied to out
	for i := 0; i < len(msg); {
		c := msg[i]
		switch {
		case c == '"':
			i = skipString(msg, i)
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(msg) && numberByte[msg[j]] {
				j++
			}
			if lit := msg[i:j]; unrepresentable(lit) {
				if out == nil {
					out = make([]byte, 0, len(msg)+32)
				}
				out = appendMarked(append(out, msg[last:i]...), lit)
				last = j
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return msg
	}
	return append(out, msg[last:]...)
}

// skipString returns the index after the JSON string starting at msg[i]
// (a quote), or len(msg) when it is not closed. A quote ends the string
// unless an odd run of backslashes precedes it.
func skipString(msg []byte, i int) int {
	for from := i + 1; ; {
		k := bytes.IndexByte(msg[from:], '"')
		if k < 0 {
			return len(msg)
		}
		q := from + k
		n := 0
		for msg[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		from = q + 1
	}
}

// numberByte marks the bytes a JSON number literal is made of.
var numberByte = [256]bool{
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'.': true, 'e': true, 'E': true, '+': true, '-': true,
}

// NumberBytes reports whether lit is made only of the bytes a JSON number
// literal is made of (digits, signs, '.', 'e', 'E'); it says nothing of
// their order.
func NumberBytes(lit []byte) bool {
	for _, c := range lit {
		if !numberByte[c] {
			return false
		}
	}
	return true
}

// appendMarked appends to out the JSON string that stands for the number
// literal lit (see MarkedNumber). lit holds only digits, signs, '.', 'e'
// and 'E', so it needs no escaping.
func appendMarked(out, lit []byte) []byte {
	out = append(out, `"\u0000`+numberMark[1:]...)
	out = append(out, lit...)
	return append(out, '"')
}

// unrepresentable reports whether lit is a number literal that parses but
// overflows float64. A literal without an exponent needs more than 308
// digits to overflow, so short ones are skipped cheaply.
func unrepresentable(lit []byte) bool {
	if len(lit) < 309 && !bytes.ContainsAny(lit, "eE") {
		return false
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	return err != nil && math.IsInf(f, 0)
}

// TopLevelMember finds the value of the last member of the JSON object msg
// whose name equals name case-insensitively (as encoding/json matches struct
// fields; the last duplicate wins, as there). It returns the value's byte
// range msg[start:end] and whether there is one; msg that is not a JSON
// object (an array, a truncated or malformed text) has none. Only the
// object's own members are looked at, never nested ones, and msg is
// scanned once without decoding.
func TopLevelMember(msg []byte, name string) (start, end int, ok bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return 0, 0, false
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) {
			return 0, 0, false
		}
		if msg[i] == '}' {
			return start, end, ok
		}
		key, vs, ve, found := member(msg, i)
		if !found {
			return 0, 0, false
		}
		if memberNamed(key, name) {
			start, end, ok = vs, ve, true
		}
		i = skipSpace(msg, ve)
		if i < len(msg) && msg[i] == ',' {
			i++
		}
	}
}

// member reads the object member starting at msg[i]: its quoted name key
// and its value's range msg[vs:ve]. found is false when no member starts
// there (no name, no colon, or no value).
func member(msg []byte, i int) (key []byte, vs, ve int, found bool) {
	if msg[i] != '"' {
		return nil, 0, 0, false
	}
	ks := i
	i = skipString(msg, i)
	key = msg[ks:i]
	i = skipSpace(msg, i)
	if i >= len(msg) || msg[i] != ':' {
		return nil, 0, 0, false
	}
	vs = skipSpace(msg, i+1)
	ve = skipValue(msg, vs)
	return key, vs, ve, ve > vs
}

// memberNamed reports whether the quoted member name key equals name
// case-insensitively, escapes decoded.
func memberNamed(key []byte, name string) bool {
	if len(key) < 2 || key[len(key)-1] != '"' {
		return false
	}
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return bytes.EqualFold(inner, []byte(name)) // no copy of the name in the message
	}
	var k string
	if err := json.Unmarshal(key, &k); err != nil {
		return false
	}
	return strings.EqualFold(k, name)
}

// jsonSpace marks the bytes JSON counts as whitespace; literalEnd those
// that end a bare literal (number, true, false, null): whitespace, ',',
// '}' and ']'.
var (
	jsonSpace  = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}
	literalEnd = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, ',': true, '}': true, ']': true}
)

// skipSpace returns the index of the first byte at or after msg[i] that is
// not whitespace (len(msg) when none).
func skipSpace(msg []byte, i int) int {
	for i < len(msg) && jsonSpace[msg[i]] {
		i++
	}
	return i
}

// skipValue returns the index after the JSON value starting at msg[i]
// (len(msg) when it runs to the end); i itself when there is none.
func skipValue(msg []byte, i int) int {
	if i >= len(msg) {
		return i
	}
	switch msg[i] {
	case '"':
		return skipString(msg, i)
	case '{', '[':
		return skipNested(msg, i)
	case ',', '}', ']', ':':
		return i
	}
	for i < len(msg) && !literalEnd[msg[i]] {
		i++
	}
	return i
}

// skipNested returns the index after the object or array starting at
// msg[i] (len(msg) when it is not closed), skipping strings whole so a
// bracket inside one does not count.
func skipNested(msg []byte, i int) int {
	depth := 0
	for i < len(msg) {
		switch msg[i] {
		case '"':
			i = skipString(msg, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}
