package research

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/.

// FuzzCanonicalize: the canonical form is valid UTF-8, NFC, free of
// references and tags, collapsed, and idempotent; pages round-trip through
// PageSpans.
func FuzzCanonicalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		c := Canonicalize(s)
		checkCanonical(t, s, c)
		text, spans := CanonicalizePages([]string{s, s})
		got := PageSpans(text)
		if len(got) != 2 || got[0] != spans[0] || got[1] != spans[1] {
			t.Fatalf("PageSpans(%q) = %v, want %v", text, got, spans)
		}
	})
}

// FuzzValidate: Validate never panics, Valid agrees with the violations,
// the report encodes as JSON, and a valid payload stays valid decoded to a
// map (numbers as json.Number, so large counts keep their value) and
// re-encoded with encoding/json, as digest-put stores it.
func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte, text, query string) {
		canon := Canonicalize(text)
		opts := ValidateOptions{CanonicalText: &canon, Query: &query}
		r := Validate(payload, opts)
		if r.Valid != (len(r.Violations) == 0) {
			t.Fatalf("Valid = %v with %d violations", r.Valid, len(r.Violations))
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("report does not encode: %v", err)
		}
		if !r.Valid {
			return
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(payload))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("valid payload does not decode: %v", err)
		}
		if r2 := Validate(m, opts); !r2.Valid {
			t.Fatalf("decoded payload invalid: %+v", r2.Violations)
		}
		stored, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if r3 := Validate(stored, opts); !r3.Valid {
			t.Fatalf("re-encoded payload invalid: %+v\n%s", r3.Violations, stored)
		}
	})
}

// FuzzParseLocator: a parsed locator formats back to its input, has
// START <= END, and verifying it never panics.
func FuzzParseLocator(f *testing.F) {
	idx := NewTextIndex("Héllo\n\n𝔘 wörld", nil)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLocator(s)
		if err != nil {
			if l != (Locator{}) {
				t.Fatalf("error with non-zero locator %+v", l)
			}
			return
		}
		if l.String() != s {
			t.Fatalf("ParseLocator(%q).String() = %q", s, l.String())
		}
		if l.Start < 0 || l.End < l.Start || l.Page < 0 {
			t.Fatalf("ParseLocator(%q) = %+v", s, l)
		}
		c := VerifyLocator(l, idx, "wörld")
		if c.OK != (c.Failure == "") {
			t.Fatalf("%+v", c)
		}
	})
}

// FuzzCreateDigest: CreateDigest's output always validates against its own
// canonical text and query.
func FuzzCreateDigest(f *testing.F) {
	f.Fuzz(func(t *testing.T, text, query string, paged bool, maxSnippets uint8) {
		in := CreateInput{Query: query, MaxSnippets: int(maxSnippets % (MaxEvidenceSnippets + 1))}
		if paged {
			half := len(text) / 2
			in.Pages = []string{text[:half], text[half:]}
		} else {
			in.Text = text
		}
		p, info, err := CreateDigest(in)
		if err != nil {
			t.Fatal(err)
		}
		checkDigest(t, p, info, query)
	})
}
