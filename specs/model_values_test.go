package specs

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// TestNormalizeJSON pins the JSON-native form of the values code passes.
func TestNormalizeJSON(t *testing.T) {
	type pair struct {
		A int    `json:"a"`
		B string `json:"b,omitempty"`
	}
	cases := []struct {
		in, want any
	}{
		{nil, nil}, {"s", "s"}, {true, true}, {1.5, 1.5},
		{3, 3.0}, {int64(4), 4.0}, {int32(5), 5.0}, {uint64(6), 6.0}, {float32(0.5), 0.5},
		{[]string{"a", "b"}, []any{"a", "b"}},
		{[]any{1, "x", []string{"y"}}, []any{1.0, "x", []any{"y"}}},
		{map[string]any{"n": 2, "m": map[string]string{"k": "v"}}, map[string]any{"n": 2.0, "m": map[string]any{"k": "v"}}},
		{map[string]string{"k": "v"}, map[string]any{"k": "v"}},
		{pair{A: 7}, map[string]any{"a": 7.0}},
		{[]int{1, 2}, []any{1.0, 2.0}},
		{uint8(9), 9.0},
		{math.NaN(), math.NaN()},
		{func() {}, nil},
	}
	for _, tc := range cases {
		got := normalizeJSON(tc.in)
		if f, ok := tc.want.(float64); ok && math.IsNaN(f) {
			if g, ok := got.(float64); !ok || !math.IsNaN(g) {
				t.Errorf("normalizeJSON(NaN) = %#v", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("normalizeJSON(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

// TestToFloat pins which values read as numbers.
func TestToFloat(t *testing.T) {
	cases := []struct {
		in   any
		want float64
		ok   bool
	}{
		{2.5, 2.5, true}, {math.NaN(), 0, false}, {math.Inf(1), 0, false},
		{3, 3, true}, {int64(-4), -4, true}, {int32(1), 0, false},
		{json.Number("1.25"), 1.25, true}, {json.Number("x"), 0, false},
		{"7", 7, true}, {" 7", 0, false}, {"NaN", 0, false}, {"-Inf", 0, false}, {"", 0, false},
		{true, 0, false}, {nil, 0, false},
	}
	for _, tc := range cases {
		got, ok := toFloat(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("toFloat(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
