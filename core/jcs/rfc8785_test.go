package jcs

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// Vectors derived from RFC 8785: the number samples of Appendix B (IEEE 754 bit
// patterns and the ECMAScript Number.prototype.toString form they must
// serialise to), the sample document of RFC 8785 §3.2.2, and the sorting
// example of RFC 8785 §3.2.3.

func TestRFC8785Numbers(t *testing.T) {
	for _, tc := range []struct {
		bits uint64
		want string // "" means: must be rejected
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"}, // minus zero
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x7fffffffffffffff, ""}, // NaN
		{0x7ff0000000000000, ""}, // Infinity
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		f := math.Float64frombits(tc.bits)
		if tc.want == "" {
			if _, err := Transform([]byte(fmt.Sprint(f))); err == nil {
				t.Errorf("%016x (%v) accepted", tc.bits, f)
			}
			continue
		}
		if got := formatNumber(f); got != tc.want {
			t.Errorf("%016x: got %s, want %s", tc.bits, got, tc.want)
		}
		// The same through the parser, from Go's own shortest form.
		in := fmt.Sprint(f)
		if got, err := Transform([]byte(in)); err != nil || string(got) != tc.want {
			t.Errorf("Transform(%s) = %s, %v; want %s", in, got, err, tc.want)
		}
	}
}

// TestNumberTextForms: number texts as a client writes them, and the
// ECMAScript form they canonicalise to.
func TestNumberTextForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1e21", "1e+21"},
		{"1E21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"1e-7", "1e-7"},
		{"1e-6", "0.000001"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"-0", "0"},
		{"-0.0", "0"},
		{"0e10", "0"},
		{"5e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"333333333.33333329", "333333333.3333333"},
		{"1E30", "1e+30"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"0.000000000000000000000000001", "1e-27"},
		{"-1.5e-10", "-1.5e-10"},
		{"123456789012345678901234567890", "1.2345678901234568e+29"},
		{"9007199254740993", "9007199254740992"}, // rounds to the nearest double
		{"100", "100"},
		{"1.0", "1"},
		{"-12.340e1", "-123.4"},
	} {
		got, err := Transform([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Transform(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"1e400", "-1e400", "NaN", "Infinity", "01", "1.", ".5", "+1", "0x10"} {
		if got, err := Transform([]byte(in)); err == nil {
			t.Errorf("Transform(%s) = %s, want an error", in, got)
		}
	}
}

func TestRFC8785Strings(t *testing.T) {
	short := map[rune]string{'\b': `\b`, '\t': `\t`, '\n': `\n`, '\f': `\f`, '\r': `\r`}
	for r := rune(0); r < 0x20; r++ {
		want, ok := short[r]
		if !ok {
			want = fmt.Sprintf(`\u%04x`, r)
		}
		in := fmt.Sprintf(`"\u%04X"`, r) // upper-case hex in, lower-case out
		if got, err := Transform([]byte(in)); err != nil || string(got) != `"`+want+`"` {
			t.Errorf("U+%04X: got %s, %v; want %q", r, got, err, `"`+want+`"`)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`"\/"`, `"/"`},                        // solidus never escaped
		{`"/"`, `"/"`},                         //
		{`"\u0022\u005c"`, `"\"\\"`},           // quote and backslash: short forms
		{`"\u007f"`, "\"\u007f\""},             // DEL is not a control character here
		{`"\u00e9\u20ac"`, `"é€"`},             // non-ASCII written as UTF-8
		{`"\ud83d\ude00"`, `"😀"`},              // a surrogate pair becomes one UTF-8 rune
		{`"\u2028\u2029"`, "\"\u2028\u2029\""}, // JSON allows them raw
		{`"<>&"`, `"<>&"`},
		{`"\\ud800"`, `"\\ud800"`}, // an escaped backslash, then text
		{`"\uD83D\uDE00"`, `"😀"`},  // upper-case hex pair
		{`["\ud83d\ude00","\ud800\udfff"]`, "[\"😀\",\"\U000103ff\"]"}, // no HTML escaping
	} {
		if got, err := Transform([]byte(tc.in)); err != nil || string(got) != tc.want {
			t.Errorf("Transform(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestRFC8785Sample is the sample document of RFC 8785 §3.2.2 and its
// canonical form.
func TestRFC8785Sample(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if got, err := Transform([]byte(in)); err != nil || string(got) != want {
		t.Errorf("got  %s (%v)\nwant %s", got, err, want)
	}
}

// TestRFC8785Sorting is the example of RFC 8785 §3.2.3: keys ordered by UTF-16
// code units, which puts the surrogate pair of U+1F600 before U+FB33 (by code
// point it would come last).
func TestRFC8785Sorting(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	order := []string{"Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign",
		"Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"}
	got, err := Transform([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, v := range order {
		i := strings.Index(string(got), `"`+v+`"`)
		if i <= last {
			t.Fatalf("%q out of order in %s", v, got)
		}
		last = i
	}
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001f600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestIJSONRejects: RFC 8785 §3.1 requires I-JSON input (RFC 7493 §2):
// unique member names and no lone surrogates. Accepting them would map two
// different documents to one canonical form (and one hash).
func TestIJSONRejects(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":2}`,
		`{"x":{"b":1,"b":1}}`,
		`"\ud800"`,
		`"\udc00"`,
		`"\ud83d x"`,
		`{"\ude00":1}`,
		`"\ud800\u0041"`,
		`"\ud800\\udc00"`,
		`"x\ud83d"`,
		"\"\xff\"",
	} {
		if got, err := Transform([]byte(in)); err == nil {
			t.Errorf("Transform(%s) = %s, want an error", in, got)
		}
	}
}

// TestMarshalStaysLenientInRawMessage: Marshal hashes stored documents,
// whose json.RawMessage extras may hold what Transform rejects; it reads them
// as encoding/json does instead of failing.
func TestMarshalStaysLenientInRawMessage(t *testing.T) {
	v := map[string]any{"x": json.RawMessage(`{"b":1,"b":2,"s":"\ud800"}`), "a": 1.50}
	got, err := Marshal(v)
	if want := "{\"a\":1.5,\"x\":{\"b\":2,\"s\":\"\uFFFD\"}}"; err != nil || string(got) != want {
		t.Fatalf("Marshal = %s, %v; want %s", got, err, want)
	}
}

// TestSurrogateErrorsNameTheEscape pins which half is reported lone and at
// which byte its backslash stands, and that escapes other than a lone
// surrogate (a pair, other letters, an escaped backslash before "u") pass.
func TestSurrogateErrorsNameTheEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"\ud800"`, `jcs: lone high surrogate \ud800 at byte 1`},
		{`["x","\udc00"]`, `jcs: lone low surrogate \udc00 at byte 6`},
		{`"\ud83d\u0041"`, `jcs: lone high surrogate \ud83d at byte 1`},
		{`"\ud83d\ud83d"`, `jcs: lone high surrogate \ud83d at byte 1`},
		{`"\ud83d\ude00\udc00"`, `jcs: lone low surrogate \udc00 at byte 13`},
		{`"\ud83d\ude00"`, ``},
		{`"\\ud800"`, ``},
		{`"\n\u0041\/"`, ``},
		{`"\u00e9\ud83d\ude00x"`, ``},
	} {
		_, err := Transform([]byte(c.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Transform(%s): error %q, want %q", c.in, got, c.want)
		}
	}
}
