package research

import (
	"strings"
	"testing"
)

func TestParseLocator(t *testing.T) {
	tests := []struct {
		in   string
		want Locator
		err  string
	}{
		{in: "char:0-0", want: Locator{Start: 0, End: 0}},
		{in: "char:1500-1650", want: Locator{Start: 1500, End: 1650}},
		{in: "page:3:char:200-450", want: Locator{Page: 3, Start: 200, End: 450}},
		{in: "", err: "expected"},
		{in: "char:", err: "START-END"},
		{in: "char:5", err: "START-END"},
		{in: "char:-5", err: "start is missing"},
		{in: "char:5-", err: "end is missing"},
		{in: "char:9-5", err: "after end"},
		{in: "char:05-9", err: "leading zero"},
		{in: "char:+5-9", err: "not a decimal"},
		{in: "char: 5-9", err: "not a decimal"},
		{in: "char:5-9 ", err: "not a decimal"},
		{in: "char:1-2-3", err: "not a decimal"},
		{in: "CHAR:1-2", err: "expected"},
		{in: "page:0:char:1-2", err: "start at 1"},
		{in: "page::char:1-2", err: "page number is missing"},
		{in: "page:1", err: "page:N:char"},
		{in: "page:1:1-2", err: "expected"},
		{in: "page:1:page:2:char:1-2", err: "expected"},
		{in: "char:1-9999999999999999", err: "digits"},
		{in: "char:١-٢", err: "not a decimal"},
	}
	for _, tc := range tests {
		got, err := ParseLocator(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseLocator(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseLocator(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if s := got.String(); s != tc.in {
			t.Errorf("String() = %q, want %q", s, tc.in)
		}
	}
}

func TestVerifyLocator(t *testing.T) {
	text, spans := CanonicalizePages([]string{"Héllo wörld", "𝔘nicode 😀 page"})
	// "Héllo wörld" = 0..11, separator 11..13, page 2 = 13..27
	idx := NewTextIndex(text, spans)
	if idx.Len() != 27 {
		t.Fatalf("Len = %d", idx.Len())
	}
	tests := []struct {
		loc     string
		snippet string
		ok      bool
		failure string
		found   string
	}{
		{"char:0-5", "Héllo", true, "", "Héllo"},
		{"char:6-11", "wörld", true, "", "wörld"},
		{"page:1:char:6-11", "wörld", true, "", "wörld"},
		{"page:2:char:13-20", "𝔘nicode", true, "", "𝔘nicode"},
		{"page:2:char:21-22", "😀", true, "", "😀"},
		{"char:0-27", text, true, "", text},
		{"char:0-5", "Hello", false, ConstraintLocatorText, "Héllo"},
		{"char:20-40", "x", false, ConstraintLocatorRange, ""},
		{"page:3:char:0-1", "H", false, ConstraintLocatorPage, ""},
		{"page:1:char:6-14", "wörld\n\n𝔘", false, ConstraintLocatorPage, "wörld\n\n𝔘"},
		{"page:2:char:0-5", "Héllo", false, ConstraintLocatorPage, "Héllo"},
	}
	for _, tc := range tests {
		loc, err := ParseLocator(tc.loc)
		if err != nil {
			t.Fatal(err)
		}
		c := VerifyLocator(loc, idx, tc.snippet)
		if c.OK != tc.ok || c.Failure != tc.failure || c.Found != tc.found {
			t.Errorf("VerifyLocator(%s, %q) = %+v; want ok=%v failure=%q found=%q", tc.loc, tc.snippet, c, tc.ok, tc.failure, tc.found)
		}
		if !c.OK && c.Message == "" {
			t.Errorf("VerifyLocator(%s): failure without message", tc.loc)
		}
	}
}

// TestTextIndexSlice compares the sampled index with []rune slicing on a
// text longer than several strides.
func TestTextIndexSlice(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString([]string{"a", "é", "😀", "中", " "}[i%5])
	}
	text := b.String()
	r := []rune(text)
	idx := NewTextIndex(text, nil)
	if idx.Len() != len(r) {
		t.Fatalf("Len = %d, want %d", idx.Len(), len(r))
	}
	for _, se := range [][2]int{{0, 0}, {0, 1}, {127, 129}, {128, 256}, {5, 900}, {999, 1000}, {1000, 1000}, {300, 301}} {
		got, ok := idx.Slice(se[0], se[1])
		if !ok || got != string(r[se[0]:se[1]]) {
			t.Errorf("Slice(%d,%d) = %q, %v", se[0], se[1], got, ok)
		}
	}
	for _, se := range [][2]int{{-1, 2}, {5, 4}, {0, 1001}} {
		if _, ok := idx.Slice(se[0], se[1]); ok {
			t.Errorf("Slice(%d,%d) ok, want out of range", se[0], se[1])
		}
	}
	if p := idx.Pages(); len(p) != 1 || p[0] != (Span{0, 1000}) {
		t.Errorf("Pages = %v", p)
	}
}
