package research

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Constraint names used in Violation.Constraint. A "type:" constraint names
// the expected JSON type; the others name the rule that failed.
const (
	ConstraintJSON       = "json"          // the bytes are not one JSON value
	ConstraintRequired   = "required"      // a required field is missing
	ConstraintTypeObject = "type:object"   // expected a JSON object
	ConstraintTypeArray  = "type:array"    // expected a JSON array
	ConstraintTypeString = "type:string"   // expected a JSON string
	ConstraintTypeInt    = "type:integer"  // expected an integral number
	ConstraintTypeNumber = "type:number"   // expected a finite number
	ConstraintConst      = "const"         // must equal a fixed value (version, content_type)
	ConstraintPattern    = "pattern"       // must match a regular expression
	ConstraintMaxLength  = "maxLength"     // too many code points
	ConstraintMaxItems   = "maxItems"      // too many array items
	ConstraintMinimum    = "minimum"       // below the minimum
	ConstraintMaximum    = "maximum"       // above the maximum
	ConstraintNotBlank   = "notBlank"      // empty or only white space
	ConstraintQueryHash  = "equals:query"  // query_hash != QueryHash(query)
	ConstraintDigestSum  = "equals:sum"    // digest_chars != the sum of the lengths
	ConstraintRatio      = "equals:ratio"  // compression_ratio != min(digest/original, 1)
	ConstraintSourceHash = "equals:source" // source_text_hash != SourceTextHash(text)
	// Locator constraints; also used as LocatorCheck.Failure.
	ConstraintLocatorSyntax = "locator:syntax" // not a valid locator string
	ConstraintLocatorRange  = "locator:range"  // range outside the canonical text
	ConstraintLocatorPage   = "locator:page"   // no such page, or range not inside it
	ConstraintLocatorText   = "locator:text"   // canonical[START:END] != snippet text
	// ConstraintUnknownField is used for warnings only.
	ConstraintUnknownField = "unknownField"
)

// receivedMaxChars bounds string values echoed in Violation.Received.
const receivedMaxChars = 100

// The patterns of query_hash and source_text_hash, as named in constraints.
const (
	queryHashPattern  = `^[a-f0-9]{8}$`
	sourceHashPattern = `^sha256:[a-f0-9]{64}$`
)

// isLowerHex reports whether s is exactly n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func validQueryHash(s string) bool { return isLowerHex(s, 8) }

func validSourceHash(s string) bool {
	return strings.HasPrefix(s, "sha256:") && isLowerHex(s[len("sha256:"):], 64)
}

// Violation is one broken rule.
type Violation struct {
	// Path is the JSON path of the offending value, e.g. "summary",
	// "key_points[2]", "evidence_snippets[3].relevance_score"; "$" is the
	// payload itself.
	Path string `json:"path"`
	// Constraint is one of the Constraint* names, with a ":" suffix carrying
	// the limit where there is one ("maxLength:2000", "pattern:^…$").
	Constraint string `json:"constraint"`
	// Received is the offending value: nil when missing, strings cut to 100
	// code points (+ "…"), arrays and objects as truncated compact JSON text.
	Received any `json:"received"`
	// Message explains the violation in one sentence.
	Message string `json:"message"`
}

// Report is the outcome of Validate.
type Report struct {
	// Valid is true when there is no violation. Warnings do not count.
	Valid bool `json:"valid"`
	// Violations lists every violation, in schema field order.
	Violations []Violation `json:"violations"`
	// Warnings lists fields the schema does not know (newer producers may add
	// fields): the top level's by name, then each snippet's by name.
	Warnings []Violation `json:"warnings"`
	// Locators has one entry per evidence snippet whose locator is a string,
	// in order, when a canonical text was given; empty otherwise. A snippet
	// whose text is missing or not a string gets a failed check (its type
	// violation is reported once, under the text).
	Locators []LocatorCheck `json:"locators"`
	// TextChecked is true when locators and source_text_hash were checked
	// against a canonical text.
	TextChecked bool `json:"text_checked"`
	// QueryChecked is true when query_hash was checked against a query.
	QueryChecked bool `json:"query_checked"`
}

// ValidateOptions supplies what the payload is checked against, when known.
type ValidateOptions struct {
	// CanonicalText, when set, is the canonical source text (the output of
	// Canonicalize, or the text of CanonicalizePages, whose pages are
	// recovered by splitting on PageSeparator). source_text_hash must equal
	// SourceTextHash(*CanonicalText) and every locator must verify.
	CanonicalText *string
	// Index may replace CanonicalText when the caller already has one (e.g.
	// to validate several payloads against one large text). It wins over
	// CanonicalText.
	Index *TextIndex
	// Query, when set, is the research query: query_hash must equal
	// QueryHash(*Query).
	Query *string
}

// Validate checks a DigestPayload v1.0 and reports every violation at once.
//
// payload may be JSON text ([]byte or json.RawMessage), a decoded JSON
// object (map[string]any; numbers may be float64, json.Number or Go integer
// types), or a DigestPayload / *DigestPayload (checked as Marshal writes it).
// Anything else is a violation at "$".
//
// Rules: every field is required; version is "1.0"; content_type is
// "digest/v1"; query_hash matches ^[a-f0-9]{8}$ (and equals QueryHash of
// opts.Query); summary ≤ 2000 characters; key_points ≤ 10 strings, each
// ≤ 500 characters and not blank; evidence_snippets ≤ 10 objects {text ≤ 500
// characters, locator (valid syntax), relevance_score in [0, 1]};
// original_chars and digest_chars are integers ≥ 0; digest_chars equals
// len(summary) + Σ len(key_points) + Σ len(snippet texts); compression_ratio
// is in [0, 1] and within 1e-6 of min(digest_chars/original_chars, 1) (1 when
// original_chars is 0); source_text_hash matches ^sha256:[a-f0-9]{64}$ (and
// equals SourceTextHash of the canonical text). With a canonical text every
// locator is verified; a failed verification is a violation at
// evidence_snippets[i].locator as well as a LocatorCheck. Lengths are in
// code points. Cross-field rules are checked only when the fields they read
// are well typed, so one mistake is reported once.
//
// Unknown fields, at the top level or in a snippet, are warnings.
func Validate(payload any, opts ValidateOptions) Report {
	v := &validator{
		violations: []Violation{},
		warnings:   []Violation{},
		locators:   []LocatorCheck{},
	}
	if obj, ok := v.root(payload); ok {
		v.payload(obj, opts)
	}
	return Report{
		Valid:        len(v.violations) == 0,
		Violations:   v.violations,
		Warnings:     v.warnings,
		Locators:     v.locators,
		TextChecked:  v.textChecked,
		QueryChecked: v.queryChecked,
	}
}

type validator struct {
	// validUTF8 is set when every string is known to be valid UTF-8 (the
	// payload came through decodeJSON), which allows a faster length count.
	validUTF8    bool
	violations   []Violation
	warnings     []Violation
	locators     []LocatorCheck
	textChecked  bool
	queryChecked bool
}

func (v *validator) add(path, constraint string, received any, format string, args ...any) {
	v.violations = append(v.violations, Violation{
		Path:       path,
		Constraint: constraint,
		Received:   receivedValue(received),
		Message:    fmt.Sprintf(format, args...),
	})
}

// root turns the accepted payload forms into a JSON object.
func (v *validator) root(payload any) (map[string]any, bool) {
	switch p := payload.(type) {
	case map[string]any:
		return p, true
	case []byte:
		return v.decode(p)
	case json.RawMessage:
		return v.decode(p)
	case DigestPayload:
		return v.decode(payloadJSON(p))
	case *DigestPayload:
		if p == nil {
			v.add("$", ConstraintTypeObject, nil, "the payload is nil; expected a JSON object")
			return nil, false
		}
		return v.decode(payloadJSON(*p))
	default:
		v.add("$", ConstraintTypeObject, payload, "the payload is %s; expected a JSON object", jsonTypeName(payload))
		return nil, false
	}
}

func (v *validator) decode(raw []byte) (map[string]any, bool) {
	x, err := decodeJSON(raw)
	v.validUTF8 = true
	if err != nil {
		v.add("$", ConstraintJSON, string(raw), "the payload is not valid JSON: %v", err)
		return nil, false
	}
	obj, ok := x.(map[string]any)
	if !ok {
		v.add("$", ConstraintTypeObject, x, "the payload is %s; expected a JSON object", jsonTypeName(x))
		return nil, false
	}
	return obj, true
}

// knownFields lists the top-level fields in schema order.
var knownFields = []string{
	"version", "content_type", "query_hash", "summary", "key_points",
	"evidence_snippets", "original_chars", "digest_chars",
	"compression_ratio", "source_text_hash",
}

var knownSnippetFields = []string{"text", "locator", "relevance_score"}

func (v *validator) payload(obj map[string]any, opts ValidateOptions) {
	v.unknownFields(obj, "", knownFields)
	v.header(obj, opts.Query)

	// digest_chars is checked against the lengths only when every text
	// counted is well typed.
	digestSum, sumOK := 0, true
	if s, ok := v.stringField(obj, "", "summary"); ok {
		n := v.length(s)
		digestSum += n
		if n > MaxSummaryChars {
			v.add("summary", fmt.Sprintf("%s:%d", ConstraintMaxLength, MaxSummaryChars), s, "summary has %d characters; at most %d are allowed", n, MaxSummaryChars)
		}
	} else {
		sumOK = false
	}
	n, ok := v.keyPoints(obj)
	digestSum, sumOK = digestSum+n, sumOK && ok

	var index *TextIndex
	if opts.Index != nil {
		index = opts.Index
	} else if opts.CanonicalText != nil {
		index = NewTextIndex(*opts.CanonicalText, nil)
	}
	v.textChecked = index != nil
	if items, ok := v.arrayField(obj, "evidence_snippets", MaxEvidenceSnippets); ok {
		for i, it := range items {
			n, ok := v.snippet(i, it, index)
			digestSum, sumOK = digestSum+n, sumOK && ok
		}
	} else {
		sumOK = false
	}

	v.counts(obj, digestSum, sumOK)
	if s, ok := v.stringField(obj, "", "source_text_hash"); ok {
		if !validSourceHash(s) {
			v.add("source_text_hash", ConstraintPattern+":"+sourceHashPattern, s, `source_text_hash must be "sha256:" followed by 64 lowercase hex digits`)
		} else if index != nil {
			if want := index.SourceHash(); s != want {
				v.add("source_text_hash", ConstraintSourceHash, s, "source_text_hash must be %s, the hash of the canonical text", want)
			}
		}
	}
}

// header checks version, content_type and query_hash (against query when
// given).
func (v *validator) header(obj map[string]any, query *string) {
	if s, ok := v.stringField(obj, "", "version"); ok && s != Version {
		v.add("version", ConstraintConst+":"+Version, s, "version must be %q", Version)
	}
	if s, ok := v.stringField(obj, "", "content_type"); ok && s != ContentType {
		v.add("content_type", ConstraintConst+":"+ContentType, s, "content_type must be %q", ContentType)
	}
	if s, ok := v.stringField(obj, "", "query_hash"); ok {
		if !validQueryHash(s) {
			v.add("query_hash", ConstraintPattern+":"+queryHashPattern, s, "query_hash must be exactly 8 lowercase hex digits")
		} else if query != nil {
			if want := QueryHash(*query); s != want {
				v.add("query_hash", ConstraintQueryHash, s, "query_hash must be %s, the first 8 hex digits of sha256(query)", want)
			}
		}
	}
	v.queryChecked = query != nil
}

// keyPoints checks key_points and returns the sum of their lengths, ok
// false when the list or an item is not well typed.
func (v *validator) keyPoints(obj map[string]any) (sum int, ok bool) {
	items, ok := v.arrayField(obj, "key_points", MaxKeyPoints)
	for i, it := range items {
		path := "key_points[" + strconv.Itoa(i) + "]"
		s, isString := it.(string)
		if !isString {
			v.add(path, ConstraintTypeString, it, "%s is %s; expected a string", path, jsonTypeName(it))
			ok = false
			continue
		}
		n := v.length(s)
		sum += n
		if n > MaxKeyPointChars {
			v.add(path, fmt.Sprintf("%s:%d", ConstraintMaxLength, MaxKeyPointChars), s, "%s has %d characters; at most %d are allowed", path, n, MaxKeyPointChars)
		}
		if strings.TrimSpace(s) == "" {
			v.add(path, ConstraintNotBlank, s, "%s is blank", path)
		}
	}
	return sum, ok
}

// counts checks original_chars, digest_chars (equal to digestSum when
// sumOK) and compression_ratio (in [0, 1], and the ratio of the two counts
// when both are well formed).
func (v *validator) counts(obj map[string]any, digestSum int, sumOK bool) {
	original, origOK := v.countField(obj, "original_chars")
	digest, digestOK := v.countField(obj, "digest_chars")
	if digestOK && sumOK && digest != int64(digestSum) {
		v.add("digest_chars", ConstraintDigestSum, digest, "digest_chars must be %d: len(summary) + Σ len(key_points) + Σ len(evidence_snippets[].text)", digestSum)
	}
	r, ok := v.numberField(obj, "", "compression_ratio")
	switch {
	case !ok:
	case r < 0:
		v.add("compression_ratio", ConstraintMinimum+":0", r, "compression_ratio must be at least 0")
	case r > 1:
		v.add("compression_ratio", ConstraintMaximum+":1", r, "compression_ratio must be at most 1")
	case origOK && digestOK:
		want := ExpectedCompressionRatio(int(digest), int(original))
		if math.Abs(r-want) > RatioTolerance {
			v.add("compression_ratio", ConstraintRatio, r, "compression_ratio must be %s = min(digest_chars/original_chars, 1) within %g", strconv.FormatFloat(want, 'g', -1, 64), RatioTolerance)
		}
	}
}

// length counts code points like utf8.RuneCountInString.
func (v *validator) length(s string) int {
	if v.validUTF8 {
		return countValidRunes(s)
	}
	return utf8.RuneCountInString(s)
}

// countValidRunes counts the code points of valid UTF-8: every byte that is
// not a continuation byte (10xxxxxx) starts one. Eight bytes at a time.
func countValidRunes(s string) int {
	const highs = 0x8080808080808080
	cont := 0
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		cont += bits.OnesCount64(w &^ (w << 1) & highs) // bit 7 set, bit 6 clear
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			cont++
		}
	}
	return len(s) - cont
}

// ExpectedCompressionRatio is min(digest/original, 1), or 1 when original is
// 0 — the value compression_ratio must have.
func ExpectedCompressionRatio(digest, original int) float64 {
	if original <= 0 {
		return 1
	}
	return math.Min(float64(digest)/float64(original), 1)
}

// snippet checks evidence_snippets[i]. It returns the length of its text and
// whether the text was a string (so digest_chars can be checked).
func (v *validator) snippet(i int, it any, index *TextIndex) (int, bool) {
	path := "evidence_snippets[" + strconv.Itoa(i) + "]"
	obj, ok := it.(map[string]any)
	if !ok {
		v.add(path, ConstraintTypeObject, it, "%s is %s; expected an object", path, jsonTypeName(it))
		return 0, false
	}
	v.unknownFields(obj, path, knownSnippetFields)
	text, textOK := v.stringField(obj, path, "text")
	n := 0
	if textOK {
		n = v.length(text)
		if n > MaxSnippetChars {
			v.add(path+".text", fmt.Sprintf("%s:%d", ConstraintMaxLength, MaxSnippetChars), text, "%s.text has %d characters; at most %d are allowed", path, n, MaxSnippetChars)
		}
	}
	if locStr, ok := v.stringField(obj, path, "locator"); ok {
		loc, err := ParseLocator(locStr)
		if err != nil {
			v.add(path+".locator", ConstraintLocatorSyntax, locStr, "%s.locator: %v", path, err)
			if index != nil {
				v.locators = append(v.locators, LocatorCheck{
					Index: i, Locator: locStr, Expected: truncateRunes(text, MaxSnippetChars+1),
					Failure: ConstraintLocatorSyntax, Message: err.Error(),
				})
			}
		} else if index != nil && !textOK {
			v.locators = append(v.locators, LocatorCheck{
				Index: i, Locator: locStr, Failure: ConstraintLocatorText,
				Message: "the snippet has no text to compare with the canonical text",
			})
		} else if index != nil {
			c := VerifyLocator(loc, index, text)
			c.Index, c.Locator = i, locStr
			v.locators = append(v.locators, c)
			if !c.OK {
				v.add(path+".locator", c.Failure, locStr, "%s.locator: %s", path, c.Message)
			}
		}
	}
	if r, ok := v.numberField(obj, path, "relevance_score"); ok {
		p := path + ".relevance_score"
		if r < 0 {
			v.add(p, ConstraintMinimum+":0", r, "%s must be at least 0", p)
		} else if r > 1 {
			v.add(p, ConstraintMaximum+":1", r, "%s must be at most 1", p)
		}
	}
	return n, textOK
}

func (v *validator) unknownFields(obj map[string]any, path string, known []string) {
	var unknown []string
	for k := range obj {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		v.warnings = append(v.warnings, Violation{
			Path:       joinPath(path, k),
			Constraint: ConstraintUnknownField,
			Received:   receivedValue(obj[k]),
			Message:    fmt.Sprintf("unknown field %q is ignored", k),
		})
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// lookup reports a missing field and returns the value otherwise.
func (v *validator) lookup(obj map[string]any, path, key string) (any, bool) {
	val, ok := obj[key]
	if !ok {
		v.add(joinPath(path, key), ConstraintRequired, nil, "required field %q is missing", joinPath(path, key))
	}
	return val, ok
}

func (v *validator) stringField(obj map[string]any, path, key string) (string, bool) {
	val, ok := v.lookup(obj, path, key)
	if !ok {
		return "", false
	}
	s, ok := val.(string)
	if !ok {
		p := joinPath(path, key)
		v.add(p, ConstraintTypeString, val, "%s is %s; expected a string", p, jsonTypeName(val))
	}
	return s, ok
}

func (v *validator) arrayField(obj map[string]any, key string, maxItems int) ([]any, bool) {
	val, ok := v.lookup(obj, "", key)
	if !ok {
		return nil, false
	}
	items, ok := val.([]any)
	if !ok {
		if ss, isStrings := val.([]string); isStrings { // a map built in Go
			items = make([]any, len(ss))
			for i, s := range ss {
				items[i] = s
			}
		} else {
			v.add(key, ConstraintTypeArray, val, "%s is %s; expected an array", key, jsonTypeName(val))
			return nil, false
		}
	}
	if len(items) > maxItems {
		v.add(key, fmt.Sprintf("%s:%d", ConstraintMaxItems, maxItems), val, "%s has %d items; at most %d are allowed", key, len(items), maxItems)
	}
	return items, true
}

// numberField returns a finite number.
func (v *validator) numberField(obj map[string]any, path, key string) (float64, bool) {
	val, ok := v.lookup(obj, path, key)
	if !ok {
		return 0, false
	}
	n, ok := toNumber(val)
	if !ok || math.IsNaN(n.f) || math.IsInf(n.f, 0) {
		p := joinPath(path, key)
		v.add(p, ConstraintTypeNumber, val, "%s is %s; expected a finite number", p, jsonTypeName(val))
		return 0, false
	}
	return n.f, true
}

// countField returns an integer ≥ 0.
func (v *validator) countField(obj map[string]any, key string) (int64, bool) {
	val, ok := v.lookup(obj, "", key)
	if !ok {
		return 0, false
	}
	n, ok := toNumber(val)
	if !ok || !n.isInt {
		v.add(key, ConstraintTypeInt, val, "%s is %s; expected an integer", key, jsonTypeName(val))
		return 0, false
	}
	if n.i < 0 {
		v.add(key, ConstraintMinimum+":0", val, "%s must be at least 0", key)
		return 0, false
	}
	return n.i, true
}

// number is a JSON number; isInt when it is integral and fits in int64.
type number struct {
	f     float64
	i     int64
	isInt bool
}

func toNumber(x any) (number, bool) {
	switch n := x.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return number{f: float64(i), i: i, isInt: true}, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && !math.IsInf(f, 0) {
			return number{}, false
		}
		return floatNumber(f), true
	case float64:
		return floatNumber(n), true
	case float32:
		return floatNumber(float64(n)), true
	case int:
		return number{f: float64(n), i: int64(n), isInt: true}, true
	case int8:
		return number{f: float64(n), i: int64(n), isInt: true}, true
	case int16:
		return number{f: float64(n), i: int64(n), isInt: true}, true
	case int32:
		return number{f: float64(n), i: int64(n), isInt: true}, true
	case int64:
		return number{f: float64(n), i: n, isInt: true}, true
	case uint:
		return uintNumber(uint64(n)), true
	case uint8:
		return uintNumber(uint64(n)), true
	case uint16:
		return uintNumber(uint64(n)), true
	case uint32:
		return uintNumber(uint64(n)), true
	case uint64:
		return uintNumber(n), true
	}
	return number{}, false
}

func floatNumber(f float64) number {
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return number{f: f, i: int64(f), isInt: true}
	}
	return number{f: f}
}

func uintNumber(u uint64) number {
	if u <= math.MaxInt64 {
		return number{f: float64(u), i: int64(u), isInt: true}
	}
	return number{f: float64(u)}
}

// jsonTypeName names the JSON type of a decoded value, for messages.
func jsonTypeName(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any, []string:
		return "an array"
	}
	if n, ok := toNumber(x); ok {
		if n.isInt {
			return "an integer"
		}
		return "a number"
	}
	return fmt.Sprintf("a %T", x)
}

// receivedValue makes a value fit for Violation.Received: scalars as they
// are, strings and composite values (as compact JSON) cut to
// receivedMaxChars code points.
func receivedValue(x any) any {
	switch t := x.(type) {
	case nil, bool, json.Number:
		return t
	case string:
		return truncateRunes(t, receivedMaxChars)
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return strconv.FormatFloat(t, 'g', -1, 64)
		}
		return t
	}
	if n, ok := toNumber(x); ok {
		if n.isInt {
			return n.i
		}
		if math.IsNaN(n.f) || math.IsInf(n.f, 0) {
			return strconv.FormatFloat(n.f, 'g', -1, 64)
		}
		return n.f
	}
	b, err := json.Marshal(x)
	if err != nil {
		return truncateRunes(fmt.Sprintf("%v", x), receivedMaxChars)
	}
	return truncateRunes(string(b), receivedMaxChars)
}
