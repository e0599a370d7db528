package research

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is the reference: encoding/json with UseNumber, one value only.
func stdDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return v, nil
}

func checkDecodeJSON(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeJSON(data)
	want, wantErr := stdDecode(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("decodeJSON(%q) error = %v, encoding/json error = %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeJSON(%q) = %#v, encoding/json = %#v", data, got, want)
	}
}

func TestDecodeJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : [1, -0, 0.5, -1e3, 2E+2, 1.5e-7, true, false, null, "x"] } `, `[]`, `"s"`, `0`,
		`{"a":1,"a":2}`, `"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`,
		"\"\xff\xfe a \xe2\x82\"", `"\u12"`, `"\x"`, "\"a\nb\"", `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
		`[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `tru`, `nul`, `{} {}`, `{} x`, ``, ` `, `{"a":{"b":[{}]}}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 100) + strings.Repeat("]", 100),
	} {
		checkDecodeJSON(t, []byte(s))
	}
}

// FuzzDecodeJSON: the payload parser agrees with encoding/json.
func FuzzDecodeJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodeJSON(t, data)
	})
}

func TestCountValidRunes(t *testing.T) {
	for _, s := range []string{"", "a", "é", "abcdefgh", "abcdefghé", "東京東京東京", "😀😀a😀😀😀", strings.Repeat("aé東😀", 37)} {
		if got, want := countValidRunes(s), len([]rune(s)); got != want {
			t.Errorf("countValidRunes(%q) = %d, want %d", s, got, want)
		}
	}
}
