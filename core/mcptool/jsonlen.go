package mcptool

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// encodedLen is len(json.Marshal(v)), counted without encoding v, for the
// values a decoded JSON argument holds (nil, bool, float64, string,
// []any, map[string]any, nested); ok is false for anything else (a Go
// caller's int or struct, a NaN), which the caller measures with
// json.Marshal instead. Every request's size check runs on it.
func encodedLen(v any) (n int, ok bool) {
	switch x := v.(type) {
	case nil:
		return len("null"), true
	case bool:
		if x {
			return len("true"), true
		}
		return len("false"), true
	case string:
		return stringLen(x), true
	case float64:
		return floatLen(x)
	case []any:
		return arrayLen(x)
	case map[string]any:
		return objectLen(x)
	}
	return 0, false
}

// arrayLen is encodedLen of a JSON array (null when nil).
func arrayLen(a []any) (int, bool) {
	if a == nil {
		return len("null"), true
	}
	n := 2 + max(len(a)-1, 0) // [ ] and the commas
	for _, e := range a {
		m, ok := encodedLen(e)
		if !ok {
			return 0, false
		}
		n += m
	}
	return n, true
}

// objectLen is encodedLen of a JSON object (null when nil).
func objectLen(o map[string]any) (int, bool) {
	if o == nil {
		return len("null"), true
	}
	n := 2 + max(len(o)-1, 0) // { } and the commas
	for k, e := range o {
		m, ok := encodedLen(e)
		if !ok {
			return 0, false
		}
		n += stringLen(k) + 1 + m
	}
	return n, true
}

// asciiLen is the encoded length of each ASCII byte in a JSON string:
// \" \\ \b \f \n \r \t take 2, the other control bytes and < > & take 6
// (\u00XX), the rest 1.
var asciiLen = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			t[b] = 2
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			t[b] = 6
		default:
			t[b] = 1
		}
	}
	return t
}()

// stringLen is the length of s as encoding/json writes it: quoted, ASCII
// as asciiLen says, an invalid UTF-8 byte as \ufffd and U+2028, U+2029 as
// \u2028, \u2029 (6 bytes each), any other rune as is.
func stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			n += int(asciiLen[b])
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if (c == utf8.RuneError && size == 1) || c == '\u2028' || c == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// floatLen is the length of f as encoding/json writes it (jsonFloat); ok
// is false for NaN and ±Inf, which json.Marshal refuses.
func floatLen(f float64) (int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	var buf [32]byte
	return len(jsonFloat(buf[:0], f)), true
}

// jsonFloat appends f as encoding/json writes it: strconv's shortest form,
// in exponent form below 1e-6 and from 1e21 on, the exponent without a
// leading zero (1e-07 → 1e-7).
func jsonFloat(b []byte, f float64) []byte {
	if abs := math.Abs(f); abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// marshalledLen is len(json.Marshal(v)): encodedLen where it can count,
// json.Marshal otherwise (and its error).
func marshalledLen(v any) (int, error) {
	if n, ok := encodedLen(v); ok {
		return n, nil
	}
	b, err := json.Marshal(v)
	return len(b), err
}
