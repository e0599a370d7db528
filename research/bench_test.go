package research

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchHTML returns about size bytes of HTML: paragraphs of sentences with
// inline tags, entities and some non-ASCII text.
func benchHTML(size int) string {
	rng := rand.New(rand.NewPCG(7, 7))
	words := strings.Fields(`the fox research data model quick brown jumps over lazy dog evidence
		locator digest canonical text query summary point snippet relevance score café naïve
		Zürich 東京 résumé Ελλάδα`)
	var b strings.Builder
	for b.Len() < size {
		b.WriteString("<p class=\"para\">")
		for s := 3 + rng.IntN(5); s > 0; s-- {
			for w := 6 + rng.IntN(14); w > 0; w-- {
				switch rng.IntN(40) {
				case 0:
					b.WriteString("<b>")
					b.WriteString(words[rng.IntN(len(words))])
					b.WriteString("</b>")
				case 1:
					b.WriteString("&amp;")
				case 2:
					b.WriteString("&quot;x&quot;")
				case 3:
					b.WriteString(`<a href="https://example.com/?a=1&amp;b=2">link</a>`)
				default:
					b.WriteString(words[rng.IntN(len(words))])
				}
				b.WriteByte(' ')
			}
			b.WriteString(". ")
		}
		b.WriteString("</p>\n")
	}
	return b.String()
}

// maximalPayload returns a payload at every limit (2000-character summary,
// 10 key points and 10 snippets of 500 characters) whose snippets verify
// against the returned canonical text, and the query.
func maximalPayload(b testing.TB) (DigestPayload, string, string) {
	text := Canonicalize(benchHTML(1 << 20))
	r := []rune(text)
	query := "fox research"
	p := DigestPayload{
		Version:          Version,
		ContentType:      ContentType,
		QueryHash:        QueryHash(query),
		Summary:          string(r[:MaxSummaryChars]),
		KeyPoints:        []string{},
		EvidenceSnippets: []EvidenceSnippet{},
		OriginalChars:    len(r),
		SourceTextHash:   SourceTextHash(text),
	}
	digest := MaxSummaryChars
	for i := 0; i < MaxKeyPoints; i++ {
		p.KeyPoints = append(p.KeyPoints, string(r[i*1000:i*1000+MaxKeyPointChars]))
		digest += MaxKeyPointChars
	}
	for i := 0; i < MaxEvidenceSnippets; i++ {
		start := (i + 1) * len(r) / 11
		loc := Locator{Start: start, End: start + MaxSnippetChars}
		p.EvidenceSnippets = append(p.EvidenceSnippets, EvidenceSnippet{
			Text: string(r[loc.Start:loc.End]), Locator: loc.String(), RelevanceScore: 1 - float64(i)/10,
		})
		digest += MaxSnippetChars
	}
	p.DigestChars = digest
	p.CompressionRatio = ExpectedCompressionRatio(digest, len(r))
	rep := Validate(p, ValidateOptions{CanonicalText: &text, Query: &query})
	if !rep.Valid {
		b.Fatalf("maximal payload invalid: %+v", rep.Violations)
	}
	return p, text, query
}

func BenchmarkValidateMaximalJSON(b *testing.B) {
	p, _, _ := maximalPayload(b)
	raw := marshal(b, p)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if !Validate(raw, ValidateOptions{}).Valid {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkValidateMaximalMap(b *testing.B) {
	p, _, _ := maximalPayload(b)
	var m map[string]any
	if err := json.Unmarshal(marshal(b, p), &m); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if !Validate(m, ValidateOptions{}).Valid {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkValidateMaximalIndexed verifies the 10 locators and the query
// against a 1 MB text indexed once (the source hash is checked too, so this
// includes one SHA-256 of the text per call).
func BenchmarkValidateMaximalIndexed(b *testing.B) {
	p, text, query := maximalPayload(b)
	raw := marshal(b, p)
	idx := NewTextIndex(text, nil)
	b.ReportAllocs()
	for b.Loop() {
		if !Validate(raw, ValidateOptions{Index: idx, Query: &query}).Valid {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkValidateMaximalText1MB is the full digest-validate path: index
// and hash a 1 MB canonical text, verify 10 locators.
func BenchmarkValidateMaximalText1MB(b *testing.B) {
	p, text, query := maximalPayload(b)
	raw := marshal(b, p)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if !Validate(raw, ValidateOptions{CanonicalText: &text, Query: &query}).Valid {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkCanonicalizeHash1MB(b *testing.B) {
	html := benchHTML(1 << 20)
	b.SetBytes(int64(len(html)))
	b.ReportAllocs()
	for b.Loop() {
		_ = SourceTextHash(Canonicalize(html))
	}
}

func benchCreate(b *testing.B, size int) {
	in := CreateInput{Text: benchHTML(size), Query: "quick fox research evidence", MaxSnippets: 10}
	b.SetBytes(int64(len(in.Text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := CreateDigest(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCreateDigest100KB(b *testing.B) { benchCreate(b, 100<<10) }
func BenchmarkCreateDigest1MB(b *testing.B)   { benchCreate(b, 1<<20) }
