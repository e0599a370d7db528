package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/research"
)

// Digest actions: validate, create, put, get, list, delete.

// Warning codes of the research tool (contract §2 lets tools add their own).
const (
	warnSourceNotChecked = "SOURCE_NOT_CHECKED"
	warnHashMismatch     = "HASH_MISMATCH"
)

// researchInput is the raw source document of a call: one of text, pages or
// path (From says which; "" when none was given).
type researchInput struct {
	From  string
	Text  string
	Pages []string
}

// researchInputOf reads the call's source: at most one of text, pages and
// path. pages must hold at least one page and at most 5 MB in all; path
// must name a regular file inside the workspace of at most 5 MB.
func researchInputOf(ctx context.Context, d *Deps, r *Request) (researchInput, error) {
	given := givenArgs(r, "text", "pages", "path")
	if len(given) > 1 {
		return researchInput{}, core.NewError(errcode.InvalidFormat,
			fmt.Sprintf("Give one source (text, pages or path), not %s.", strings.Join(given, " and ")),
			map[string]any{"field": given[1], "constraint": "one of text, pages, path", "received": given})
	}
	if len(given) == 0 {
		return researchInput{}, nil
	}
	in := researchInput{From: given[0]}
	switch in.From {
	case "text":
		in.Text = r.Args.String("text")
	case "pages":
		in.Pages = r.Args.Strings("pages")
		if len(in.Pages) == 0 {
			return in, core.NewError(errcode.InvalidFormat, "pages needs at least one page (use text for a single text).",
				map[string]any{"field": "pages", "constraint": "at least 1 item", "received": 0})
		}
		total := 0
		for _, p := range in.Pages {
			total += utf8.RuneCountInString(p)
		}
		if total > core.MaxLargeText {
			return in, core.NewError(errcode.PayloadTooLarge,
				fmt.Sprintf("pages hold %d characters in all; the limit is %d.", total, core.MaxLargeText),
				map[string]any{"field": "pages", "constraint": "max characters", "limit": core.MaxLargeText, "received": total})
		}
	case "path":
		text, err := readWorkspaceText(ctx, d, r.Args.String("path"))
		if err != nil {
			return in, err
		}
		in.Text = text
	}
	return in, nil
}

// givenArgs lists which of keys the call gives, in the order of keys.
func givenArgs(r *Request, keys ...string) []string {
	var given []string
	for _, k := range keys {
		if r.Args.Has(k) {
			given = append(given, k)
		}
	}
	return given
}

// canonical canonicalises the input (page by page for pages) and indexes it.
func (in researchInput) canonical() *research.TextIndex {
	if in.From == "pages" {
		text, spans := research.CanonicalizePages(in.Pages)
		return research.NewTextIndex(text, spans)
	}
	return research.NewTextIndex(research.Canonicalize(in.Text), nil)
}

// readWorkspaceText reads a regular text file inside the workspace through
// core/workspacefs (confined by os.Root, never blocking on a FIFO, under the
// call's deadline), at most core.MaxLargeText characters.
func readWorkspaceText(ctx context.Context, d *Deps, p string) (string, error) {
	ws, err := openWorkspace(d)
	if err != nil {
		return "", err
	}
	defer ws.Close()
	rel, err := ws.Rel(p)
	if err != nil {
		return "", fileError(err)
	}
	// A character is at most 4 bytes.
	b, err := ws.ReadFile(ctx, rel, int64(4*core.MaxLargeText))
	if e, ok := err.(*core.Error); ok && e.Code == errcode.PayloadTooLarge {
		return "", core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("%s has more than %d characters.", workspacefs.Show(rel), core.MaxLargeText),
			map[string]any{"field": "path", "constraint": "max characters", "limit": core.MaxLargeText, "received": workspacefs.Show(rel)})
	}
	if err != nil {
		return "", fileError(err)
	}
	if n := utf8.RuneCount(b); n > core.MaxLargeText {
		return "", core.NewError(errcode.PayloadTooLarge,
			fmt.Sprintf("%s has more than %d characters.", workspacefs.Show(rel), core.MaxLargeText),
			map[string]any{"field": "path", "constraint": "max characters", "limit": core.MaxLargeText, "received": n})
	}
	return string(b), nil
}

// checkResearchID refuses ids with control characters (a NUL would break
// the store's key layout; none belongs in an id).
func checkResearchID(field, id string) error {
	if strings.TrimSpace(id) == "" || strings.IndexFunc(id, unicode.IsControl) >= 0 {
		return core.NewError(errcode.InvalidFormat, field+" must be non-blank text without control characters.",
			map[string]any{"field": field, "constraint": "non-blank, no control characters", "received": id})
	}
	return nil
}

// archivedSource reads the canonical text archived under hash (or, when hash
// is "", under contentID). found is false when nothing is archived there;
// other errors are returned.
func archivedSource(ctx context.Context, st ResearchStore, hash, contentID string) (idx *research.TextIndex, found bool, err error) {
	content, _, err := st.ArchiveGet(ctx, hash, contentID)
	if err != nil {
		if core.AsError(err).Code == errcode.ArchiveNotFound {
			return nil, false, nil
		}
		return nil, false, err
	}
	return research.NewTextIndex(string(content), nil), true, nil
}

func locatorsOK(rep research.Report) int {
	n := 0
	for _, l := range rep.Locators {
		if l.OK {
			n++
		}
	}
	return n
}

// sourceNotChecked is the warning of a validation made without the source.
func sourceNotChecked(action string) core.MetaOption {
	return core.WithWarning(warnSourceNotChecked, core.SeverityInfo,
		"The source text was not available, so source_text_hash and the locators were not verified; give text, pages or path (or archive the source with research digest-put).",
		map[string]any{"action": action})
}

func digestValidate(ctx context.Context, d *Deps, r *Request) Result {
	payload := r.Args.Object("payload")
	idx, from, err := validationSource(ctx, d, r, payload)
	if err != nil {
		return Fail(err)
	}
	opts := research.ValidateOptions{Index: idx}
	if r.Args.Has("query") {
		q := r.Args.String("query")
		opts.Query = &q
	}
	rep := research.Validate(payload, opts)
	data := DigestValidateAnswer{Report: rep, Source: from, ViolationCount: len(rep.Violations), LocatorsVerified: locatorsOK(rep)}
	if idx == nil {
		return OK(data, sourceNotChecked("digest-validate"))
	}
	n := idx.Len()
	data.SourceTextHash, data.CanonicalChars = idx.SourceHash(), &n
	return OK(data)
}

// validationSource finds the source digest-validate checks against, and
// says where it came from: the call's text, pages or path; else the text
// archived under source_id (or, failing that, under the payload's
// source_text_hash: the source may have been archived under another id),
// ARCHIVE_NOT_FOUND when neither is there; else, without either, the
// archive entry the payload names when present ("archive"), or none (nil,
// "none"). Giving a source and source_id is INVALID_FORMAT.
func validationSource(ctx context.Context, d *Deps, r *Request, payload map[string]any) (*research.TextIndex, string, error) {
	in, err := researchInputOf(ctx, d, r)
	if err != nil {
		return nil, "", err
	}
	sourceID := r.Args.String("source_id")
	switch {
	case in.From != "" && sourceID != "":
		return nil, "", core.NewError(errcode.InvalidFormat, "Give the source as "+in.From+" or as source_id (its archived text), not both.",
			map[string]any{"field": "source_id", "constraint": "one of text, pages, path, source_id", "received": sourceID})
	case in.From != "":
		return in.canonical(), in.From, nil
	case sourceID != "":
		st, err := researchStore(d)
		if err != nil {
			return nil, "", err
		}
		idx, found, err := archivedSource(ctx, st, "", sourceID)
		if h, ok := research.PayloadSourceHash(payload); err == nil && !found && ok {
			idx, found, err = archivedSource(ctx, st, h, "")
		}
		if err != nil {
			return nil, "", err
		}
		if !found {
			return nil, "", core.NewError(errcode.ArchiveNotFound,
				fmt.Sprintf("No source text is archived under source_id %q (it may have expired).", sourceID),
				map[string]any{"field": "source_id", "received": sourceID}).
				WithRemediation("Validate with the source itself (text, pages or path), or store it again with research digest-put.").
				WithRecovery("research", map[string]any{"action": "digest-list", "source_id": sourceID}, nil)
		}
		return idx, "archive", nil
	}
	if h, ok := research.PayloadSourceHash(payload); ok && d.Research != nil {
		idx, found, err := archivedSource(ctx, d.Research, h, "")
		if err != nil || found {
			return idx, "archive", err
		}
	}
	return nil, "none", nil
}

// DigestValidateAnswer is digest-validate's answer: the validator's report
// (an invalid payload is a successful report) and what it was checked
// against. source_text_hash and canonical_chars are present only when a
// source was available (source is then text, pages, path or archive).
type DigestValidateAnswer struct {
	research.Report
	// Source is where the source text came from: text, pages, path,
	// archive, or none.
	Source           string `json:"source"`
	ViolationCount   int    `json:"violation_count"`
	LocatorsVerified int    `json:"locators_verified"`
	SourceTextHash   string `json:"source_text_hash,omitempty"`
	CanonicalChars   *int   `json:"canonical_chars,omitempty"`
}

func digestCreate(ctx context.Context, d *Deps, r *Request) Result {
	in, err := researchInputOf(ctx, d, r)
	if err != nil {
		return Fail(err)
	}
	if in.From == "" {
		return Fail(core.NewError(errcode.MissingRequired, "research action \"digest-create\" needs a source: text, pages or path.",
			map[string]any{"field": "text", "action": "digest-create", "one_of": []string{"text", "pages", "path"}}))
	}
	sourceID := r.Args.String("source_id")
	if r.Args.Has("source_id") {
		if err := checkResearchID("source_id", sourceID); err != nil {
			return Fail(err)
		}
	}
	query := r.Args.String("query")
	p, info, err := research.CreateDigest(research.CreateInput{Text: in.Text, Pages: in.Pages, Query: query,
		SourceID: sourceID, MaxSnippets: r.Args.IntOr("max_snippets", 0)})
	if err != nil {
		return Fail(core.NewError(errcode.InvalidFormat, err.Error(), map[string]any{"field": in.From}))
	}
	return OK(DigestCreateAnswer{SourceID: info.SourceID, Payload: p, SourceTextHash: p.SourceTextHash, QueryHash: p.QueryHash,
		CanonicalChars: p.OriginalChars, DigestChars: p.DigestChars, Paged: info.Paged, PageCount: len(info.PageSpans),
		Ranking: info.Ranking, QueryTerms: nonNilStrings(info.QueryTerms)})
}

// DigestCreateAnswer is digest-create's answer: the payload and the facts
// of how it was made.
type DigestCreateAnswer struct {
	SourceID       string                 `json:"source_id"`
	Payload        research.DigestPayload `json:"payload"`
	SourceTextHash string                 `json:"source_text_hash"`
	QueryHash      string                 `json:"query_hash"`
	CanonicalChars int                    `json:"canonical_chars"`
	DigestChars    int                    `json:"digest_chars"`
	Paged          bool                   `json:"paged"`
	PageCount      int                    `json:"page_count"`
	// Ranking is bm25 or position (research.RankingBM25, RankingPosition).
	Ranking    string   `json:"ranking"`
	QueryTerms []string `json:"query_terms"`
}

func digestPut(ctx context.Context, d *Deps, r *Request, sweeper *archiveSweeper) Result {
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	sourceID := r.Args.String("source_id")
	if err := checkResearchID("source_id", sourceID); err != nil {
		return Fail(err)
	}
	payload := r.Args.Object("payload")
	in, err := researchInputOf(ctx, d, r)
	if err != nil {
		return Fail(err)
	}
	var idx *research.TextIndex
	archived := false
	if in.From != "" {
		idx = in.canonical()
	} else if h, ok := research.PayloadSourceHash(payload); ok {
		if idx, archived, err = archivedSource(ctx, st, h, ""); err != nil {
			return Fail(err)
		}
	}
	rep := research.Validate(payload, research.ValidateOptions{Index: idx})
	if !rep.Valid {
		var failed []research.LocatorCheck
		for _, l := range rep.Locators {
			if !l.OK {
				failed = append(failed, l)
			}
		}
		return Fail(core.NewError(errcode.Validation,
			fmt.Sprintf("The payload breaks %d rule(s) of DigestPayload v1.0; nothing was stored.", len(rep.Violations)),
			map[string]any{"field": "payload", "constraint": "DigestPayload v1.0", "received": fmt.Sprintf("%d violation(s)", len(rep.Violations)),
				"violations": rep.Violations, "failed_locators": nonNilChecks(failed), "text_checked": rep.TextChecked}).
			WithRemediation("Fix every field listed in details.violations (research digest-validate reports the same), or rebuild the digest with research digest-create from the source, then put it again."))
	}
	queryHash, _ := payload["query_hash"].(string)
	sourceHash, _ := payload["source_text_hash"].(string)
	now := researchNow(d).Format(time.RFC3339)
	var meta []core.MetaOption
	if in.From != "" {
		if _, _, err := st.ArchivePut(ctx, []byte(idx.Text()), research.ArchiveMeta{ContentID: sourceID, ItemType: "source",
			Reason: "digest source", ArchivedAt: now}); err != nil {
			return Fail(err)
		}
		archived = true
		sweeper.maybe(ctx, d, st)
	}
	raw, err := encodePayload(payload)
	if err != nil {
		return Fail(core.Internal(err))
	}
	replaced, err := st.DigestPut(ctx, research.DigestRecord{SourceID: sourceID, QueryHash: queryHash, Payload: raw,
		SourceHash: sourceHash, Archived: archived, StoredAt: now})
	if err != nil {
		return Fail(err)
	}
	if !rep.TextChecked {
		meta = append(meta, sourceNotChecked("digest-put"))
	}
	return OK(DigestPutAnswer{SourceID: sourceID, QueryHash: queryHash, DigestID: research.DigestID(sourceID, queryHash),
		Replaced: replaced, StoredAt: now, SourceTextHash: sourceHash, SourceArchived: archived,
		TextChecked: rep.TextChecked, LocatorsVerified: locatorsOK(rep), Warnings: rep.Warnings}, meta...)
}

// DigestPutAnswer is digest-put's answer: where the digest is stored and
// what was verified.
type DigestPutAnswer struct {
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
	TextChecked      bool                 `json:"text_checked"`
	LocatorsVerified int                  `json:"locators_verified"`
	Warnings         []research.Violation `json:"warnings"`
}

func nonNilChecks(l []research.LocatorCheck) []research.LocatorCheck {
	if l == nil {
		return []research.LocatorCheck{}
	}
	return l
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

// sourceArchivedNow reports whether the archive holds the text hashed hash.
func sourceArchivedNow(ctx context.Context, st ResearchStore, hash string) bool {
	if hash == "" {
		return false
	}
	_, _, err := st.ArchiveGet(ctx, hash, "")
	return err == nil
}

func digestGet(ctx context.Context, d *Deps, r *Request) Result {
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	rec, err := st.DigestGet(ctx, r.Args.String("source_id"), r.Args.String("query_hash"))
	if err != nil {
		return Fail(err)
	}
	return OK(DigestGetAnswer{SourceID: rec.SourceID, QueryHash: rec.QueryHash, DigestID: research.DigestID(rec.SourceID, rec.QueryHash),
		Payload: rec.Payload, StoredAt: rec.StoredAt, SourceTextHash: rec.SourceHash,
		SourceArchived: sourceArchivedNow(ctx, st, rec.SourceHash)})
}

// DigestGetAnswer is digest-get's answer: the stored payload as it was
// put, and whether its source text is in the archive now.
type DigestGetAnswer struct {
	SourceID       string          `json:"source_id"`
	QueryHash      string          `json:"query_hash"`
	DigestID       string          `json:"digest_id"`
	Payload        json.RawMessage `json:"payload"`
	StoredAt       string          `json:"stored_at"`
	SourceTextHash string          `json:"source_text_hash"`
	SourceArchived bool            `json:"source_archived"`
}

// digestBrief is what a listing (or a task's context) shows of a digest.
type digestBrief struct {
	Summary          string                     `json:"summary"`
	KeyPoints        []string                   `json:"key_points"`
	EvidenceSnippets []research.EvidenceSnippet `json:"evidence_snippets"`
	DigestChars      int                        `json:"digest_chars"`
}

func briefOf(raw json.RawMessage) digestBrief {
	var b digestBrief
	_ = json.Unmarshal(raw, &b) // stored payloads were validated; a bad one shows as empty
	return b
}

func digestList(ctx context.Context, d *Deps, r *Request) Result {
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	sourceID := r.Args.String("source_id")
	restart := map[string]any{"action": "digest-list"}
	if sourceID != "" {
		restart["source_id"] = sourceID
	}
	page, err := OpenPage(r, "research", "digest-list", "", core.PageList, restart, sourceID)
	if err != nil {
		return Fail(err)
	}
	rows, next, err := st.DigestList(ctx, sourceID, page.After, page.Limit)
	if err != nil {
		return Fail(err)
	}
	items := make([]DigestListItem, 0, len(rows))
	for _, rec := range rows {
		b := briefOf(rec.Payload)
		items = append(items, DigestListItem{SourceID: rec.SourceID, QueryHash: rec.QueryHash, DigestID: research.DigestID(rec.SourceID, rec.QueryHash),
			Summary: researchExcerpt(b.Summary, digestListExcerpt), DigestChars: b.DigestChars, StoredAt: rec.StoredAt, SourceTextHash: rec.SourceHash})
	}
	return OK(DigestListAnswer{Digests: items, Count: len(items)}, page.Meta(page.Cursor(next, next != "")))
}

// DigestListAnswer is a page of digest-list; meta.pagination has the
// cursor to the next.
type DigestListAnswer struct {
	Digests []DigestListItem `json:"digests"`
	Count   int              `json:"count"`
}

// DigestListItem is what a listing shows of one stored digest (digest-get
// has the full payload).
type DigestListItem struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	DigestID  string `json:"digest_id"`
	// Summary is the payload's summary, cut to 200 characters ("…" ends a
	// cut one).
	Summary        string `json:"summary"`
	DigestChars    int    `json:"digest_chars"`
	StoredAt       string `json:"stored_at"`
	SourceTextHash string `json:"source_text_hash"`
}

func digestDelete(ctx context.Context, d *Deps, r *Request) Result {
	st, err := researchStore(d)
	if err != nil {
		return Fail(err)
	}
	sourceID, queryHash := r.Args.String("source_id"), r.Args.String("query_hash")
	if err := st.DigestDelete(ctx, sourceID, queryHash); err != nil {
		return Fail(err)
	}
	return OK(DigestDeleteAnswer{SourceID: sourceID, QueryHash: queryHash, DigestID: research.DigestID(sourceID, queryHash), Deleted: true})
}

// DigestDeleteAnswer is digest-delete's answer.
type DigestDeleteAnswer struct {
	SourceID  string `json:"source_id"`
	QueryHash string `json:"query_hash"`
	DigestID  string `json:"digest_id"`
	Deleted   bool   `json:"deleted"`
}

// researchExcerpt cuts s to n characters, adding "…" when cut.
func researchExcerpt(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Linked digests of research nodes (metadata.digest_ids).

// maxLinkedDigests bounds how many linked digests a task context includes,
// and maxLinkedSnippets how many evidence snippets of each.
const (
	maxLinkedDigests  = 10
	maxLinkedSnippets = 3
)

// digestIDsOf reads metadata.digest_ids of a research node: DigestIDs
// ("<source_id>#<query_hash>"), in order, without duplicates.
func digestIDsOf(metadata map[string]any) []string {
	raw, _ := metadata["digest_ids"].([]any)
	seen := map[string]bool{}
	var out []string
	for _, v := range raw {
		if s, ok := v.(string); ok && s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// LinkedDigest is what a research node's task context shows of one linked
// digest: found with its content, or found:false with the reason in error
// (and source_id, query_hash when the id parses).
type LinkedDigest struct {
	DigestID  string `json:"digest_id"`
	Found     bool   `json:"found"`
	Error     string `json:"error,omitempty"`
	SourceID  string `json:"source_id,omitempty"`
	QueryHash string `json:"query_hash,omitempty"`
	// The content's fields are present only when found.
	*LinkedDigestContent
}

// LinkedDigestContent is a found linked digest: its summary, key points,
// top evidence snippets (at most maxLinkedSnippets) with their locators.
type LinkedDigestContent struct {
	Summary          string                     `json:"summary"`
	KeyPoints        []string                   `json:"key_points"`
	EvidenceSnippets []research.EvidenceSnippet `json:"evidence_snippets"`
	DigestChars      int                        `json:"digest_chars"`
	SourceTextHash   string                     `json:"source_text_hash"`
	StoredAt         string                     `json:"stored_at"`
}

// digestSummaries resolves linked digest ids for a research node's task
// context (task prepare): for each of the first maxLinkedDigests ids, the
// summary, key points and the top evidence snippets with their locators,
// or found:false with the reason. It runs its own read transactions, so
// call it after (never inside) a spec read.
func (d *Deps) digestSummaries(ctx context.Context, ids []string) []LinkedDigest {
	out := []LinkedDigest{}
	if len(ids) > maxLinkedDigests {
		ids = ids[:maxLinkedDigests]
	}
	for _, id := range ids {
		out = append(out, d.linkedDigest(ctx, id))
	}
	return out
}

func (d *Deps) linkedDigest(ctx context.Context, id string) LinkedDigest {
	item := LinkedDigest{DigestID: id}
	sourceID, queryHash, ok := research.ParseDigestID(id)
	if !ok {
		item.Error = "not a digest id (<source_id>#<query_hash>)"
		return item
	}
	item.SourceID, item.QueryHash = sourceID, queryHash
	if d.Research == nil {
		item.Error = "no research store"
		return item
	}
	rec, err := d.Research.DigestGet(ctx, sourceID, queryHash)
	if err != nil {
		item.Error = errorSummary(err)
		return item
	}
	b := briefOf(rec.Payload)
	snippets := b.EvidenceSnippets
	if len(snippets) > maxLinkedSnippets {
		snippets = snippets[:maxLinkedSnippets]
	}
	if snippets == nil {
		snippets = []research.EvidenceSnippet{}
	}
	item.Found = true
	item.LinkedDigestContent = &LinkedDigestContent{Summary: b.Summary, KeyPoints: nonNilStrings(b.KeyPoints), EvidenceSnippets: snippets,
		DigestChars: b.DigestChars, SourceTextHash: rec.SourceHash, StoredAt: rec.StoredAt}
	return item
}
