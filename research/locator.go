package research

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Locator is a parsed evidence locator. Offsets are 0-based code-point
// offsets into the whole canonical text, End exclusive. Page is the 1-based
// page number of the "page:N:char:S-E" form and 0 for the "char:S-E" form;
// a paged locator's range must lie inside page N.
type Locator struct {
	Page  int
	Start int
	End   int
}

// String formats the locator in its canonical syntax.
func (l Locator) String() string {
	if l.Page > 0 {
		return "page:" + strconv.Itoa(l.Page) + ":char:" + strconv.Itoa(l.Start) + "-" + strconv.Itoa(l.End)
	}
	return "char:" + strconv.Itoa(l.Start) + "-" + strconv.Itoa(l.End)
}

// maxLocatorDigits keeps parsed numbers far from integer overflow.
const maxLocatorDigits = 15

// ParseLocator parses "char:START-END" or "page:N:char:START-END". Numbers
// are ASCII decimal without sign, spaces or leading zeros (so a parsed
// locator formats back to the same string), at most 15 digits; START <= END
// and N >= 1. The range is checked against a text only by VerifyLocator.
func ParseLocator(s string) (Locator, error) {
	l, why := parseLocator(s)
	if why != "" {
		return Locator{}, locatorError(s, why)
	}
	return l, nil
}

// parseLocator parses a locator; why says what is wrong ("" when nothing
// is).
func parseLocator(s string) (l Locator, why string) {
	rest := s
	if after, ok := strings.CutPrefix(s, "page:"); ok {
		if l.Page, rest, why = parsePage(after); why != "" {
			return l, why
		}
	}
	after, ok := strings.CutPrefix(rest, "char:")
	if !ok {
		return l, `expected "char:START-END" or "page:N:char:START-END"`
	}
	l.Start, l.End, why = parseRange(after)
	return l, why
}

// parsePage parses "N:rest" after "page:": the page number (>= 1) and the
// rest; why says what is wrong.
func parsePage(after string) (page int, rest, why string) {
	num, rest, ok := strings.Cut(after, ":")
	if !ok {
		return 0, "", "expected page:N:char:START-END"
	}
	n, err := parseLocatorNumber(num)
	if err != nil {
		return 0, "", "page number " + err.Error()
	}
	if n < 1 {
		return 0, "", "page numbers start at 1"
	}
	return n, rest, ""
}

// parseRange parses "START-END" after "char:" (START <= END); why says
// what is wrong.
func parseRange(after string) (start, end int, why string) {
	a, b, ok := strings.Cut(after, "-")
	if !ok {
		return 0, 0, "expected START-END after char:"
	}
	start, err := parseLocatorNumber(a)
	if err != nil {
		return 0, 0, "start " + err.Error()
	}
	if end, err = parseLocatorNumber(b); err != nil {
		return 0, 0, "end " + err.Error()
	}
	if start > end {
		return 0, 0, fmt.Sprintf("start %d is after end %d", start, end)
	}
	return start, end, ""
}

// parseLocatorNumber parses a locator number: ASCII decimal digits, at
// most maxLocatorDigits, no leading zero.
func parseLocatorNumber(s string) (int, error) {
	if s == "" {
		return 0, errors.New("is missing")
	}
	if len(s) > maxLocatorDigits {
		return 0, fmt.Errorf("has more than %d digits", maxLocatorDigits)
	}
	if strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	return strconv.Atoi(s)
}

func locatorError(s, why string) error {
	return fmt.Errorf("invalid locator %q: %s", truncateRunes(s, 80), why)
}

// LocatorCheck is the outcome of verifying one snippet's locator.
type LocatorCheck struct {
	// Index is the snippet's position in evidence_snippets.
	Index int `json:"index"`
	// Locator is the locator as given.
	Locator string `json:"locator"`
	// OK is true when the locator is well formed, inside the text (and page)
	// and canonical[START:END] equals the snippet text.
	OK bool `json:"ok"`
	// Expected is the snippet text (truncated to MaxSnippetChars+1 code points).
	Expected string `json:"expected"`
	// Found is the canonical text at the range (truncated likewise), empty
	// when the range is not inside the text.
	Found string `json:"found"`
	// Failure classifies a failed check: one of the Constraint* locator
	// constants; empty when OK.
	Failure string `json:"failure,omitempty"`
	// Message explains a failure in one sentence.
	Message string `json:"message,omitempty"`
}

// VerifyLocator checks loc against an indexed canonical text: the range must
// lie inside the text, a paged locator's range inside its page (a text with
// one page has page 1 only), and the text at the range must equal snippet.
// The returned check has Index 0; callers set it.
func VerifyLocator(loc Locator, text *TextIndex, snippet string) LocatorCheck {
	c := LocatorCheck{Locator: loc.String(), Expected: truncateRunes(snippet, MaxSnippetChars+1)}
	if c.pageFailed(loc, text) {
		return c
	}
	found, ok := text.Slice(loc.Start, loc.End)
	if !ok {
		c.Failure = ConstraintLocatorRange
		c.Message = fmt.Sprintf("range %d-%d is outside the canonical text (%d characters)", loc.Start, loc.End, text.Len())
		return c
	}
	if found == snippet {
		c.Found = c.Expected
		c.OK = true
		return c
	}
	c.Found = truncateRunes(found, MaxSnippetChars+1)
	c.Failure = ConstraintLocatorText
	c.Message = fmt.Sprintf("the canonical text at %s differs from the snippet text (%d vs %d characters)", c.Locator, utf8.RuneCountInString(found), utf8.RuneCountInString(snippet))
	return c
}

// pageFailed reports whether loc is paged and its page does not exist in
// text or does not hold its range; c then holds the failure (and the text
// at the range, when the range is inside the text).
func (c *LocatorCheck) pageFailed(loc Locator, text *TextIndex) bool {
	if loc.Page <= 0 {
		return false
	}
	pages := text.pages
	if loc.Page > len(pages) {
		c.Failure = ConstraintLocatorPage
		c.Message = fmt.Sprintf("page %d does not exist; the text has %d page(s)", loc.Page, len(pages))
		return true
	}
	p := pages[loc.Page-1]
	if loc.Start >= p.Start && loc.End <= p.End {
		return false
	}
	c.Failure = ConstraintLocatorPage
	c.Message = fmt.Sprintf("range %d-%d is not inside page %d (characters %d-%d)", loc.Start, loc.End, loc.Page, p.Start, p.End)
	if found, ok := text.Slice(loc.Start, loc.End); ok {
		c.Found = truncateRunes(found, MaxSnippetChars+1)
	}
	return true
}

// truncateRunes returns s cut to at most n code points, with "…" appended
// when it was cut (the result then has n+1 code points).
func truncateRunes(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i < len(s) && k < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
}
