package research

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
)

// Schema constants of DigestPayload v1.0 (README "Research digests").
const (
	Version             = "1.0"
	ContentType         = "digest/v1"
	MaxSummaryChars     = 2000
	MaxKeyPoints        = 10
	MaxKeyPointChars    = 500
	MaxEvidenceSnippets = 10
	MaxSnippetChars     = 500
	// RatioTolerance is how far compression_ratio may be from
	// min(digest_chars/original_chars, 1).
	RatioTolerance = 1e-6
)

// DigestPayload is a compressed, query-focused view of one source document.
// Field order is alphabetical, so encoding/json writes its keys sorted;
// CreateDigest never leaves a list nil, so they encode as [].
type DigestPayload struct {
	// CompressionRatio = min(DigestChars/OriginalChars, 1); 1 when
	// OriginalChars is 0.
	CompressionRatio float64 `json:"compression_ratio"`
	// ContentType is always ContentType ("digest/v1").
	ContentType string `json:"content_type"`
	// DigestChars = len(Summary) + Σ len(KeyPoints) + Σ len(snippet texts),
	// in code points.
	DigestChars int `json:"digest_chars"`
	// EvidenceSnippets holds at most 10 exact excerpts with locators.
	EvidenceSnippets []EvidenceSnippet `json:"evidence_snippets"`
	// KeyPoints holds at most 10 non-blank strings of at most 500 characters.
	KeyPoints []string `json:"key_points"`
	// OriginalChars is the length of the source (this package's producer
	// counts the canonical text).
	OriginalChars int `json:"original_chars"`
	// QueryHash is QueryHash(query): 8 lowercase hex digits.
	QueryHash string `json:"query_hash"`
	// SourceTextHash is SourceTextHash(canonical text).
	SourceTextHash string `json:"source_text_hash"`
	// Summary has at most 2000 characters.
	Summary string `json:"summary"`
	// Version is always Version ("1.0").
	Version string `json:"version"`
}

// EvidenceSnippet is an exact excerpt of the canonical source text.
type EvidenceSnippet struct {
	// Locator is "char:S-E" or "page:N:char:S-E"; see Locator.
	Locator string `json:"locator"`
	// RelevanceScore is in [0, 1].
	RelevanceScore float64 `json:"relevance_score"`
	// Text is canonical[S:E], at most 500 characters.
	Text string `json:"text"`
}

// decodeJSON parses one JSON value (surrounded by optional white space)
// with encoding/json and UseNumber: map[string]any, []any, string,
// json.Number, bool and nil. Duplicate keys keep the last value; invalid
// UTF-8 in strings becomes U+FFFD, byte by byte; data after the value is
// an error.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// payloadJSON encodes p for Validate as a client would send it: a
// non-finite number (NaN, ±Inf; JSON has none) as null, which Validate
// then reports, and nil lists as [].
func payloadJSON(p DigestPayload) []byte {
	snippets := make([]any, len(p.EvidenceSnippets))
	for i, e := range p.EvidenceSnippets {
		snippets[i] = map[string]any{"locator": e.Locator, "relevance_score": finite(e.RelevanceScore), "text": e.Text}
	}
	keyPoints := p.KeyPoints
	if keyPoints == nil {
		keyPoints = []string{}
	}
	b, err := json.Marshal(map[string]any{
		"compression_ratio": finite(p.CompressionRatio), "content_type": p.ContentType, "digest_chars": p.DigestChars,
		"evidence_snippets": snippets, "key_points": keyPoints, "original_chars": p.OriginalChars,
		"query_hash": p.QueryHash, "source_text_hash": p.SourceTextHash, "summary": p.Summary, "version": p.Version,
	})
	if err != nil { // strings, ints, finite floats and nil always encode
		panic(err)
	}
	return b
}

// finite is f, or nil (null) when f is NaN or infinite.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}
