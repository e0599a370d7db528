package research

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Producer defaults.
const (
	// DefaultMaxSnippets is used when CreateInput.MaxSnippets is 0.
	DefaultMaxSnippets = 5
	// CreateKeyPoints is how many key points CreateDigest extracts (at most).
	CreateKeyPoints = 5
)

// CreateInput is the source and query of CreateDigest.
type CreateInput struct {
	// Text is a single-page source; it must be empty when Pages is given.
	Text string
	// Pages is a paged source (e.g. PDF pages); when non-empty the source is
	// canonicalised page by page and locators use the page form.
	Pages []string
	// Query is the research query; it may be empty.
	Query string
	// SourceID names the source; when empty it is derived from the source
	// hash: "src-" + the first 16 hex digits of SHA-256(canonical text).
	SourceID string
	// MaxSnippets is the number of evidence snippets wanted, 0..10; 0 means
	// DefaultMaxSnippets.
	MaxSnippets int
}

// CreateInfo describes how a digest was made.
type CreateInfo struct {
	// SourceID is CreateInput.SourceID or the derived one.
	SourceID string `json:"source_id"`
	// CanonicalText is the canonical source text the payload refers to
	// (archive it to keep the locators verifiable).
	CanonicalText string `json:"-"`
	// Paged is true when the input was Pages.
	Paged bool `json:"paged"`
	// PageSpans are the page spans of CanonicalText (one span when not paged).
	PageSpans []Span `json:"page_spans"`
	// QueryTerms are the terms used for scoring.
	QueryTerms []string `json:"query_terms"`
	// Ranking is RankingBM25 or RankingPosition.
	Ranking string `json:"ranking"`
	// Chunks and Sentences count the candidates scored.
	Chunks    int `json:"chunks"`
	Sentences int `json:"sentences"`
	// Shortened names the parts left out or cut so that the digest is no
	// longer than its source ("key_points", "evidence_snippets",
	// "summary"); empty when none was.
	Shortened []string `json:"-"`
}

// Errors returned by CreateDigest.
var (
	ErrTextAndPages = errors.New("research: give either text or pages, not both")
	ErrMaxSnippets  = fmt.Errorf("research: max_snippets must be between 0 and %d", MaxEvidenceSnippets)
)

// CreateDigest builds a DigestPayload from a source and a query,
// deterministically and without a language model:
//
//  1. The source is canonicalised (Canonicalize, or CanonicalizePages for
//     Pages) and hashed; original_chars is the canonical text's length.
//  2. Each page is split into chunks of about 400 characters (at most 500,
//     at least 50 unless the page is shorter), preferring page ("paragraph"),
//     then sentence, then clause, then word boundaries — see splitRange.
//     The same rules split each page into sentences, a sentence longer than
//     500 characters being split like a chunk.
//  3. Chunks and sentences are scored against QueryTerms(query) with BM25
//     (k1 = 1.2, b = 0.75) normalised to 0–1; with no usable term, or when
//     no chunk contains one, earlier text scores higher ((n-i)/n).
//  4. evidence_snippets: the top MaxSnippets chunks by score (ties: earlier
//     first; chunks scoring 0 under BM25 are left out), each the exact
//     canonical text at its locator ("page:N:char:S-E" for paged input,
//     "char:S-E" otherwise), relevance_score rounded to 4 decimals.
//  5. summary: the best sentences, taken by score while they fit in 2000
//     characters, then put back in document order and joined by spaces.
//  6. key_points: the CreateKeyPoints best sentences, one each.
//  7. digest_chars and compression_ratio are computed exactly.
//  8. A digest is never longer than its source (compression_ratio is at
//     most 1 and means what it says). A source of at most MaxSummaryChars
//     that would give a longer digest cannot be compressed: the digest
//     keeps its canonical text as the summary, with no key points or
//     snippets. A longer source loses its key points (they repeat
//     sentences of the summary), then summary sentences, so that the
//     summary fits beside the snippets. CreateInfo.Shortened names what
//     went.
//
// An empty (or all-markup) source is not an error: the digest is valid with
// an empty summary and no key points or snippets, original_chars 0 and
// compression_ratio 1 (for empty pages, original_chars counts the "\n\n"
// separators and compression_ratio is 0). The result always passes Validate with
// info.CanonicalText and the query. Errors are returned only for bad input:
// both Text and Pages set, or MaxSnippets outside 0..10.
func CreateDigest(in CreateInput) (DigestPayload, CreateInfo, error) {
	return CreateDigestContext(context.Background(), in)
}

// CreateDigestContext is CreateDigest under ctx: between its stages
// (canonicalising, splitting, tokenising, ranking chunks, ranking
// sentences) it stops with ctx's error once ctx is done, so a call's
// deadline holds for a large source.
func CreateDigestContext(ctx context.Context, in CreateInput) (DigestPayload, CreateInfo, error) {
	maxSnippets, err := in.maxSnippets()
	if err != nil {
		return DigestPayload{}, CreateInfo{}, err
	}
	info, r, hash := canonicalSource(in)
	if err := ctx.Err(); err != nil {
		return DigestPayload{}, CreateInfo{}, err
	}
	chunks, chunkPage, sents := candidates(r, info.PageSpans)
	info.Chunks, info.Sentences = len(chunks), len(sents)

	// Scoring.
	info.QueryTerms = QueryTerms(in.Query)
	if info.QueryTerms == nil {
		info.QueryTerms = []string{}
	}
	chunkScores, sentScores, method, err := score(ctx, r, chunks, sents, info.QueryTerms)
	if err != nil {
		return DigestPayload{}, CreateInfo{}, err
	}
	info.Ranking = method
	if len(chunks) == 0 {
		info.Ranking = RankingPosition
	}
	if !info.Paged {
		chunkPage = nil
	}
	order := byScore(sentScores)
	p := DigestPayload{
		Version:          Version,
		ContentType:      ContentType,
		QueryHash:        QueryHash(in.Query),
		Summary:          summary(r, sents, order, MaxSummaryChars),
		KeyPoints:        keyPoints(r, sents, order),
		EvidenceSnippets: evidence(r, chunks, chunkPage, chunkScores, method, maxSnippets),
		OriginalChars:    len(r),
		SourceTextHash:   hash,
	}
	p.DigestChars = digestChars(p)
	info.Shortened = keepShorter(&p, info.CanonicalText, r, sents, order)
	p.CompressionRatio = ExpectedCompressionRatio(p.DigestChars, p.OriginalChars)
	return p, info, nil
}

// maxSnippets checks the input and returns how many snippets to make
// (DefaultMaxSnippets for 0). Errors: ErrTextAndPages, ErrMaxSnippets.
func (in CreateInput) maxSnippets() (int, error) {
	if in.Text != "" && len(in.Pages) > 0 {
		return 0, ErrTextAndPages
	}
	if in.MaxSnippets < 0 || in.MaxSnippets > MaxEvidenceSnippets {
		return 0, ErrMaxSnippets
	}
	if in.MaxSnippets == 0 {
		return DefaultMaxSnippets, nil
	}
	return in.MaxSnippets, nil
}

// score tokenises r and ranks chunks and sentences against the query
// terms (rank); method is the chunks' ranking. It stops with ctx's error
// between its stages once ctx is done.
func score(ctx context.Context, r []rune, chunks, sents []Span, terms []string) (chunkScores, sentScores []float64, method string, err error) {
	termIndex := make(map[string]int, len(terms))
	for i, t := range terms {
		termIndex[t] = i
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, "", err
	}
	tok := tokenize(r, termIndex)
	if err := ctx.Err(); err != nil {
		return nil, nil, "", err
	}
	chunkScores, method = rank(chunks, tok, len(terms))
	if err := ctx.Err(); err != nil {
		return nil, nil, "", err
	}
	sentScores, _ = rank(sents, tok, len(terms))
	return chunkScores, sentScores, method, ctx.Err()
}

// digestChars is the payload's digest_chars: the code points of its
// summary, key points and snippet texts.
func digestChars(p DigestPayload) int {
	n := utf8.RuneCountInString(p.Summary)
	for _, e := range p.EvidenceSnippets {
		n += utf8.RuneCountInString(e.Text)
	}
	for _, k := range p.KeyPoints {
		n += utf8.RuneCountInString(k)
	}
	return n
}

// keepShorter makes *p no longer than its source, whose canonical text is
// text (step 8 of CreateDigest), and names the parts it shortened;
// p.DigestChars is kept current.
func keepShorter(p *DigestPayload, text string, r []rune, sents []Span, order []int) []string {
	if p.DigestChars <= p.OriginalChars {
		return nil
	}
	if p.OriginalChars <= MaxSummaryChars {
		p.Summary, p.KeyPoints, p.EvidenceSnippets = text, []string{}, []EvidenceSnippet{}
		p.DigestChars = p.OriginalChars
		return []string{"key_points", "evidence_snippets"}
	}
	p.KeyPoints = []string{}
	if p.DigestChars = digestChars(*p); p.DigestChars <= p.OriginalChars {
		return []string{"key_points"}
	}
	// The snippets are distinct parts of the source and the summary alone
	// is shorter than it: the summary keeps what fits beside them.
	room := p.OriginalChars - p.DigestChars + utf8.RuneCountInString(p.Summary)
	p.Summary = summary(r, sents, order, room)
	p.DigestChars = digestChars(*p)
	return []string{"key_points", "summary"}
}

// canonicalSource canonicalises the input (page by page for Pages) and
// returns the facts CreateDigest reports about it, the canonical text as
// code points and its source_text_hash.
func canonicalSource(in CreateInput) (info CreateInfo, r []rune, hash string) {
	info.Paged = len(in.Pages) > 0
	if info.Paged {
		info.CanonicalText, info.PageSpans = CanonicalizePages(in.Pages)
	} else {
		info.CanonicalText = Canonicalize(in.Text)
	}
	r = []rune(info.CanonicalText)
	if !info.Paged {
		info.PageSpans = []Span{{Start: 0, End: len(r)}}
	}
	hash = SourceTextHash(info.CanonicalText)
	info.SourceID = in.SourceID
	if info.SourceID == "" {
		info.SourceID = "src-" + hash[len("sha256:"):len("sha256:")+16]
	}
	return info, r, hash
}

// candidates splits each non-empty page into chunks (with the 1-based page
// of each) and sentences.
func candidates(r []rune, pages []Span) (chunks []Span, chunkPage []int, sents []Span) {
	for i, p := range pages {
		if p.Len() == 0 {
			continue
		}
		before := len(chunks)
		chunks = splitRange(r, p.Start, p.End, chunks)
		for range chunks[before:] {
			chunkPage = append(chunkPage, i+1)
		}
		sents = sentences(r, p.Start, p.End, sents)
	}
	return chunks, chunkPage, sents
}

// evidence is the top maxSnippets chunks by score (ties: earlier first;
// under BM25, chunks scoring 0 are left out), each with its locator —
// paged when chunkPage is given.
func evidence(r []rune, chunks []Span, chunkPage []int, scores []float64, method string, maxSnippets int) []EvidenceSnippet {
	out := []EvidenceSnippet{}
	for _, c := range byScore(scores) {
		if len(out) == maxSnippets || method == RankingBM25 && scores[c] == 0 {
			break
		}
		s := chunks[c]
		loc := Locator{Start: s.Start, End: s.End}
		if chunkPage != nil {
			loc.Page = chunkPage[c]
		}
		out = append(out, EvidenceSnippet{Text: string(r[s.Start:s.End]), Locator: loc.String(), RelevanceScore: roundScore(scores[c])})
	}
	return out
}

// summary takes the sentences in order (best first) while they fit in
// maxChars, and joins them in document order with spaces.
func summary(r []rune, sents []Span, order []int, maxChars int) string {
	var parts []string
	for i, ok := range chooseSentences(r, sents, order, maxChars) {
		if ok {
			parts = append(parts, sentenceText(r, sents[i]))
		}
	}
	return strings.Join(parts, " ")
}

// chooseSentences marks the non-empty sentences taken in order (best
// first) while they fit in maxChars with a joining space between each
// two; a sentence that does not fit is skipped, and the choice ends once
// fewer than 2 characters are left.
func chooseSentences(r []rune, sents []Span, order []int, maxChars int) []bool {
	chosen := make([]bool, len(sents))
	summaryLen := 0
	for _, i := range order {
		n := sentenceLen(r, sents[i])
		if n == 0 {
			continue
		}
		extra := n
		if summaryLen > 0 {
			extra++ // the joining space
		}
		if summaryLen+extra > maxChars {
			if maxChars-summaryLen < 2 {
				break
			}
			continue
		}
		chosen[i] = true
		summaryLen += extra
	}
	return chosen
}

// keyPoints is the CreateKeyPoints best distinct non-blank sentences.
func keyPoints(r []rune, sents []Span, order []int) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, i := range order {
		if len(out) == CreateKeyPoints {
			break
		}
		t := sentenceText(r, sents[i])
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// sentenceText is the trimmed text of a sentence span (at most 500 code
// points, never blank unless empty).
func sentenceText(r []rune, s Span) string {
	return strings.TrimSpace(string(r[s.Start:s.End]))
}

// sentenceLen is the length in code points of sentenceText(r, s).
func sentenceLen(r []rune, s Span) int {
	a, b := s.Start, s.End
	for a < b && unicode.IsSpace(r[a]) {
		a++
	}
	for b > a && unicode.IsSpace(r[b-1]) {
		b--
	}
	return b - a
}
