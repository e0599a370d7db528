package mcptool

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkEncodedLen fails t unless encodedLen(v) is len(json.Marshal(v)),
// or, for a value json.Marshal refuses, unless encodedLen declines it.
func checkEncodedLen(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	n, ok := encodedLen(v)
	if err != nil {
		if ok {
			t.Fatalf("encodedLen(%#v) = %d, json.Marshal refuses it (%v)", v, n, err)
		}
		return
	}
	if !ok {
		if _, err := marshalledLen(v); err != nil {
			t.Fatalf("marshalledLen(%#v): %v", v, err)
		}
		return
	}
	if n != len(b) {
		t.Fatalf("encodedLen(%#v) = %d, json.Marshal writes %d bytes: %s", v, n, len(b), b)
	}
}

// TestEncodedLenIsMarshalledLength: the request size check counts what
// json.Marshal would write, byte for byte, for every kind of decoded
// argument: escapes, HTML characters, invalid UTF-8, U+2028/2029, floats in
// both notations, nesting, empty and nil containers.
func TestEncodedLenIsMarshalledLength(t *testing.T) {
	for _, v := range []any{
		nil, true, false, "", "plain", `q"uote\back`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<a href='x'>&amp;</a>",
		"é中🙂", "bad \xff\xfe utf8 \xc3", "line\u2028para\u2029", strings.Repeat("x", 1000),
		0.0, math.Copysign(0, -1), 1.0, -1.5, 1e20, 1e21, 123456789012345678901.0, 1e-6, 1e-7, 9.99e-7, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, 1.0 / 3, 100, 1e100, 1.5e-10,
		math.NaN(), math.Inf(1), math.Inf(-1),
		[]any{}, []any(nil), []any{1.0, "a", nil, []any{true}}, map[string]any{}, map[string]any(nil),
		map[string]any{"a": 1.0, "b<": map[string]any{"c\n": []any{"d", 2.5e-9}}, "e": nil},
		[]any{math.NaN()}, map[string]any{"x": math.Inf(1)},
		3, []string{"go", "caller"}, struct{ A int }{1}, map[string]int{"a": 1}, json.Number("12"),
	} {
		checkEncodedLen(t, v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		checkEncodedLen(t, randomJSONValue(r, 3))
	}
}

// randomJSONValue is a random decoded-JSON value nested up to depth.
func randomJSONValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case k == 0:
		return nil
	case k == 1:
		return r.IntN(2) == 0
	case k == 2:
		return math.Float64frombits(r.Uint64())
	case k == 3 || depth == 0:
		return randomString(r)
	case k == 4:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomJSONValue(r, depth-1)
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomJSONValue(r, depth-1)
		}
		return m
	}
}

// randomString is up to 12 random bytes (valid UTF-8 or not) and a random
// rune.
func randomString(r *rand.Rand) string {
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b) + string(rune(r.IntN(0x30000)))
}

// FuzzEncodedLen holds encodedLen to json.Marshal for any string and
// float.
func FuzzEncodedLen(f *testing.F) {
	f.Add("a<b>&\u2028\xff", 1e21)
	f.Add("", 1e-7)
	f.Fuzz(func(t *testing.T, s string, x float64) {
		checkEncodedLen(t, s)
		checkEncodedLen(t, x)
		checkEncodedLen(t, map[string]any{s: []any{x, s}})
	})
}
