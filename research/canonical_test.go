package research

import (
	"html"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "Hello world", "Hello world"},
		{"newline only", "a\nb", "a b"},
		{"trim and collapse", " \t Hello \n\n  world \r\n", "Hello world"},
		{"unicode spaces", "a\u00a0\u2003b\u3000c\u2028d", "a b c d"},
		{"nbsp entity", "a&nbsp;&nbsp;b", "a b"},
		{"entities", "Tom &amp; Jerry &quot;x&quot; &#39;y&#x27; &copy;", `Tom & Jerry "x" 'y' ©`},
		{"legacy entity without semicolon", "&ampx &lt3", "&x <3"},
		{"numeric windows-1252", "&#x80;&#150;", "€–"},
		{"numeric invalid", "&#0;&#xD800;&#x110000;", "\ufffd\ufffd\ufffd"},
		{"single digit without semicolon stays", "&#5x", "&#5x"},
		{"tags", "<p>Hello <b>bold</b></p><br/>world", "Hello bold world"},
		{"tag with attributes", `<a href="x.html" title='t'>link</a>`, "link"},
		{"comment and doctype", "<!DOCTYPE html><!-- c -->x<?xml v?>", "x"},
		{"not a tag", "1 < 2 and 3 > 2", "1 < 2 and 3 > 2"},
		{"unclosed tag is text", "a <b c", "a <b c"},
		{"nested angle", "<<b>>", "< >"},
		{"entity-encoded tag is removed", "a &lt;b&gt; c", "a c"},
		{"double-encoded tag is removed", "a &amp;lt;b&amp;gt; c", "a c"},
		{"double-encoded entity", "&amp;lt;", "<"},
		{"deep nesting", "&amp;amp;amp;amp;amp;lt;", "<"},
		{"reference completed by a decoded one", "&l&#116;;", "<"},
		{"right-to-left resolution", "&not&#105;n;", "∉"},
		{"NFC compose", "e\u0301", "é"},
		{"NFC across decoded mark", "e&#x301;", "é"},
		{"NFC across tag is not joined", "e<b>\u0301", "e \u0301"},
		{"decoded ASCII letter composes with a following mark", "&#97;\u0301", "á"},
		{"decoded ampersand before a mark", "x&amp;\u0301", "x&\u0301"},
		{"decoded tag before a mark", "&lt;b&gt;\u0301", "\u0301"},
		{"kelvin sign completes an entity", "&\u212aappa;", "Κ"},
		{"greek question mark completes an entity", "&Kappa\u037e", "Κ"},
		{"decoded kelvin sign completes an entity", "&&#x212a;appa;", "Κ"},
		{"two-rune entity", "&fjlig;", "fj"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"less-than with combining long solidus", "&lt;\u0338b>", "≮b>"},
		{"astral", "<i>𝔘𝔫𝔦</i> 😀", "𝔘𝔫𝔦 😀"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Canonicalize(tc.in)
			if got != tc.want {
				t.Fatalf("Canonicalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			checkCanonical(t, tc.in, got)
		})
	}
}

// checkCanonical asserts the invariants of a canonical page: valid UTF-8,
// NFC, no reference left, no tag left, single spaces, trimmed, idempotent.
func checkCanonical(t testing.TB, in, c string) {
	t.Helper()
	if !utf8.ValidString(c) {
		t.Fatalf("Canonicalize(%q) = %q: invalid UTF-8", in, c)
	}
	if again := Canonicalize(c); again != c {
		t.Fatalf("not idempotent for %q:\n once  %q\n twice %q", in, c, again)
	}
	if !norm.NFC.IsNormalString(c) {
		t.Fatalf("Canonicalize(%q) = %q is not NFC", in, c)
	}
	if u := html.UnescapeString(c); u != c {
		t.Fatalf("Canonicalize(%q) = %q still holds a reference (decodes to %q)", in, c, u)
	}
	if s := stripTags(c); s != c {
		t.Fatalf("Canonicalize(%q) = %q still holds a tag", in, c)
	}
	if strings.HasPrefix(c, " ") || strings.HasSuffix(c, " ") || strings.Contains(c, "  ") || strings.ContainsAny(c, "\n\t\r") {
		t.Fatalf("Canonicalize(%q) = %q: white space not collapsed", in, c)
	}
}

// TestDecodeEntitiesMatchesUnescape: on text whose references are not
// nested, the fixed-point decoder agrees with one html.UnescapeString pass.
func TestDecodeEntitiesMatchesUnescape(t *testing.T) {
	for _, s := range []string{
		"a &amp; b", "&lt;p&gt;", "&#65;&#x42;&#X43;", "&eacute;t&eacute;", "&notin; &not; &notit;",
		"&amp", "&", "&;", "&#", "&#x", "&#;", "x&y", "&CounterClockwiseContourIntegral;",
		"&" + strings.Repeat("a", 100) + ";", "&#" + strings.Repeat("9", 50) + ";",
	} {
		want := html.UnescapeString(s)
		if html.UnescapeString(want) != want {
			continue // nested: the decoders may legitimately differ
		}
		if got, _ := decodeEntities(s); got != want {
			t.Errorf("decodeEntities(%q) = %q, html.UnescapeString = %q", s, got, want)
		}
	}
}

// TestDecodeEntitiesLinear: nesting that would take one html.UnescapeString
// pass per level is decoded in linear time.
func TestDecodeEntitiesLinear(t *testing.T) {
	s := "&" + strings.Repeat("amp;", 1<<18) + "lt;" // 1 MB, 262144 levels
	start := time.Now()
	got := Canonicalize(s)
	if got != "<" {
		t.Fatalf("got %q", truncateRunes(got, 40))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestCanonicalizeIdempotentSamples(t *testing.T) {
	for _, s := range []string{
		"&amp;lt;b&amp;gt;", "&lt;b&gt;", "<&lt;b>&gt;", "&lt;<b>b&gt;", "&amp;<b>lt;",
		"&am<b>p;", "&\u212a<b>appa;", "<\u0338b>", "&#x3c;b&#x3e;", "&#60;&#33;-- x --&#62;",
		"a\u0301\u0316", "\u0301 leading mark", "  \u0301", "&#x20;&#x301;", "&#x2000;x&#x2001;",
		"&#x958;", "x&#xfb2c;y", "&#x1d160;", "<a\n href=x>y</a\n>", "&\n", "&#\t",
	} {
		checkCanonical(t, s, Canonicalize(s))
	}
}

func TestCanonicalizePages(t *testing.T) {
	text, spans := CanonicalizePages([]string{"<p>One</p>", "", "  Twö  pages ", "é"})
	if want := "One\n\n\n\nTwö pages\n\né"; text != want {
		t.Fatalf("text = %q, want %q", text, want)
	}
	want := []Span{{0, 3}, {5, 5}, {7, 16}, {18, 19}}
	if len(spans) != len(want) {
		t.Fatalf("spans = %v", spans)
	}
	for i := range want {
		if spans[i] != want[i] {
			t.Fatalf("spans = %v, want %v", spans, want)
		}
	}
	got := PageSpans(text)
	if len(got) != len(want) {
		t.Fatalf("PageSpans = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PageSpans = %v, want %v", got, want)
		}
	}
	if s := PageSpans(""); len(s) != 1 || s[0] != (Span{}) {
		t.Fatalf("PageSpans(\"\") = %v", s)
	}
	if text, spans := CanonicalizePages(nil); text != "" || len(spans) != 0 {
		t.Fatalf("CanonicalizePages(nil) = %q, %v", text, spans)
	}
}

func TestHashes(t *testing.T) {
	if got := QueryHash(""); got != "e3b0c442" {
		t.Fatalf("QueryHash(\"\") = %s", got)
	}
	if got := QueryHash("abc"); got != "ba7816bf" {
		t.Fatalf("QueryHash(abc) = %s", got)
	}
	if got := SourceTextHash("abc"); got != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("SourceTextHash(abc) = %s", got)
	}
}
