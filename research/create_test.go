package research

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkDigest asserts that a CreateDigest result validates against its own
// canonical text and query with no violation and every locator verified.
func checkDigest(t testing.TB, p DigestPayload, info CreateInfo, query string) {
	t.Helper()
	text := info.CanonicalText
	for _, payload := range []any{marshal(t, p), p} {
		r := Validate(payload, ValidateOptions{CanonicalText: &text, Query: &query})
		if !r.Valid || len(r.Violations) != 0 || len(r.Warnings) != 0 {
			t.Fatalf("CreateDigest output invalid: %+v\npayload: %s", r.Violations, truncateRunes(string(marshal(t, p)), 2000))
		}
		if len(r.Locators) != len(p.EvidenceSnippets) {
			t.Fatalf("%d locator checks for %d snippets", len(r.Locators), len(p.EvidenceSnippets))
		}
		for _, c := range r.Locators {
			if !c.OK {
				t.Fatalf("locator %+v", c)
			}
		}
	}
	for _, e := range p.EvidenceSnippets {
		l, err := ParseLocator(e.Locator)
		if err != nil {
			t.Fatal(err)
		}
		if (l.Page > 0) != info.Paged {
			t.Fatalf("locator %s for paged=%v", e.Locator, info.Paged)
		}
	}
}

const foxText = `<h1>Foxes</h1>
<p>The red fox (Vulpes vulpes) is the largest of the true foxes and one of the most widely distributed members of the order Carnivora, being present across the entire Northern Hemisphere. It is listed as least concern by the IUCN.</p>
<p>Its range has increased alongside human expansion, having been introduced to Australia, where it is considered harmful to native mammals and bird populations. Due to its presence in Australia, it is included on the list of the &quot;world's 100 worst invasive species&quot;.</p>
<p>The red fox originated from smaller-sized ancestors from Eurasia during the Middle Villafranchian period, and colonised North America shortly after the Wisconsin glaciation. Among the true foxes, the red fox represents a more progressive form in the direction of carnivory.</p>
<p>Apart from its large size, the red fox is distinguished from other fox species by its ability to adapt quickly to new environments. Despite its name, the species often produces individuals with other colourings, including leucistic and melanistic individuals.</p>
<p>Wolves are not foxes. Dogs are not foxes either; they bark.</p>`

// foxTextLong is foxText with enough filler for summary, key points and
// snippets together (a digest is never longer than its source:
// TestCreateDigestNeverLonger).
var foxTextLong = foxText + strings.Repeat("<p>Unrelated filler about the weather in the hills.</p>", 120)

func TestCreateDigestBasic(t *testing.T) {
	query := "red fox Australia invasive"
	p, info, err := CreateDigest(CreateInput{Text: foxTextLong, Query: query, MaxSnippets: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, p, info, query)
	if info.Ranking != RankingBM25 || info.SourceID != "src-"+p.SourceTextHash[7:23] {
		t.Fatalf("info = %+v", info)
	}
	if got := strings.Join(info.QueryTerms, ","); got != "red,fox,australia,invasive" {
		t.Fatalf("terms = %s", got)
	}
	if len(p.EvidenceSnippets) != 3 || p.EvidenceSnippets[0].RelevanceScore != 1 {
		t.Fatalf("snippets = %+v", p.EvidenceSnippets)
	}
	if !strings.Contains(p.EvidenceSnippets[0].Text, "Australia") {
		t.Fatalf("best snippet does not mention Australia: %q", p.EvidenceSnippets[0].Text)
	}
	for i := 1; i < len(p.EvidenceSnippets); i++ {
		if p.EvidenceSnippets[i].RelevanceScore > p.EvidenceSnippets[i-1].RelevanceScore {
			t.Fatalf("snippets not by relevance")
		}
	}
	if len(p.KeyPoints) == 0 || len(p.KeyPoints) > CreateKeyPoints || p.Summary == "" {
		t.Fatalf("summary %q key points %q", p.Summary, p.KeyPoints)
	}
	if !strings.Contains(p.KeyPoints[0], "Australia") {
		t.Fatalf("best key point %q", p.KeyPoints[0])
	}
	// Deterministic.
	q, _, _ := CreateDigest(CreateInput{Text: foxTextLong, Query: query, MaxSnippets: 3})
	if string(marshal(t, p)) != string(marshal(t, q)) {
		t.Fatal("not deterministic")
	}
}

func TestCreateDigestChunks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		b.WriteString("This is sentence number ")
		b.WriteString(strings.Repeat("x", i%13))
		b.WriteString(", with a clause; and more words. ")
	}
	p, info, err := CreateDigest(CreateInput{Text: b.String(), MaxSnippets: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, p, info, "")
	if info.Ranking != RankingPosition {
		t.Fatalf("ranking %s", info.Ranking)
	}
	for i, e := range p.EvidenceSnippets {
		n := utf8.RuneCountInString(e.Text)
		if n < chunkMin || n > chunkMax {
			t.Fatalf("snippet %d has %d chars", i, n)
		}
		if !strings.HasSuffix(e.Text, ".") {
			t.Fatalf("snippet %d not cut at a sentence: %q", i, e.Text)
		}
		if i > 0 && e.RelevanceScore >= p.EvidenceSnippets[i-1].RelevanceScore {
			t.Fatalf("position ranking not decreasing")
		}
	}
	if utf8.RuneCountInString(p.Summary) > MaxSummaryChars || utf8.RuneCountInString(p.Summary) < MaxSummaryChars-100 {
		t.Fatalf("summary has %d chars", utf8.RuneCountInString(p.Summary))
	}
	if p.CompressionRatio >= 1 {
		t.Fatalf("ratio %v", p.CompressionRatio)
	}
}

func TestCreateDigestHardCuts(t *testing.T) {
	// No spaces and no punctuation at all: chunks are cut inside words, and
	// never between a base character and its combining mark.
	text := strings.Repeat("e\u0301\u0302字𝔘", 700)
	p, info, err := CreateDigest(CreateInput{Text: text, Query: "字", MaxSnippets: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, p, info, "字")
	for _, e := range p.EvidenceSnippets {
		if r, _ := utf8.DecodeRuneInString(e.Text); isMark(r) {
			t.Fatalf("snippet starts with a mark: %q", truncateRunes(e.Text, 5))
		}
	}
	for _, k := range p.KeyPoints {
		if n := utf8.RuneCountInString(k); n > MaxKeyPointChars {
			t.Fatalf("key point of %d chars", n)
		}
	}
}

func TestCreateDigestPaged(t *testing.T) {
	// Page one's filler makes the source long enough to compress.
	pages := []string{"Page one talks about apples. Apples are red." + strings.Repeat(" Nothing here is about that fruit.", 80), "", "Page three talks about pears. Pears are green.", "Bananas."}
	query := "pears"
	p, info, err := CreateDigest(CreateInput{Pages: pages, Query: query, SourceID: "doc-1"})
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, p, info, query)
	if info.SourceID != "doc-1" || !info.Paged || len(info.PageSpans) != 4 {
		t.Fatalf("info %+v", info)
	}
	if len(p.EvidenceSnippets) != 1 || !strings.HasPrefix(p.EvidenceSnippets[0].Locator, "page:3:char:") {
		t.Fatalf("snippets %+v", p.EvidenceSnippets)
	}
	// A paged digest verifies only against the paged canonical text.
	single := Canonicalize(strings.Join(pages, " "))
	if r := Validate(p, ValidateOptions{CanonicalText: &single}); r.Valid {
		t.Fatal("paged digest validated against the joined single text")
	}
}

func TestCreateDigestEmpty(t *testing.T) {
	for _, in := range []CreateInput{{}, {Text: "  <p> </p> &nbsp; "}, {Pages: []string{"", "<br>"}}} {
		p, info, err := CreateDigest(in)
		if err != nil {
			t.Fatal(err)
		}
		checkDigest(t, p, info, "")
		// Two empty pages are "\n\n": 2 characters, nothing digested.
		wantOriginal, wantRatio := 0, 1.0
		if info.Paged {
			wantOriginal, wantRatio = 2, 0
		}
		if p.OriginalChars != wantOriginal || p.DigestChars != 0 || p.CompressionRatio != wantRatio ||
			len(p.EvidenceSnippets) != 0 || len(p.KeyPoints) != 0 || p.Summary != "" {
			t.Fatalf("%+v", p)
		}
	}
}

func TestCreateDigestNoMatch(t *testing.T) {
	p, info, err := CreateDigest(CreateInput{Text: foxTextLong, Query: "the of and zebra"})
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, p, info, "the of and zebra")
	if info.Ranking != RankingPosition || len(p.EvidenceSnippets) == 0 || !strings.HasPrefix(p.EvidenceSnippets[0].Locator, "char:0-") {
		t.Fatalf("%+v %+v", info, p.EvidenceSnippets)
	}
}

func TestCreateDigestErrors(t *testing.T) {
	if _, _, err := CreateDigest(CreateInput{Text: "a", Pages: []string{"b"}}); !errors.Is(err, ErrTextAndPages) {
		t.Fatal(err)
	}
	for _, n := range []int{-1, 11} {
		if _, _, err := CreateDigest(CreateInput{Text: "a", MaxSnippets: n}); !errors.Is(err, ErrMaxSnippets) {
			t.Fatal(err)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	got := QueryTerms("What is THE Red-Fox's range? a b 2024 Ünïcode e\u0301 fox")
	if s := strings.Join(got, ","); s != "red,fox,range,2024,ünïcode" {
		t.Fatalf("terms = %s", s)
	}
}

func TestSplitRangeBounds(t *testing.T) {
	r := []rune(strings.Repeat("word ", 1000) + strings.Repeat("x", 1234))
	spans := splitRange(r, 0, len(r), nil)
	prev := 0
	for i, s := range spans {
		if s.Len() > chunkMax || (s.Len() < chunkMin && len(spans) > 1) {
			t.Fatalf("span %d = %v (%d)", i, s, s.Len())
		}
		if s.Start < prev || r[s.Start] == ' ' {
			t.Fatalf("span %d = %v starts badly", i, s)
		}
		prev = s.End
	}
	if spans[len(spans)-1].End != len(r) {
		t.Fatal("text not covered")
	}
}

// TestCreateDigestNeverLonger: a digest is never longer than its source.
// A source that cannot be compressed keeps its text as the summary; a
// longer one drops key points, then summary sentences.
func TestCreateDigestNeverLonger(t *testing.T) {
	for _, tc := range []struct {
		text      string
		snippets  int
		shortened []string
	}{
		{"<p>Foxes are quick. Dogs sleep all day long.</p>", 5, []string{"key_points", "evidence_snippets"}},
		{foxText, 3, []string{"key_points", "evidence_snippets"}},
		{foxText + strings.Repeat("<p>Unrelated filler about the weather in the hills.</p>", 40), 10, []string{"key_points", "summary"}},
		{foxTextLong, 3, nil},
	} {
		p, info, err := CreateDigest(CreateInput{Text: tc.text, Query: "fox", MaxSnippets: tc.snippets})
		if err != nil {
			t.Fatal(err)
		}
		checkDigest(t, p, info, "fox")
		if p.DigestChars > p.OriginalChars || p.CompressionRatio > 1 || p.Summary == "" {
			t.Fatalf("%d chars from %d: %+v", p.DigestChars, p.OriginalChars, p)
		}
		if strings.Join(info.Shortened, ",") != strings.Join(tc.shortened, ",") {
			t.Fatalf("shortened %q, want %q", info.Shortened, tc.shortened)
		}
	}
}
