package research

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Schema constants of DigestPayload v1.0 (seed 001, design/research.md).
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
// Field order is alphabetical so that encoding/json also writes sorted keys.
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

// Marshal writes p as compact JSON with keys in sorted order, without HTML
// escaping, and with [] (never null) for empty lists. It cannot fail: a
// non-finite number (NaN, ±Inf) is written as null, which Validate then
// reports.
func Marshal(p DigestPayload) []byte {
	b := make([]byte, 0, 256+len(p.Summary)+64*len(p.KeyPoints)+600*len(p.EvidenceSnippets))
	b = append(b, `{"compression_ratio":`...)
	b = appendFloat(b, p.CompressionRatio)
	b = append(b, `,"content_type":`...)
	b = appendString(b, p.ContentType)
	b = append(b, `,"digest_chars":`...)
	b = strconv.AppendInt(b, int64(p.DigestChars), 10)
	b = append(b, `,"evidence_snippets":[`...)
	for i, e := range p.EvidenceSnippets {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"locator":`...)
		b = appendString(b, e.Locator)
		b = append(b, `,"relevance_score":`...)
		b = appendFloat(b, e.RelevanceScore)
		b = append(b, `,"text":`...)
		b = appendString(b, e.Text)
		b = append(b, '}')
	}
	b = append(b, `],"key_points":[`...)
	for i, k := range p.KeyPoints {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
	}
	b = append(b, `],"original_chars":`...)
	b = strconv.AppendInt(b, int64(p.OriginalChars), 10)
	b = append(b, `,"query_hash":`...)
	b = appendString(b, p.QueryHash)
	b = append(b, `,"source_text_hash":`...)
	b = appendString(b, p.SourceTextHash)
	b = append(b, `,"summary":`...)
	b = appendString(b, p.Summary)
	b = append(b, `,"version":`...)
	b = appendString(b, p.Version)
	return append(b, '}')
}

// appendString appends s as a JSON string with encoding/json's escaping
// minus its HTML escaping: '"', '\\' and control characters are escaped,
// U+2028 and U+2029 are written as \u2028 and \u2029, and invalid UTF-8
// becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json writes a float64, or null when f is
// not finite.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	out, _ := json.Marshal(f) // cannot fail for a finite float
	return append(b, out...)
}

// Unmarshal decodes a payload into its Go form. It accepts what Validate
// accepts as well typed — in particular integral numbers such as 1e3 or
// 10.0 for the integer fields — and ignores unknown fields (Validate warns
// about them). A value of the wrong JSON type is an error; the schema rules
// themselves are not checked: use Validate for that.
func Unmarshal(data []byte) (DigestPayload, error) {
	x, err := decodeJSON(data)
	if err != nil {
		return DigestPayload{}, fmt.Errorf("decode digest payload: %w", err)
	}
	m, ok := x.(map[string]any)
	if !ok {
		return DigestPayload{}, errors.New("decode digest payload: not a JSON object")
	}
	var d decoder
	p := DigestPayload{
		Version:          d.str(m, "version"),
		ContentType:      d.str(m, "content_type"),
		QueryHash:        d.str(m, "query_hash"),
		Summary:          d.str(m, "summary"),
		KeyPoints:        []string{},
		EvidenceSnippets: []EvidenceSnippet{},
		OriginalChars:    d.integer(m, "original_chars"),
		DigestChars:      d.integer(m, "digest_chars"),
		CompressionRatio: d.float(m, "compression_ratio"),
		SourceTextHash:   d.str(m, "source_text_hash"),
	}
	for i, k := range d.array(m, "key_points") {
		s, ok := k.(string)
		if !ok {
			d.fail("key_points[" + strconv.Itoa(i) + "]")
		}
		p.KeyPoints = append(p.KeyPoints, s)
	}
	for i, e := range d.array(m, "evidence_snippets") {
		o, ok := e.(map[string]any)
		if !ok {
			d.fail("evidence_snippets[" + strconv.Itoa(i) + "]")
			continue
		}
		p.EvidenceSnippets = append(p.EvidenceSnippets, EvidenceSnippet{
			Text:           d.str(o, "text"),
			Locator:        d.str(o, "locator"),
			RelevanceScore: d.float(o, "relevance_score"),
		})
	}
	if d.err != nil {
		return DigestPayload{}, d.err
	}
	return p, nil
}

// decoder reads typed fields out of a decoded JSON object, remembering the
// first field of the wrong type. Missing fields read as zero values.
type decoder struct{ err error }

func (d *decoder) fail(field string) {
	if d.err == nil {
		d.err = fmt.Errorf("decode digest payload: %s has the wrong type", field)
	}
}

func (d *decoder) str(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.fail(k)
	}
	return s
}

func (d *decoder) integer(m map[string]any, k string) int {
	v, ok := m[k]
	if !ok {
		return 0
	}
	n, ok := toNumber(v)
	if !ok || !n.isInt || int64(int(n.i)) != n.i {
		d.fail(k)
		return 0
	}
	return int(n.i)
}

func (d *decoder) float(m map[string]any, k string) float64 {
	v, ok := m[k]
	if !ok {
		return 0
	}
	n, ok := toNumber(v)
	if !ok {
		d.fail(k)
	}
	return n.f
}

func (d *decoder) array(m map[string]any, k string) []any {
	v, ok := m[k]
	if !ok {
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		d.fail(k)
	}
	return a
}
