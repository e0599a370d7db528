package research

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// validFixture returns a payload that is valid against its canonical text
// and query.
func validFixture(t testing.TB) (DigestPayload, string, string) {
	t.Helper()
	text := Canonicalize("<p>The quick brown fox jumps over the lazy dog.</p> <p>Foxes are quick.</p>")
	query := "quick fox"
	summary := "The quick brown fox jumps over the lazy dog."
	kp := []string{"Foxes are quick."}
	snip := EvidenceSnippet{Text: "Foxes are quick.", Locator: "char:45-61", RelevanceScore: 0.9}
	p := DigestPayload{
		Version:          Version,
		ContentType:      ContentType,
		QueryHash:        QueryHash(query),
		Summary:          summary,
		KeyPoints:        kp,
		EvidenceSnippets: []EvidenceSnippet{snip},
		OriginalChars:    61,
		SourceTextHash:   SourceTextHash(text),
	}
	p.DigestChars = 44 + 16 + 16
	p.CompressionRatio = ExpectedCompressionRatio(p.DigestChars, p.OriginalChars)
	return p, text, query
}

func toMap(t testing.TB, p DigestPayload) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(marshal(t, p), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidateFixture(t *testing.T) {
	p, text, query := validFixture(t)
	for name, payload := range map[string]any{
		"struct": p, "pointer": &p, "bytes": marshal(t, p), "raw": json.RawMessage(marshal(t, p)), "map": toMap(t, p),
	} {
		r := Validate(payload, ValidateOptions{CanonicalText: &text, Query: &query})
		if !r.Valid || len(r.Violations) != 0 || len(r.Warnings) != 0 {
			t.Fatalf("%s: %+v", name, r)
		}
		if !r.TextChecked || !r.QueryChecked || len(r.Locators) != 1 || !r.Locators[0].OK {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	r := Validate(p, ValidateOptions{})
	if !r.Valid || r.TextChecked || r.QueryChecked || len(r.Locators) != 0 {
		t.Fatalf("without text: %+v", r)
	}
}

// paths returns "path constraint" of every violation, sorted.
func paths(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Path+" "+v.Constraint)
	}
	sort.Strings(out)
	return out
}

func TestValidateViolations(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		want   []string // "path constraint", sorted
	}{
		{"missing version", func(m map[string]any) { delete(m, "version") }, []string{"version required"}},
		{"wrong version", func(m map[string]any) { m["version"] = "2.0" }, []string{"version const:1.0"}},
		{"version not a string", func(m map[string]any) { m["version"] = 1.0 }, []string{"version type:string"}},
		{"content type", func(m map[string]any) { m["content_type"] = "digest/v2" }, []string{"content_type const:digest/v1"}},
		{"query hash pattern", func(m map[string]any) { m["query_hash"] = "ABCDEF12" }, []string{"query_hash pattern:^[a-f0-9]{8}$"}},
		{"query hash mismatch", func(m map[string]any) { m["query_hash"] = "00000000" }, []string{"query_hash equals:query"}},
		{"summary too long", func(m map[string]any) {
			m["summary"] = long(2001)
			m["digest_chars"] = 2001 + 32
			m["compression_ratio"] = 1.0
		}, []string{"summary maxLength:2000"}},
		{"summary 2000 code points is fine", func(m map[string]any) {
			m["summary"] = long(2000)
			m["digest_chars"] = 2000 + 32
			m["compression_ratio"] = 1.0
		}, nil},
		{"summary null", func(m map[string]any) { m["summary"] = nil }, []string{"summary type:string"}},
		{"key points too many", func(m map[string]any) {
			kp := make([]any, 11)
			for i := range kp {
				kp[i] = "k"
			}
			m["key_points"] = kp
			m["digest_chars"] = 44 + 11 + 16
			m["compression_ratio"] = 1.0
		}, []string{"key_points maxItems:10"}},
		{"key point blank, long, wrong type", func(m map[string]any) {
			m["key_points"] = []any{" \t", long(501), 7}
		}, []string{"key_points[0] notBlank", "key_points[1] maxLength:500", "key_points[2] type:string"}},
		{"key points not an array", func(m map[string]any) { m["key_points"] = "x" }, []string{"key_points type:array"}},
		{"snippet fields", func(m map[string]any) {
			s := m["evidence_snippets"].([]any)[0].(map[string]any)
			s["relevance_score"] = 1.5
			s["locator"] = "line:4"
			s["extra"] = true
		}, []string{"evidence_snippets[0].locator locator:syntax", "evidence_snippets[0].relevance_score maximum:1"}},
		{"snippet score negative and string", func(m map[string]any) {
			m["evidence_snippets"] = []any{
				map[string]any{"text": "Foxes are quick.", "locator": "char:45-61", "relevance_score": -0.1},
				map[string]any{"text": "", "locator": "char:0-0", "relevance_score": "high"},
			}
		}, []string{"evidence_snippets[0].relevance_score minimum:0", "evidence_snippets[1].relevance_score type:number"}},
		{"snippet missing fields", func(m map[string]any) {
			m["evidence_snippets"] = []any{map[string]any{}}
		}, []string{"evidence_snippets[0].locator required", "evidence_snippets[0].relevance_score required", "evidence_snippets[0].text required"}},
		{"snippet not an object", func(m map[string]any) { m["evidence_snippets"] = []any{"x"} }, []string{"evidence_snippets[0] type:object"}},
		{"snippet text too long", func(m map[string]any) {
			s := m["evidence_snippets"].([]any)[0].(map[string]any)
			s["text"] = long(501)
			m["digest_chars"] = 44 + 16 + 501
			m["compression_ratio"] = 1.0
		}, []string{"evidence_snippets[0].locator locator:text", "evidence_snippets[0].text maxLength:500"}},
		{"locator mismatch", func(m map[string]any) {
			s := m["evidence_snippets"].([]any)[0].(map[string]any)
			s["locator"] = "char:44-60"
		}, []string{"evidence_snippets[0].locator locator:text"}},
		{"locator outside text", func(m map[string]any) {
			m["evidence_snippets"].([]any)[0].(map[string]any)["locator"] = "char:45-99"
		}, []string{"evidence_snippets[0].locator locator:range"}},
		{"locator page", func(m map[string]any) {
			m["evidence_snippets"].([]any)[0].(map[string]any)["locator"] = "page:2:char:45-61"
		}, []string{"evidence_snippets[0].locator locator:page"}},
		{"page 1 of a single text", func(m map[string]any) {
			m["evidence_snippets"].([]any)[0].(map[string]any)["locator"] = "page:1:char:45-61"
		}, nil},
		{"too many snippets", func(m map[string]any) {
			var s []any
			for i := 0; i < 11; i++ {
				s = append(s, map[string]any{"text": "Foxes are quick.", "locator": "char:45-61", "relevance_score": 0.5})
			}
			m["evidence_snippets"] = s
			m["digest_chars"] = 44 + 16 + 11*16
			m["compression_ratio"] = 1.0
		}, []string{"evidence_snippets maxItems:10"}},
		{"counts wrong types", func(m map[string]any) {
			m["original_chars"] = 1.5
			m["digest_chars"] = "76"
		}, []string{"digest_chars type:integer", "original_chars type:integer"}},
		{"counts negative", func(m map[string]any) {
			m["original_chars"] = -1
			m["digest_chars"] = -2
		}, []string{"digest_chars minimum:0", "original_chars minimum:0"}},
		{"integral float count is fine", func(m map[string]any) { m["original_chars"] = 61.0 }, nil},
		{"digest chars sum", func(m map[string]any) {
			m["digest_chars"] = 75
			m["compression_ratio"] = 1.0
		}, []string{"digest_chars equals:sum"}},
		{"ratio range", func(m map[string]any) { m["compression_ratio"] = 1.2 }, []string{"compression_ratio maximum:1"}},
		{"ratio value", func(m map[string]any) { m["compression_ratio"] = 0.5 }, []string{"compression_ratio equals:ratio"}},
		{"ratio within tolerance", func(m map[string]any) { m["compression_ratio"] = 1.0 - 5e-7 }, nil},
		{"ratio with zero original", func(m map[string]any) {
			m["original_chars"] = 0
			m["compression_ratio"] = 0.0
		}, []string{"compression_ratio equals:ratio"}},
		{"ratio NaN", func(m map[string]any) { m["compression_ratio"] = math.NaN() }, []string{"compression_ratio type:number"}},
		{"source hash pattern", func(m map[string]any) { m["source_text_hash"] = "sha1:abc" }, []string{"source_text_hash pattern:^sha256:[a-f0-9]{64}$"}},
		{"source hash mismatch", func(m map[string]any) {
			m["source_text_hash"] = "sha256:" + strings.Repeat("0", 64)
		}, []string{"source_text_hash equals:source"}},
		{"unknown fields are warnings", func(m map[string]any) { m["producer"] = "x" }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, text, query := validFixture(t)
			m := toMap(t, p)
			tc.mutate(m)
			r := Validate(m, ValidateOptions{CanonicalText: &text, Query: &query})
			got := paths(r.Violations)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("violations = %q, want %q\n%+v", got, tc.want, r.Violations)
			}
			if r.Valid != (len(tc.want) == 0) {
				t.Fatalf("Valid = %v", r.Valid)
			}
			for _, v := range r.Violations {
				if v.Message == "" {
					t.Errorf("%s: empty message", v.Path)
				}
				if s, ok := v.Received.(string); ok && len([]rune(s)) > receivedMaxChars+1 {
					t.Errorf("%s: received not truncated (%d chars)", v.Path, len([]rune(s)))
				}
			}
		})
	}
}

// TestValidateEverything: a payload breaking every rule gets every
// violation in one report, in schema order.
func TestValidateEverything(t *testing.T) {
	raw := []byte(`{"version":"0.9","content_type":"x","query_hash":"XYZ","summary":` +
		`"` + strings.Repeat("s", 2001) + `","key_points":["", 3],` +
		`"evidence_snippets":[{"text":1,"locator":"char:2-1","relevance_score":2,"why":1},"bad"],` +
		`"original_chars":-5,"digest_chars":1.5,"compression_ratio":-1,"source_text_hash":"md5","new_field":{}}`)
	r := Validate(raw, ValidateOptions{})
	want := []string{
		"version", "content_type", "query_hash", "summary", "key_points[0]", "key_points[1]",
		"evidence_snippets[0].text", "evidence_snippets[0].locator", "evidence_snippets[0].relevance_score",
		"evidence_snippets[1]", "original_chars", "digest_chars", "compression_ratio", "source_text_hash",
	}
	var got []string
	for _, v := range r.Violations {
		got = append(got, v.Path)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths = %v\nwant    %v", got, want)
	}
	if len(r.Warnings) != 2 || r.Warnings[0].Path != "new_field" || r.Warnings[1].Path != "evidence_snippets[0].why" {
		t.Fatalf("warnings = %+v", r.Warnings)
	}
	if r.Violations[3].Received.(string) != strings.Repeat("s", 100)+"…" {
		t.Fatalf("summary received = %v", r.Violations[3].Received)
	}
}

func TestValidateRoot(t *testing.T) {
	for name, tc := range map[string]struct {
		payload    any
		constraint string
	}{
		"bad json":   {[]byte(`{"version":`), ConstraintJSON},
		"trailing":   {[]byte(`{} {}`), ConstraintJSON},
		"array":      {[]byte(`[1]`), ConstraintTypeObject},
		"null":       {[]byte(`null`), ConstraintTypeObject},
		"nil":        {nil, ConstraintTypeObject},
		"nil ptr":    {(*DigestPayload)(nil), ConstraintTypeObject},
		"a string":   {"{}", ConstraintTypeObject},
		"an integer": {42, ConstraintTypeObject},
	} {
		r := Validate(tc.payload, ValidateOptions{})
		if r.Valid || len(r.Violations) != 1 || r.Violations[0].Path != "$" || r.Violations[0].Constraint != tc.constraint {
			t.Errorf("%s: %+v", name, r)
		}
	}
	r := Validate([]byte(`{}`), ValidateOptions{})
	if len(r.Violations) != len(knownFields) {
		t.Fatalf("empty object: %d violations, want %d: %+v", len(r.Violations), len(knownFields), r.Violations)
	}
	for _, v := range r.Violations {
		if v.Constraint != ConstraintRequired {
			t.Fatalf("%+v", v)
		}
	}
}

func TestValidatePaged(t *testing.T) {
	text, _ := CanonicalizePages([]string{"First page text.", "Second page text."})
	p, _, _ := validFixture(t)
	p.SourceTextHash = SourceTextHash(text)
	p.OriginalChars = 35
	p.EvidenceSnippets = []EvidenceSnippet{
		{Text: "Second page", Locator: "page:2:char:18-29", RelevanceScore: 1},
		{Text: "Second page", Locator: "char:18-29", RelevanceScore: 1},
		{Text: "Second page", Locator: "page:1:char:18-29", RelevanceScore: 1},
	}
	p.DigestChars = 44 + 16 + 33
	p.CompressionRatio = 1
	r := Validate(p, ValidateOptions{CanonicalText: &text})
	if got := paths(r.Violations); len(got) != 1 || got[0] != "evidence_snippets[2].locator locator:page" {
		t.Fatalf("%v", got)
	}
	if len(r.Locators) != 3 || !r.Locators[0].OK || !r.Locators[1].OK || r.Locators[2].OK || r.Locators[2].Index != 2 {
		t.Fatalf("%+v", r.Locators)
	}
}

// marshal is p as a client sends it (encoding/json).
func marshal(t testing.TB, p DigestPayload) []byte {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPayloadEncoding: DigestPayload encodes with encoding/json as compact
// JSON with sorted keys (the field order), and Validate reads a
// DigestPayload as that JSON, its non-finite numbers as null and nil lists
// as [].
func TestPayloadEncoding(t *testing.T) {
	p, text, _ := validFixture(t)
	p.Summary = `<a href="x">&</a> "q" \ ` + "\n\u2028\x01\xff"
	b := marshal(t, p)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["summary"] != `<a href="x">&</a> "q" \ `+"\n\u2028\x01\ufffd" {
		t.Fatalf("summary round trip: %q", m["summary"])
	}
	// Keys sorted, compact: re-encoding the decoded map (encoding/json sorts
	// map keys) gives the same bytes.
	// (Valid UTF-8 only: encoding/json writes an invalid byte as \ufffd
	// escaped, and the decoded U+FFFD as itself.)
	p.Summary = strings.ToValidUTF8(p.Summary, "?")
	b = marshal(t, p)
	m = nil
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(m)
	if err != nil || string(again) != string(b) {
		t.Fatalf("not sorted/compact:\n%s\n%s", b, again)
	}
	for _, tc := range []struct {
		p    DigestPayload
		want string
	}{
		{DigestPayload{CompressionRatio: math.Inf(1)}, `"compression_ratio":null`},
		{DigestPayload{CompressionRatio: math.NaN()}, `"compression_ratio":null`},
		{DigestPayload{}, `"evidence_snippets":[]`},
		{DigestPayload{}, `"key_points":[]`},
		{DigestPayload{EvidenceSnippets: []EvidenceSnippet{{RelevanceScore: math.Inf(-1)}}}, `"relevance_score":null`},
	} {
		if got := string(payloadJSON(tc.p)); !strings.Contains(got, tc.want) {
			t.Errorf("payloadJSON: %s lacks %s", got, tc.want)
		}
	}
	r := Validate(DigestPayload{CompressionRatio: math.Inf(1)}, ValidateOptions{CanonicalText: &text})
	found := false
	for _, v := range r.Violations {
		found = found || v.Path == "compression_ratio" && v.Received == nil
	}
	if !found {
		t.Fatalf("an infinite ratio is not reported as null: %+v", r.Violations)
	}
}

func TestValidateLocatorWithoutText(t *testing.T) {
	p, text, _ := validFixture(t)
	m := toMap(t, p)
	m["evidence_snippets"] = []any{map[string]any{"text": 5, "locator": "char:0-3", "relevance_score": 0.5}}
	r := Validate(m, ValidateOptions{CanonicalText: &text})
	if got := paths(r.Violations); strings.Join(got, "|") != "evidence_snippets[0].text type:string" {
		t.Fatalf("%v", got)
	}
	if len(r.Locators) != 1 || r.Locators[0].OK || r.Locators[0].Failure != ConstraintLocatorText {
		t.Fatalf("%+v", r.Locators)
	}
}

func TestHashPatterns(t *testing.T) {
	q := regexp.MustCompile(queryHashPattern)
	h := regexp.MustCompile(sourceHashPattern)
	hex64 := strings.Repeat("0a", 32)
	for _, s := range []string{"", "abcdef12", "ABCDEF12", "abcdef1", "abcdef123", "abcdeg12", "sha256:" + hex64,
		"sha256:" + strings.ToUpper(hex64), "sha256:" + hex64 + "0", "sha256:" + hex64[1:], "SHA256:" + hex64, "sha256:" + hex64[:63] + "\n"} {
		if validQueryHash(s) != q.MatchString(s) || validSourceHash(s) != h.MatchString(s) {
			t.Errorf("%q: query %v/%v source %v/%v", s, validQueryHash(s), q.MatchString(s), validSourceHash(s), h.MatchString(s))
		}
	}
}
