package mcptool

import (
	"strings"
	"testing"
)

// TestCoerceConversions pins which wrong-typed values coerce converts and to
// what: numbers written as strings, boolean words and 0/1, a String
// parameter's Convert; everything else, and a converted value the
// parameter still refuses, is not converted.
func TestCoerceConversions(t *testing.T) {
	max := 10.0
	upper := func(s string) (string, bool) { return strings.ToUpper(s), s != "" }
	cases := []struct {
		name string
		p    Param
		v    any
		want any
		ok   bool
	}{
		{"number string", Param{Name: "n", Type: Number}, " 2.5 ", 2.5, true},
		{"integer string", Param{Name: "n", Type: Integer}, "7", 7.0, true},
		{"integer string with fraction", Param{Name: "n", Type: Integer}, "7.5", nil, false},
		{"number over max", Param{Name: "n", Type: Number, Max: &max}, "11", nil, false},
		{"number not a string", Param{Name: "n", Type: Number}, true, nil, false},
		{"number word", Param{Name: "n", Type: Number}, "seven", nil, false},
		{"number infinite", Param{Name: "n", Type: Number}, "1e999", nil, false},
		{"number NaN", Param{Name: "n", Type: Number}, "NaN", nil, false},
		{"bool yes", Param{Name: "b", Type: Boolean}, "yes", true, true},
		{"bool ON", Param{Name: "b", Type: Boolean}, " ON ", true, true},
		{"bool y", Param{Name: "b", Type: Boolean}, "y", true, true},
		{"bool off", Param{Name: "b", Type: Boolean}, "off", false, true},
		{"bool n", Param{Name: "b", Type: Boolean}, "N", false, true},
		{"bool string 0", Param{Name: "b", Type: Boolean}, "0", false, true},
		{"bool 1", Param{Name: "b", Type: Boolean}, 1.0, true, true},
		{"bool 0", Param{Name: "b", Type: Boolean}, 0.0, false, true},
		{"bool 2", Param{Name: "b", Type: Boolean}, 2.0, nil, false},
		{"bool maybe", Param{Name: "b", Type: Boolean}, "maybe", nil, false},
		{"bool array", Param{Name: "b", Type: Boolean}, []any{}, nil, false},
		{"string number", Param{Name: "s", Type: String}, 42.0, nil, false},
		{"string without Convert", Param{Name: "s", Type: String}, "x", nil, false},
		{"string Convert", Param{Name: "s", Type: String, Convert: upper}, "abc", "ABC", true},
		{"string Convert refuses", Param{Name: "s", Type: String, Convert: upper}, "", nil, false},
		{"string Convert to enum case", Param{Name: "s", Type: String, Enum: []string{"ABC"}, Convert: upper}, "abc", "ABC", true},
		{"string Convert outside enum", Param{Name: "s", Type: String, Enum: []string{"X"}, Convert: upper}, "abc", nil, false},
		{"array", Param{Name: "a", Type: Array}, "x", nil, false},
		{"object", Param{Name: "o", Type: Object}, "x", nil, false},
	}
	for _, c := range cases {
		got, ok := coerce(c.p, c.v)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: coerce(%v) = %v, %v; want %v, %v", c.name, c.v, got, ok, c.want, c.ok)
		}
	}
}
