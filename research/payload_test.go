package research

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValidateJSONBytes: a payload given as bytes is read with
// encoding/json; what it rejects (bad syntax, data after the value,
// nesting deeper than 10000) is one ConstraintJSON violation at "$", a
// value that is not an object one ConstraintTypeObject violation.
func TestValidateJSONBytes(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { "a" : [1, -0, 0.5, -1e3, 2E+2, 1.5e-7, true, false, null, "x"] } `, `[]`, `"s"`, `0`,
		`{"a":1,"a":2}`, `"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`,
		"\"\xff\xfe a \xe2\x82\"", `"\u12"`, `"\x"`, "\"a\nb\"", `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
		`[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `tru`, `nul`, `{} {}`, `{} x`, ``, ` `, `{"a":{"b":[{}]}}`,
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 100) + strings.Repeat("]", 100),
	} {
		r := Validate([]byte(s), ValidateOptions{})
		var v any
		want := ConstraintJSON
		if json.Unmarshal([]byte(s), &v) == nil {
			if _, ok := v.(map[string]any); ok {
				continue // an object: schema violations, not checked here
			}
			want = ConstraintTypeObject
		}
		if r.Valid || len(r.Violations) != 1 || r.Violations[0].Path != "$" || r.Violations[0].Constraint != want {
			t.Errorf("%.40q: %+v, want one %s at $", s, r.Violations, want)
		}
	}
}

func TestCountValidRunes(t *testing.T) {
	for _, s := range []string{"", "a", "é", "abcdefgh", "abcdefghé", "東京東京東京", "😀😀a😀😀😀", strings.Repeat("aé東😀", 37)} {
		if got, want := countValidRunes(s), len([]rune(s)); got != want {
			t.Errorf("countValidRunes(%q) = %d, want %d", s, got, want)
		}
	}
}
