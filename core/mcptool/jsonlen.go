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
		if x == nil {
			return len("null"), true
		}
		n = 2 + max(len(x)-1, 0) // [ ] and the commas
		for _, e := range x {
			m, ok := encodedLen(e)
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	case map[string]any:
		if x == nil {
			return len("null"), true
		}
		n = 2 + max(len(x)-1, 0) // { } and the commas
		for k, e := range x {
			m, ok := encodedLen(e)
			if !ok {
				return 0, false
			}
			n += stringLen(k) + 1 + m
		}
		return n, true
	}
	return 0, false
}

// stringLen is the length of s as encoding/json writes it: quoted, with
// \" \\ \b \f \n \r \t, the other control bytes and < > & as \u00XX, an
// invalid UTF-8 byte as \ufffd and U+2028, U+2029 as \u2028, \u2029.
func stringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// floatLen is the length of f as encoding/json writes it (strconv's
// shortest form, exponent form below 1e-6 and from 1e21 on, with the
// exponent's leading zero dropped); ok is false for NaN and ±Inf, which
// json.Marshal refuses.
func floatLen(f float64) (int, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	n := len(b)
	if format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		n-- // e-07 → e-7
	}
	return n, true
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
