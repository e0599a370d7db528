package research

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Service is the application logic of the research tool: digests and the
// content archive over a Store, sources read from the workspace. The tools
// layer builds one per call and turns its results into answers; every
// method's error is a *core.Error (its own, the store's or the
// workspace's), anything else is internal.
type Service struct {
	// Store keeps digests and archived content; nil makes the actions that
	// need it UNAVAILABLE (validation and creation need none).
	Store Store
	// Files opens the workspace for a path source.
	Files func() (FileReader, error)
	// Clock is the clock of archived_at, stored_at and the retention
	// cutoff (nil: the wall clock).
	Clock core.Clock
	// Retention is how long archived content is kept; 0 keeps it forever.
	Retention time.Duration
	// Sweeper paces the retention sweep; nil never sweeps.
	Sweeper *Sweeper
	// MaxChars bounds a source (text, pages in all, a path's file) in
	// characters.
	MaxChars int
}

// SweepEvery bounds how often a write to the archive may sweep it.
const SweepEvery = time.Hour

// ListExcerptChars is how much of a digest's summary a listing shows.
const ListExcerptChars = 200

// store returns s.Store, or UNAVAILABLE when the server has none.
func (s Service) store() (Store, error) {
	if s.Store == nil {
		return nil, core.NewError(errcode.Unavailable, "This server has no research store configured.", nil)
	}
	return s.Store, nil
}

// Sweeper runs the retention sweep lazily: at most once per SweepEvery,
// after a successful write to the archive (archive-put, or digest-put with
// a source), removing items archived more than the retention ago. It is
// safe for concurrent use; one Sweeper serves every call of a server.
type Sweeper struct {
	mu   sync.Mutex
	last time.Time
}

// maybe sweeps if retention applies and the last sweep is old enough; it
// returns how many items went. Sweep failures are not the caller's: the
// next write retries after the interval.
func (s Service) maybeSweep(ctx context.Context, st Store) int {
	if s.Retention <= 0 || s.Sweeper == nil {
		return 0
	}
	now := s.Clock.Now()
	if !s.Sweeper.claim(now) {
		return 0
	}
	n, err := st.ArchiveSweep(ctx, now.Add(-s.Retention))
	if err != nil {
		return 0
	}
	return n
}

// claim reports whether a sweep is due at now (there was none, the last
// one is SweepEvery or more ago, or the clock went back before it) and,
// when it is, records now as the last sweep.
func (w *Sweeper) claim(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.last.IsZero() && now.Sub(w.last) < SweepEvery && !now.Before(w.last) {
		return false
	}
	w.last = now
	return true
}

// ValidateArgs is a digest-validate call: the payload, its source (or
// SourceID naming the archived one) and, when given, the query.
type ValidateArgs struct {
	Payload  map[string]any
	Source   SourceArgs
	SourceID string
	Query    *string
}

// ValidateResult is digest-validate's answer: the validator's report (an
// invalid payload is a successful report) and what it was checked against.
// source_text_hash and canonical_chars are present only when a source was
// available (Source is then text, pages, path or archive).
type ValidateResult struct {
	Report
	// Source is where the source text came from: text, pages, path,
	// archive, or none.
	Source           string `json:"source"`
	ViolationCount   int    `json:"violation_count"`
	LocatorsVerified int    `json:"locators_verified"`
	SourceTextHash   string `json:"source_text_hash,omitempty"`
	CanonicalChars   *int   `json:"canonical_chars,omitempty"`
}

// Validate checks a payload against the source the call gives (see
// validationSource), and against the query when given. Errors: the
// source's (INVALID_FORMAT, PAYLOAD_TOO_LARGE, the workspace's),
// ARCHIVE_NOT_FOUND for a source_id with nothing archived, UNAVAILABLE for
// a source_id without a store.
func (s Service) Validate(ctx context.Context, a ValidateArgs) (ValidateResult, error) {
	idx, from, err := s.validationSource(ctx, a.Source, a.SourceID, a.Payload)
	if err != nil {
		return ValidateResult{}, err
	}
	rep := Validate(a.Payload, ValidateOptions{Index: idx, Query: a.Query})
	res := ValidateResult{Report: rep, Source: from, ViolationCount: len(rep.Violations), LocatorsVerified: locatorsOK(rep)}
	if idx != nil {
		n := idx.Len()
		res.SourceTextHash, res.CanonicalChars = idx.SourceHash(), &n
	}
	return res, nil
}

func locatorsOK(rep Report) int {
	n := 0
	for _, l := range rep.Locators {
		if l.OK {
			n++
		}
	}
	return n
}

// CreateArgs is a digest-create call.
type CreateArgs struct {
	Source SourceArgs
	Query  string
	// SourceID is checked (CheckID) when HasSourceID.
	SourceID    string
	HasSourceID bool
	MaxSnippets int
}

// CreateResult is digest-create's answer: the payload and the facts of how
// it was made.
type CreateResult struct {
	SourceID       string        `json:"source_id"`
	Payload        DigestPayload `json:"payload"`
	SourceTextHash string        `json:"source_text_hash"`
	QueryHash      string        `json:"query_hash"`
	CanonicalChars int           `json:"canonical_chars"`
	DigestChars    int           `json:"digest_chars"`
	Paged          bool          `json:"paged"`
	PageCount      int           `json:"page_count"`
	// Ranking is bm25 or position (RankingBM25, RankingPosition).
	Ranking    string   `json:"ranking"`
	QueryTerms []string `json:"query_terms"`
	// Shortened is CreateInfo.Shortened (the tool reports it as a
	// warning).
	Shortened []string `json:"-"`
}

// Create builds a digest from the call's source (CreateDigest). Errors:
// MISSING_REQUIRED without a source, the source's errors, INVALID_FORMAT
// for a bad source_id or a source CreateDigest refuses.
func (s Service) Create(ctx context.Context, a CreateArgs) (CreateResult, error) {
	in, err := s.readInput(ctx, a.Source)
	if err != nil {
		return CreateResult{}, err
	}
	if in.From == "" {
		return CreateResult{}, core.NewError(errcode.MissingRequired, "research action \"digest-create\" needs a source: text, pages or path.",
			map[string]any{"field": "text", "action": "digest-create", "one_of": []string{"text", "pages", "path"}})
	}
	if a.HasSourceID {
		if err := CheckID("source_id", a.SourceID); err != nil {
			return CreateResult{}, err
		}
	}
	p, info, err := CreateDigestContext(ctx, CreateInput{Text: in.Text, Pages: in.Pages, Query: a.Query, SourceID: a.SourceID, MaxSnippets: a.MaxSnippets})
	if err != nil {
		if ctx.Err() != nil {
			return CreateResult{}, err // the deadline: the dispatcher's UNAVAILABLE
		}
		return CreateResult{}, core.NewError(errcode.InvalidFormat, err.Error(), map[string]any{"field": in.From})
	}
	terms := append([]string{}, info.QueryTerms...) // [] rather than null
	return CreateResult{SourceID: info.SourceID, Payload: p, SourceTextHash: p.SourceTextHash, QueryHash: p.QueryHash,
		CanonicalChars: p.OriginalChars, DigestChars: p.DigestChars, Paged: info.Paged, PageCount: len(info.PageSpans),
		Ranking: info.Ranking, QueryTerms: terms, Shortened: info.Shortened}, nil
}

// PutArgs is a digest-put call.
type PutArgs struct {
	SourceID string
	Payload  map[string]any
	Source   SourceArgs
}

// PutResult is digest-put's answer: where the digest is stored and what was
// verified.
type PutResult struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	// DigestID is "<source_id>#<query_hash>", the id research nodes link
	// in metadata.digest_ids.
	DigestID       string `json:"digest_id"`
	Replaced       bool   `json:"replaced"`
	StoredAt       string `json:"stored_at"`
	SourceTextHash string `json:"source_text_hash"`
	SourceArchived bool   `json:"source_archived"`
	// TextChecked says whether the locators were verified against the
	// source; LocatorsVerified counts those that were.
	TextChecked      bool        `json:"text_checked"`
	LocatorsVerified int         `json:"locators_verified"`
	Warnings         []Violation `json:"warnings"`
}

// Put validates a payload and stores it under (SourceID,
// payload.query_hash), replacing an existing one. A given source is
// canonicalised, verifies every locator and is archived under content_id
// = SourceID (which may sweep the archive); without one, the source
// archived under payload.source_text_hash verifies them when present.
// Errors: UNAVAILABLE, INVALID_FORMAT (source_id, the source), the
// source's, VALIDATION_ERROR with details.violations for an invalid
// payload (nothing is stored; when only locators miss their snippets' text,
// details.suggested_value is the payload with them relocated), the store's.
func (s Service) Put(ctx context.Context, a PutArgs) (PutResult, error) {
	st, err := s.store()
	if err != nil {
		return PutResult{}, err
	}
	if err := CheckID("source_id", a.SourceID); err != nil {
		return PutResult{}, err
	}
	in, err := s.readInput(ctx, a.Source)
	if err != nil {
		return PutResult{}, err
	}
	rep, idx, archived, err := checkPut(ctx, st, in, a.Payload)
	if err != nil {
		return PutResult{}, err
	}
	queryHash, _ := a.Payload["query_hash"].(string)
	sourceHash, _ := a.Payload["source_text_hash"].(string)
	now := s.Clock.Now().Format(time.RFC3339)
	if in.From != "" {
		if err := s.archiveSource(ctx, st, idx, a.SourceID, now); err != nil {
			return PutResult{}, err
		}
		archived = true
	}
	raw, err := encodePayload(a.Payload)
	if err != nil {
		return PutResult{}, err
	}
	replaced, err := st.DigestPut(ctx, DigestRecord{SourceID: a.SourceID, QueryHash: queryHash, Payload: raw,
		SourceHash: sourceHash, Archived: archived, StoredAt: now})
	if err != nil {
		return PutResult{}, err
	}
	return PutResult{SourceID: a.SourceID, QueryHash: queryHash, DigestID: DigestID(a.SourceID, queryHash),
		Replaced: replaced, StoredAt: now, SourceTextHash: sourceHash, SourceArchived: archived,
		TextChecked: rep.TextChecked, LocatorsVerified: locatorsOK(rep), Warnings: rep.Warnings}, nil
}

// checkPut validates a digest-put's payload against the source it is
// checked with: the call's source in, or else the archived source the
// payload's source_text_hash names (archived true when it is there), or
// none. Errors: the archive's, and VALIDATION_ERROR for an invalid payload
// (invalidPayload; details.suggested_value is the payload with its
// locators relocated when that fixes it).
func checkPut(ctx context.Context, st Store, in Input, payload map[string]any) (rep Report, idx *TextIndex, archived bool, err error) {
	if in.From != "" {
		idx = in.Canonical()
	} else if h, ok := PayloadSourceHash(payload); ok {
		if idx, archived, err = archivedSource(ctx, st, h, ""); err != nil {
			return Report{}, nil, false, err
		}
	}
	rep = Validate(payload, ValidateOptions{Index: idx})
	if rep.Valid {
		return rep, idx, archived, nil
	}
	e := invalidPayload(rep)
	if fixed, ok := relocated(payload, rep, idx); ok {
		e.WithDetail("suggested_value", fixed)
	}
	return Report{}, nil, false, e
}

// archiveSource archives the canonical source text of a digest-put under
// content_id sourceID, then gives the retention sweep its chance. Errors:
// the archive's.
func (s Service) archiveSource(ctx context.Context, st Store, idx *TextIndex, sourceID, now string) error {
	if _, _, err := st.ArchivePut(ctx, []byte(idx.Text()), ArchiveMeta{ContentID: sourceID, ItemType: "source",
		Reason: "digest source", ArchivedAt: now}); err != nil {
		return err
	}
	s.maybeSweep(ctx, st)
	return nil
}

// invalidPayload is digest-put's VALIDATION_ERROR: every violation and the
// locators that failed.
func invalidPayload(rep Report) *core.Error {
	failed := []LocatorCheck{}
	for _, l := range rep.Locators {
		if !l.OK {
			failed = append(failed, l)
		}
	}
	return core.NewError(errcode.Validation,
		fmt.Sprintf("The payload breaks %d rule(s) of DigestPayload v1.0; nothing was stored.", len(rep.Violations)),
		map[string]any{"field": "payload", "constraint": "DigestPayload v1.0", "received": fmt.Sprintf("%d violation(s)", len(rep.Violations)),
			"violations": rep.Violations, "failed_locators": failed, "text_checked": rep.TextChecked}).
		WithRemediation("Fix every field listed in details.violations (research digest-validate reports the same), or rebuild the digest with research digest-create from the source, then put it again.")
}

// relocated is payload with each snippet whose locator does not match its
// text (locator:text or locator:range) located where that text is in the
// canonical text (its first occurrence; a paged locator keeps its page
// form), when that fixes every violation of rep; ok false otherwise.
func relocated(payload map[string]any, rep Report, idx *TextIndex) (map[string]any, bool) {
	if idx == nil || !onlyMisplacedLocators(rep.Violations) {
		return nil, false
	}
	fixed, ok := copyJSON(payload)
	if !ok {
		return nil, false
	}
	snippets, _ := fixed["evidence_snippets"].([]any)
	for _, c := range rep.Locators {
		if !c.OK && !relocate(snippets, c, idx) {
			return nil, false
		}
	}
	if !Validate(fixed, ValidateOptions{Index: idx}).Valid {
		return nil, false
	}
	return fixed, true
}

// onlyMisplacedLocators reports whether every violation is a locator that
// does not match its snippet's text (locator:text or locator:range).
func onlyMisplacedLocators(violations []Violation) bool {
	for _, v := range violations {
		misplaced := v.Constraint == ConstraintLocatorText || v.Constraint == ConstraintLocatorRange
		if !misplaced || !strings.HasSuffix(v.Path, ".locator") {
			return false
		}
	}
	return true
}

// copyJSON is a deep copy of payload made through its JSON text; false
// when payload does not encode.
func copyJSON(payload map[string]any) (map[string]any, bool) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, false
	}
	var fixed map[string]any
	if json.Unmarshal(raw, &fixed) != nil {
		return nil, false
	}
	return fixed, true
}

// relocate points the locator of snippets[c.Index] (the snippet of the
// failed check c) at the first occurrence of its text in idx, keeping a
// paged locator paged; false when there is no such snippet, its text is
// empty or not in idx, or no page holds it.
func relocate(snippets []any, c LocatorCheck, idx *TextIndex) bool {
	if c.Index < 0 || c.Index >= len(snippets) {
		return false
	}
	sn, _ := snippets[c.Index].(map[string]any)
	text, _ := sn["text"].(string) // "" when sn is not an object
	loc, ok := firstOccurrence(idx.Text(), text)
	if !ok {
		return false
	}
	if old, err := ParseLocator(c.Locator); err == nil && old.Page > 0 {
		if loc.Page = pageOf(idx.Pages(), loc); loc.Page == 0 {
			return false
		}
	}
	sn["locator"] = loc.String()
	return true
}

// firstOccurrence locates the first occurrence of text, not empty, in
// canonical (in code points).
func firstOccurrence(canonical, text string) (Locator, bool) {
	b := strings.Index(canonical, text)
	if text == "" || b < 0 {
		return Locator{}, false
	}
	start := utf8.RuneCountInString(canonical[:b])
	return Locator{Start: start, End: start + utf8.RuneCountInString(text)}, true
}

// pageOf is the 1-based number of the last page that holds loc, 0 when
// none does.
func pageOf(pages []Span, loc Locator) int {
	page := 0
	for i, p := range pages {
		if loc.Start >= p.Start && loc.End <= p.End {
			page = i + 1
		}
	}
	return page
}

// encodePayload writes a decoded payload as compact JSON with sorted keys
// (encoding/json sorts map keys), without HTML escaping; unknown fields
// are kept.
func encodePayload(payload map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(payload); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// GetResult is digest-get's answer: the stored payload as it was put, and
// whether its source text is in the archive now.
type GetResult struct {
	SourceID       string          `json:"source_id"`
	QueryHash      string          `json:"query_hash"`
	DigestID       string          `json:"digest_id"`
	Payload        json.RawMessage `json:"payload"`
	StoredAt       string          `json:"stored_at"`
	SourceTextHash string          `json:"source_text_hash"`
	SourceArchived bool            `json:"source_archived"`
}

// Get reads one digest. UNAVAILABLE, DIGEST_NOT_FOUND.
func (s Service) Get(ctx context.Context, sourceID, queryHash string) (GetResult, error) {
	st, err := s.store()
	if err != nil {
		return GetResult{}, err
	}
	rec, err := st.DigestGet(ctx, sourceID, queryHash)
	if err != nil {
		return GetResult{}, err
	}
	archived := false
	if rec.SourceHash != "" {
		_, _, err := st.ArchiveGet(ctx, rec.SourceHash, "")
		archived = err == nil
	}
	return GetResult{SourceID: rec.SourceID, QueryHash: rec.QueryHash, DigestID: DigestID(rec.SourceID, rec.QueryHash),
		Payload: rec.Payload, StoredAt: rec.StoredAt, SourceTextHash: rec.SourceHash, SourceArchived: archived}, nil
}

// ListResult is a page of digest-list.
type ListResult struct {
	Digests []ListItem `json:"digests"`
	Count   int        `json:"count"`
}

// ListItem is what a listing shows of one stored digest (digest-get has the
// full payload).
type ListItem struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	DigestID  string `json:"digest_id"`
	// Summary is the payload's summary, cut to ListExcerptChars characters
	// ("…" ends a cut one).
	Summary        string `json:"summary"`
	DigestChars    int    `json:"digest_chars"`
	StoredAt       string `json:"stored_at"`
	SourceTextHash string `json:"source_text_hash"`
}

// List pages the stored digests in (source_id, query_hash) order,
// optionally of one source, after the opaque key after; next is "" on the
// last page. UNAVAILABLE, the store's errors.
func (s Service) List(ctx context.Context, sourceID, after string, limit int) (ListResult, string, error) {
	st, err := s.store()
	if err != nil {
		return ListResult{}, "", err
	}
	rows, next, err := st.DigestList(ctx, sourceID, after, limit)
	if err != nil {
		return ListResult{}, "", err
	}
	items := make([]ListItem, 0, len(rows))
	for _, rec := range rows {
		b := briefOf(rec.Payload)
		items = append(items, ListItem{SourceID: rec.SourceID, QueryHash: rec.QueryHash, DigestID: DigestID(rec.SourceID, rec.QueryHash),
			Summary: excerpt(b.Summary, ListExcerptChars), DigestChars: b.DigestChars, StoredAt: rec.StoredAt, SourceTextHash: rec.SourceHash})
	}
	return ListResult{Digests: items, Count: len(items)}, next, nil
}

// DeleteResult is digest-delete's answer.
type DeleteResult struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	DigestID  string `json:"digest_id"`
	Deleted   bool   `json:"deleted"`
}

// Delete removes one digest (its archived source stays until retention
// removes it). UNAVAILABLE, DIGEST_NOT_FOUND.
func (s Service) Delete(ctx context.Context, sourceID, queryHash string) (DeleteResult, error) {
	st, err := s.store()
	if err != nil {
		return DeleteResult{}, err
	}
	if err := st.DigestDelete(ctx, sourceID, queryHash); err != nil {
		return DeleteResult{}, err
	}
	return DeleteResult{SourceID: sourceID, QueryHash: queryHash, DigestID: DigestID(sourceID, queryHash), Deleted: true}, nil
}

// brief is what a listing (or a task's context) shows of a digest.
type brief struct {
	Summary          string            `json:"summary"`
	KeyPoints        []string          `json:"key_points"`
	EvidenceSnippets []EvidenceSnippet `json:"evidence_snippets"`
	DigestChars      int               `json:"digest_chars"`
}

func briefOf(raw json.RawMessage) brief {
	var b brief
	_ = json.Unmarshal(raw, &b) // stored payloads were validated; a bad one shows as empty
	return b
}

// excerpt cuts s to n characters, adding "…" when cut.
func excerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
