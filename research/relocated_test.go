package research

import (
	"strings"
	"testing"
)

// TestRelocated: a put whose only faults are locators off their snippets'
// text names the payload with each snippet located where its text is
// (page form kept for a paged source), which validates; a payload with any
// other fault, or a snippet whose text is not in the source, names none.
func TestRelocated(t *testing.T) {
	// Long enough (over 2,000 characters) that the digest is not the source
	// kept whole: it has evidence snippets.
	filler := strings.Repeat("The first page says little of note, and says it at length. ", 40)
	pages := []string{filler, "Foxes are quick. The second page holds the evidence the query wants."}
	p, _, err := CreateDigest(CreateInput{Pages: pages, Query: "quick foxes"})
	if err != nil {
		t.Fatal(err)
	}
	text, spans := CanonicalizePages(pages)
	idx := NewTextIndex(text, spans)
	m := toMap(t, p)
	sn := m["evidence_snippets"].([]any)[0].(map[string]any)
	good := sn["locator"].(string)
	if !strings.HasPrefix(good, "page:") {
		t.Fatalf("a paged source's locator %q is not in page form", good)
	}
	sn["locator"] = "page:1:char:0-" + strings.Split(good, "-")[1][:1]
	rep := Validate(m, ValidateOptions{Index: idx})
	if rep.Valid {
		t.Fatal("the moved locator still validates")
	}
	fixed, ok := relocated(m, rep, idx)
	if !ok {
		t.Fatalf("no relocation for %+v", rep.Violations)
	}
	if got := fixed["evidence_snippets"].([]any)[0].(map[string]any)["locator"]; got != good {
		t.Fatalf("relocated to %v, want %s", got, good)
	}
	if sn["locator"] == good {
		t.Fatal("relocated changed the payload it was given")
	}

	m["summary"] = 42.0 // a fault a locator cannot fix
	if _, ok := relocated(m, Validate(m, ValidateOptions{Index: idx}), idx); ok {
		t.Fatal("relocated a payload with another fault")
	}
	delete(m, "summary")
	m["summary"] = p.Summary
	sn["text"] = "Text that is nowhere in the source."
	if _, ok := relocated(m, Validate(m, ValidateOptions{Index: idx}), idx); ok {
		t.Fatal("relocated a snippet whose text is not in the source")
	}
}
