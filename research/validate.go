package research

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"reflect"
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
	return len(s) == n && strings.TrimLeft(s, "0123456789abcdef") == ""
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
	digestSum, sumOK := v.summary(obj)
	n, ok := v.keyPoints(obj)
	digestSum, sumOK = digestSum+n, sumOK && ok
	index := opts.textIndex()
	v.textChecked = index != nil
	n, ok = v.snippets(obj, index)
	digestSum, sumOK = digestSum+n, sumOK && ok

	v.counts(obj, digestSum, sumOK)
	var sourceHash func() string
	if index != nil {
		sourceHash = index.SourceHash
	}
	v.hashField(obj, sourceHashRule, sourceHash)
}

// textIndex is the canonical text to check against: Index, else an index
// of CanonicalText, else nil.
func (o ValidateOptions) textIndex() *TextIndex {
	if o.Index != nil {
		return o.Index
	}
	if o.CanonicalText != nil {
		return NewTextIndex(*o.CanonicalText, nil)
	}
	return nil
}

// constFields are the fields that must hold one fixed string, in schema
// order.
var constFields = []struct{ key, want string }{
	{"version", Version},
	{"content_type", ContentType},
}

// header checks version, content_type and query_hash (against query when
// given).
func (v *validator) header(obj map[string]any, query *string) {
	for _, f := range constFields {
		if s, ok := v.stringField(obj, "", f.key); ok && s != f.want {
			v.add(f.key, ConstraintConst+":"+f.want, s, "%s must be %q", f.key, f.want)
		}
	}
	var queryHash func() string
	if query != nil {
		queryHash = func() string { return QueryHash(*query) }
	}
	v.hashField(obj, queryHashRule, queryHash)
	v.queryChecked = query != nil
}

// hashRule describes a hash field: the pattern it must match and the
// violation when it differs from the hash it must equal.
type hashRule struct {
	key        string
	pattern    string // as named in the pattern constraint
	valid      func(string) bool
	patternMsg string
	equals     string // the constraint of a wrong hash
	equalsMsg  string // its message, given the expected hash
}

var (
	queryHashRule = hashRule{key: "query_hash", pattern: queryHashPattern, valid: validQueryHash,
		patternMsg: "query_hash must be exactly 8 lowercase hex digits",
		equals:     ConstraintQueryHash, equalsMsg: "query_hash must be %s, the first 8 hex digits of sha256(query)"}
	sourceHashRule = hashRule{key: "source_text_hash", pattern: sourceHashPattern, valid: validSourceHash,
		patternMsg: `source_text_hash must be "sha256:" followed by 64 lowercase hex digits`,
		equals:     ConstraintSourceHash, equalsMsg: "source_text_hash must be %s, the hash of the canonical text"}
)

// hashField checks the top-level field r names: a string matching r's
// pattern and, when want is not nil, equal to want() (called only for a
// well-formed hash).
func (v *validator) hashField(obj map[string]any, r hashRule, want func() string) {
	s, ok := v.stringField(obj, "", r.key)
	switch {
	case !ok:
	case !r.valid(s):
		v.add(r.key, ConstraintPattern+":"+r.pattern, s, "%s", r.patternMsg)
	case want != nil:
		if w := want(); s != w {
			v.add(r.key, r.equals, s, r.equalsMsg, w)
		}
	}
}

// summary checks summary and returns its length, ok false when it is not
// a string.
func (v *validator) summary(obj map[string]any) (int, bool) {
	s, ok := v.stringField(obj, "", "summary")
	if !ok {
		return 0, false
	}
	return v.maxLength("summary", s, MaxSummaryChars), true
}

// maxLength returns the length of s, the string at path, and reports it
// when it is over limit characters.
func (v *validator) maxLength(path, s string, limit int) int {
	n := v.length(s)
	if n > limit {
		v.add(path, fmt.Sprintf("%s:%d", ConstraintMaxLength, limit), s, "%s has %d characters; at most %d are allowed", path, n, limit)
	}
	return n
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
		sum += v.maxLength(path, s, MaxKeyPointChars)
		if strings.TrimSpace(s) == "" {
			v.add(path, ConstraintNotBlank, s, "%s is blank", path)
		}
	}
	return sum, ok
}

// snippets checks evidence_snippets and returns the sum of their texts'
// lengths, ok false when the list or a text is not well typed.
func (v *validator) snippets(obj map[string]any, index *TextIndex) (sum int, ok bool) {
	items, ok := v.arrayField(obj, "evidence_snippets", MaxEvidenceSnippets)
	for i, it := range items {
		n, textOK := v.snippet(i, it, index)
		sum, ok = sum+n, ok && textOK
	}
	return sum, ok
}

// counts checks original_chars, digest_chars (equal to digestSum when
// sumOK) and compression_ratio (in [0, 1], and the ratio of the two counts
// when both are well formed).
func (v *validator) counts(obj map[string]any, digestSum int, sumOK bool) {
	original, origOK := v.countField(obj, "original_chars")
	digest, digestOK := v.digestChars(obj, digestSum, sumOK)
	r, ok := v.numberField(obj, "", "compression_ratio")
	if !ok || !v.unitInterval("compression_ratio", r) || !origOK || !digestOK {
		return
	}
	if want := ExpectedCompressionRatio(int(digest), int(original)); math.Abs(r-want) > RatioTolerance {
		v.add("compression_ratio", ConstraintRatio, r, "compression_ratio must be %s = min(digest_chars/original_chars, 1) within %g", strconv.FormatFloat(want, 'g', -1, 64), RatioTolerance)
	}
}

// digestChars checks digest_chars: a count, equal to digestSum when sumOK
// (a count that differs is still returned, ok).
func (v *validator) digestChars(obj map[string]any, digestSum int, sumOK bool) (int64, bool) {
	digest, ok := v.countField(obj, "digest_chars")
	if ok && sumOK && digest != int64(digestSum) {
		v.add("digest_chars", ConstraintDigestSum, digest, "digest_chars must be %d: len(summary) + Σ len(key_points) + Σ len(evidence_snippets[].text)", digestSum)
	}
	return digest, ok
}

// unitInterval reports whether r, the number at path, is in [0, 1], and
// reports the bound it breaks when it is not.
func (v *validator) unitInterval(path string, r float64) bool {
	switch {
	case r < 0:
		v.add(path, ConstraintMinimum+":0", r, "%s must be at least 0", path)
	case r > 1:
		v.add(path, ConstraintMaximum+":1", r, "%s must be at most 1", path)
	default:
		return true
	}
	return false
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
		n = v.maxLength(path+".text", text, MaxSnippetChars)
	}
	if locStr, ok := v.stringField(obj, path, "locator"); ok {
		v.locator(i, path, locStr, text, textOK, index)
	}
	if r, ok := v.numberField(obj, path, "relevance_score"); ok {
		v.unitInterval(path+".relevance_score", r)
	}
	return n, textOK
}

// locator checks the locator string of snippet i (at path, with text when
// textOK): its syntax and, against index when given, its check, recorded in
// v.locators (a failed check without text, or with a syntax error, is one
// too).
func (v *validator) locator(i int, path, locStr, text string, textOK bool, index *TextIndex) {
	loc, err := ParseLocator(locStr)
	if err != nil {
		v.add(path+".locator", ConstraintLocatorSyntax, locStr, "%s.locator: %v", path, err)
	}
	if index == nil {
		return
	}
	var c LocatorCheck
	switch {
	case err != nil:
		c = LocatorCheck{Expected: truncateRunes(text, MaxSnippetChars+1), Failure: ConstraintLocatorSyntax, Message: err.Error()}
	case !textOK:
		c = LocatorCheck{Failure: ConstraintLocatorText, Message: "the snippet has no text to compare with the canonical text"}
	default:
		c = VerifyLocator(loc, index, text)
		if !c.OK {
			v.add(path+".locator", c.Failure, locStr, "%s.locator: %s", path, c.Message)
		}
	}
	c.Index, c.Locator = i, locStr
	v.locators = append(v.locators, c)
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
	items, ok := asArray(val)
	if !ok {
		v.add(key, ConstraintTypeArray, val, "%s is %s; expected an array", key, jsonTypeName(val))
		return nil, false
	}
	if len(items) > maxItems {
		v.add(key, fmt.Sprintf("%s:%d", ConstraintMaxItems, maxItems), val, "%s has %d items; at most %d are allowed", key, len(items), maxItems)
	}
	return items, true
}

// asArray returns the items of an array: a decoded []any as it is, or a
// []string (in a map built in Go) as []any.
func asArray(val any) ([]any, bool) {
	switch a := val.(type) {
	case []any:
		return a, true
	case []string:
		items := make([]any, len(a))
		for i, s := range a {
			items[i] = s
		}
		return items, true
	}
	return nil, false
}

// numberField returns a finite number.
func (v *validator) numberField(obj map[string]any, path, key string) (float64, bool) {
	val, ok := v.lookup(obj, path, key)
	if !ok {
		return 0, false
	}
	n, ok := toNumber(val)
	if !ok || !isFinite(n.f) {
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

// toNumber reads the number types a decoded payload or a map built in Go
// holds: json.Number (an integer when it parses as int64; out-of-range
// exponents give ±Inf), float32/float64 and the sized and unsized signed
// and unsigned integers. Anything else is not a number.
func toNumber(x any) (number, bool) {
	switch n := x.(type) {
	case json.Number:
		return jsonNumber(n)
	case float32, float64:
		return floatNumber(reflect.ValueOf(n).Float()), true
	case int, int8, int16, int32, int64:
		i := reflect.ValueOf(n).Int()
		return number{f: float64(i), i: i, isInt: true}, true
	case uint, uint8, uint16, uint32, uint64:
		return uintNumber(reflect.ValueOf(n).Uint()), true
	}
	return number{}, false
}

// jsonNumber reads a json.Number: an int64 when it is one, else a float
// (±Inf when it overflows); ok false when it is not a number at all.
func jsonNumber(n json.Number) (number, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return number{f: float64(i), i: i, isInt: true}, true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil && !math.IsInf(f, 0) {
		return number{}, false
	}
	return floatNumber(f), true
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
		return finiteOrText(t)
	}
	if n, ok := toNumber(x); ok {
		if n.isInt {
			return n.i
		}
		return finiteOrText(n.f)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return truncateRunes(fmt.Sprintf("%v", x), receivedMaxChars)
	}
	return truncateRunes(string(b), receivedMaxChars)
}

// isFinite reports whether f is neither NaN nor infinite.
func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// finiteOrText is f when it is finite, else its text ("NaN", "+Inf",
// "-Inf"), which JSON can carry.
func finiteOrText(f float64) any {
	if isFinite(f) {
		return f
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
