package core

import (
	"encoding/json"
	"testing"
)

// jsonStringCases hold every single byte, alone and between plain text,
// and strings with every kind of character encoding/json escapes.
func jsonStringCases() []string {
	var cases []string
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	return append(cases, "", "plain", "task-1-2", `say "hi"`, `back\slash`, "<b>&amp;</b>", "a>b",
		"a \"quoted\" \\path\\ <b>&amp;</b>\t\n\r\b\f\x01\x1f\x7f é → 😀 \u2028\u2029 end",
		"é ü 漢字 🚀", "\xff\xfe bad", "a\xe2\x80", "\xed\xa0\x80", "line\u2028sep\u2029")
}

// TestAppendJSONStringMatchesMarshal holds AppendJSONString, on strings and
// on byte slices, to json.Marshal: a byte let through unescaped (say '<')
// or a rune written otherwise fails here.
func TestAppendJSONStringMatchesMarshal(t *testing.T) {
	for _, s := range jsonStringCases() {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendJSONString(%q) = %s, json.Marshal = %s", s, got[1:], want)
		}
		if got := AppendJSONString([]byte("x"), []byte(s)); string(got) != "x"+string(want) {
			t.Errorf("AppendJSONString([]byte(%q)) = %s, json.Marshal = %s", s, got[1:], want)
		}
	}
}

// FuzzAppendJSONString: AppendJSONString writes any bytes as json.Marshal
// writes them as a string.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCases()[512:] {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, _ := json.Marshal(string(s))
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
		if got := AppendJSONString([]byte("x"), string(s)); string(got) != "x"+string(want) {
			t.Fatalf("AppendJSONString(string %q) = %s, want %s", s, got[1:], want)
		}
	})
}
