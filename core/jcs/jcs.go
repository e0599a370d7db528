// Package jcs writes the RFC 8785 JSON Canonicalization Scheme: object keys
// sorted by their UTF-16 code units, no insignificant whitespace, strings
// escaped minimally, numbers in the ECMAScript shortest round-trip form. The
// hashes in content_archive_hashes are sha256 over this form, so a client
// can recompute them with any JCS implementation.
//
// Hand-written on purpose (weighed against github.com/gowebpki/jcs v1.0.2,
// the packaged reference implementation): both pass the RFC 8785 vectors in
// testdata (the six reference files, the Appendix B numbers and 1,000,000
// ES6 numbers checked against node's Number.prototype.toString), so
// correctness does not decide. Every caller goes through Hash/Marshal, whose
// lenient reading of json.RawMessage the library lacks; rebuilt on the
// library (decode, re-encode, Transform) Marshal took 61-88 µs and 15.8 kB per
// op against 31-54 µs and 8.0 kB here (BenchmarkMarshal, 2 noisy cores). The
// library's strict Transform is faster (21-25 µs against 44-72 µs) but has
// no caller in specd, and it is 774 lines to this file's 270.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Transform canonicalises a JSON document. The input must be I-JSON (RFC
// 8785 §3.1, RFC 7493 §2): errors for invalid JSON, invalid UTF-8, a lone
// surrogate escape (\ud800 without its pair), a member name that occurs
// twice in one object, or a number that is not a finite IEEE 754 double.
// (encoding/json would silently turn the first three into U+FFFD or keep the
// last duplicate, mapping different documents to one canonical form.)
func Transform(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jcs: input is not valid UTF-8")
	}
	if err := checkSurrogates(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jcs: trailing data after the JSON value")
	}
	return canonical(v)
}

// Marshal encodes v with encoding/json and canonicalises the result. The
// output of encoding/json is I-JSON by construction (valid UTF-8, unique
// member names, no surrogate escapes) except inside json.RawMessage values;
// those are read leniently, as encoding/json reads them (the last of two equal
// member names wins, a lone surrogate becomes U+FFFD), so that hashing a
// stored document never fails on an odd extra field. Use Transform to reject
// such input instead.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return canonical(tree)
}

func canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := write(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decode reads one JSON value token by token, so that a member name given
// twice in one object is an error rather than last-one-wins.
func decode(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	switch d {
	case '{':
		return decodeObject(dec)
	case '[':
		return decodeArray(dec)
	}
	return nil, fmt.Errorf("jcs: unexpected %q", d)
}

// decodeObject reads the members of an object whose '{' was read, up to
// and including its '}'; a member name given twice is an error.
func decodeObject(dec *json.Decoder) (any, error) {
	m := map[string]any{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := kt.(string) // the decoder only yields strings as object keys
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("jcs: member name %q occurs twice in one object", k)
		}
		if m[k], err = decode(dec); err != nil {
			return nil, err
		}
	}
	_, err := dec.Token() // '}'
	return m, err
}

// decodeArray reads the elements of an array whose '[' was read, up to and
// including its ']'.
func decodeArray(dec *json.Decoder) (any, error) {
	a := []any{}
	for dec.More() {
		v, err := decode(dec)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	_, err := dec.Token() // ']'
	return a, err
}

// checkSurrogates rejects a \uXXXX escape of a UTF-16 surrogate that is not
// one half of a high-low pair. data is valid UTF-8; syntax errors are left to
// the decoder.
func checkSurrogates(data []byte) error {
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(data):
			i++
			skip, err := checkEscape(data, i)
			if err != nil {
				return err
			}
			i += skip
		}
	}
	return nil
}

// checkEscape checks the escape whose letter is data[i] (its backslash is
// data[i-1]): a \u escape of a UTF-16 surrogate must be a high half
// followed at once by the \u escape of a low half. skip is how far past i
// the caller goes on: 10, past the low half, after a pair; else 0.
func checkEscape(data []byte, i int) (skip int, err error) {
	if data[i] != 'u' {
		return 0, nil
	}
	r, ok := hex4(data, i+1)
	if !ok || !utf16.IsSurrogate(rune(r)) {
		return 0, nil
	}
	if r >= 0xdc00 {
		return 0, fmt.Errorf("jcs: lone low surrogate \\u%04x at byte %d", r, i-1)
	}
	if !lowHalfAt(data, i+5) {
		return 0, fmt.Errorf("jcs: lone high surrogate \\u%04x at byte %d", r, i-1)
	}
	return 10, nil
}

// lowHalfAt reports whether data[j:] starts with the \u escape of a low
// surrogate (\udc00 to \udfff).
func lowHalfAt(data []byte, j int) bool {
	lo, ok := hex4(data, j+2) // ok: data holds j+6 bytes
	return ok && data[j] == '\\' && data[j+1] == 'u' && lo >= 0xdc00 && lo <= 0xdfff
}

// hex4 parses the four hex digits at data[i:i+4].
func hex4(data []byte, i int) (uint16, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 16)
	return uint16(v), err == nil
}

// write appends the canonical form of v, a value as decode or
// encoding/json (with UseNumber) yields it; an error for a number that is
// not a finite double or a value of another Go type.
func write(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case json.Number:
		return writeNumber(buf, x)
	case string:
		writeString(buf, x)
	case []any:
		return writeArray(buf, x)
	case map[string]any:
		return writeObject(buf, x)
	default:
		return fmt.Errorf("jcs: unexpected %T", v)
	}
	return nil
}

// writeNumber appends n in ECMAScript form; an error when n is not a
// finite IEEE 754 double.
func writeNumber(buf *bytes.Buffer, n json.Number) error {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("jcs: number %s is not a finite IEEE 754 double", n)
	}
	buf.WriteString(formatNumber(f))
	return nil
}

// writeArray appends the elements of a in order.
func writeArray(buf *bytes.Buffer, a []any) error {
	buf.WriteByte('[')
	for i, e := range a {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := write(buf, e); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// writeObject appends the members of m sorted by their names' UTF-16 code
// units (RFC 8785 §3.2.3).
func writeObject(buf *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, k)
		buf.WriteByte(':')
		if err := write(buf, m[k]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// formatNumber renders f as ECMAScript's Number.prototype.toString does.
func formatNumber(f float64) string {
	if f == 0 {
		return "0" // also for -0
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1e+21, 1.5e-07
		mant, exp, _ := bytes.Cut([]byte(s), []byte("e"))
		e := string(exp)
		if e[0] == '+' || e[0] == '-' {
			sign := e[:1]
			digits := bytes.TrimLeft([]byte(e[1:]), "0")
			if len(digits) == 0 {
				digits = []byte("0")
			}
			e = sign + string(digits)
		}
		return string(mant) + "e" + e
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// shortEscapes are the two-character escapes of RFC 8785 §3.2.2.2,
// indexed by the character they stand for.
var shortEscapes = [...]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// writeString appends s as a JSON string escaped minimally: the short
// escapes, \u00XX for the other control characters, everything else as
// it is.
func writeString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case int(r) < len(shortEscapes) && shortEscapes[r] != "":
			buf.WriteString(shortEscapes[r])
		case r < 0x20:
			fmt.Fprintf(buf, `\u%04x`, r)
		default:
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}

// lessUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}
