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
	var given []string
	for _, k := range []string{"text", "pages", "path"} {
		if r.Args.Has(k) {
			given = append(given, k)
		}
	}
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

// DigestID names a stored digest in one string, as research nodes link
// digests in metadata.digest_ids: "<source_id>#<query_hash>".
func DigestID(sourceID, queryHash string) string { return sourceID + "#" + queryHash }

// parseDigestID splits a DigestID; the query hash is the part after the
// last "#" (source ids may themselves hold "#", e.g. URL fragments).
func parseDigestID(id string) (sourceID, queryHash string, ok bool) {
	i := strings.LastIndexByte(id, '#')
	if i <= 0 {
		return "", "", false
	}
	sourceID, queryHash = id[:i], id[i+1:]
	if len(queryHash) != 8 || strings.Trim(queryHash, "0123456789abcdef") != "" {
		return "", "", false
	}
	return sourceID, queryHash, true
}

// payloadSourceHash returns payload.source_text_hash when it is well formed.
func payloadSourceHash(payload map[string]any) (string, bool) {
	h, ok := payload["source_text_hash"].(string)
	if !ok || len(h) != len("sha256:")+64 || !strings.HasPrefix(h, "sha256:") ||
		strings.Trim(h[len("sha256:"):], "0123456789abcdef") != "" {
		return "", false
	}
	return h, true
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
	in, err := researchInputOf(ctx, d, r)
	if err != nil {
		return Fail(err)
	}
	sourceID := r.Args.String("source_id")
	if in.From != "" && sourceID != "" {
		return Fail(core.NewError(errcode.InvalidFormat, "Give the source as "+in.From+" or as source_id (its archived text), not both.",
			map[string]any{"field": "source_id", "constraint": "one of text, pages, path, source_id", "received": sourceID}))
	}
	var idx *research.TextIndex
	from := "none"
	switch {
	case in.From != "":
		idx, from = in.canonical(), in.From
	case sourceID != "":
		st, err := researchStore(d)
		if err != nil {
			return Fail(err)
		}
		// The source archived under its id; else the archive entry the
		// payload names (the source may have been archived under another id).
		var found bool
		if idx, found, err = archivedSource(ctx, st, "", sourceID); err != nil {
			return Fail(err)
		}
		if h, ok := payloadSourceHash(payload); !found && ok {
			if idx, found, err = archivedSource(ctx, st, h, ""); err != nil {
				return Fail(err)
			}
		}
		if !found {
			return Fail(core.NewError(errcode.ArchiveNotFound,
				fmt.Sprintf("No source text is archived under source_id %q (it may have expired).", sourceID),
				map[string]any{"field": "source_id", "received": sourceID}).
				WithRemediation("Validate with the source itself (text, pages or path), or store it again with research digest-put.").
				WithRecovery("research", map[string]any{"action": "digest-list", "source_id": sourceID}, nil))
		}
		from = "archive"
	default:
		if h, ok := payloadSourceHash(payload); ok && d.Research != nil {
			var found bool
			if idx, found, err = archivedSource(ctx, d.Research, h, ""); err != nil {
				return Fail(err)
			}
			if found {
				from = "archive"
			}
		}
	}
	opts := research.ValidateOptions{Index: idx}
	if r.Args.Has("query") {
		q := r.Args.String("query")
		opts.Query = &q
	}
	rep := research.Validate(payload, opts)
	data := map[string]any{"valid": rep.Valid, "violations": rep.Violations, "warnings": rep.Warnings, "locators": rep.Locators,
		"text_checked": rep.TextChecked, "query_checked": rep.QueryChecked, "source": from,
		"violation_count": len(rep.Violations), "locators_verified": locatorsOK(rep)}
	var meta []core.MetaOption
	if idx != nil {
		data["source_text_hash"] = idx.SourceHash()
		data["canonical_chars"] = idx.Len()
	} else {
		meta = append(meta, sourceNotChecked("digest-validate"))
	}
	return OK(data, meta...)
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
	return OK(map[string]any{
		"source_id": info.SourceID, "payload": json.RawMessage(research.Marshal(p)),
		"source_text_hash": p.SourceTextHash, "query_hash": p.QueryHash, "canonical_chars": p.OriginalChars,
		"digest_chars": p.DigestChars, "paged": info.Paged, "page_count": len(info.PageSpans),
		"ranking": info.Ranking, "query_terms": nonNilStrings(info.QueryTerms),
	})
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
	} else if h, ok := payloadSourceHash(payload); ok {
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
		if _, _, err := st.ArchivePut(ctx, []byte(idx.Text()), ResearchArchiveMeta{ContentID: sourceID, ItemType: "source",
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
	replaced, err := st.DigestPut(ctx, ResearchDigest{SourceID: sourceID, QueryHash: queryHash, Payload: raw,
		SourceHash: sourceHash, Archived: archived, StoredAt: now})
	if err != nil {
		return Fail(err)
	}
	if !rep.TextChecked {
		meta = append(meta, sourceNotChecked("digest-put"))
	}
	return OK(map[string]any{
		"source_id": sourceID, "query_hash": queryHash, "digest_id": DigestID(sourceID, queryHash),
		"replaced": replaced, "stored_at": now, "source_text_hash": sourceHash, "source_archived": archived,
		"text_checked": rep.TextChecked, "locators_verified": locatorsOK(rep), "warnings": rep.Warnings,
	}, meta...)
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
	return OK(map[string]any{
		"source_id": rec.SourceID, "query_hash": rec.QueryHash, "digest_id": DigestID(rec.SourceID, rec.QueryHash),
		"payload": rec.Payload, "stored_at": rec.StoredAt, "source_text_hash": rec.SourceHash,
		"source_archived": sourceArchivedNow(ctx, st, rec.SourceHash),
	})
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
	fp := core.Fingerprint("research", "digest-list", "", sourceID)
	after, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
	if cerr != nil {
		return Fail(cerr.WithRecovery("research", restart, nil))
	}
	limit := r.Args.IntOr("limit", core.PageList.Default)
	rows, next, err := st.DigestList(ctx, sourceID, after, limit)
	if err != nil {
		return Fail(err)
	}
	items := make([]map[string]any, 0, len(rows))
	for _, rec := range rows {
		b := briefOf(rec.Payload)
		items = append(items, map[string]any{
			"source_id": rec.SourceID, "query_hash": rec.QueryHash, "digest_id": DigestID(rec.SourceID, rec.QueryHash),
			"summary": researchExcerpt(b.Summary, digestListExcerpt), "digest_chars": b.DigestChars,
			"stored_at": rec.StoredAt, "source_text_hash": rec.SourceHash,
		})
	}
	cursor := ""
	if next != "" {
		cursor = core.EncodeCursor(next, fp)
	}
	return OK(map[string]any{"digests": items, "count": len(items)}, core.WithPagination(cursor, limit, nil))
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
	return OK(map[string]any{"source_id": sourceID, "query_hash": queryHash, "digest_id": DigestID(sourceID, queryHash), "deleted": true})
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

// digestSummaries resolves linked digest ids for a research node's task
// context (task prepare): for each of the first maxLinkedDigests ids, the
// summary, key points and the top evidence snippets with their locators,
// or found:false with the reason. It runs its own read transactions, so
// call it after (never inside) a spec read.
func (d *Deps) digestSummaries(ctx context.Context, ids []string) []map[string]any {
	out := []map[string]any{}
	if len(ids) > maxLinkedDigests {
		ids = ids[:maxLinkedDigests]
	}
	for _, id := range ids {
		item := map[string]any{"digest_id": id, "found": false}
		out = append(out, item)
		sourceID, queryHash, ok := parseDigestID(id)
		if !ok {
			item["error"] = "not a digest id (<source_id>#<query_hash>)"
			continue
		}
		item["source_id"], item["query_hash"] = sourceID, queryHash
		if d.Research == nil {
			item["error"] = "no research store"
			continue
		}
		rec, err := d.Research.DigestGet(ctx, sourceID, queryHash)
		if err != nil {
			item["error"] = errorSummary(err)
			continue
		}
		b := briefOf(rec.Payload)
		snippets := b.EvidenceSnippets
		if len(snippets) > maxLinkedSnippets {
			snippets = snippets[:maxLinkedSnippets]
		}
		if snippets == nil {
			snippets = []research.EvidenceSnippet{}
		}
		item["found"] = true
		item["summary"] = b.Summary
		item["key_points"] = nonNilStrings(b.KeyPoints)
		item["evidence_snippets"] = snippets
		item["digest_chars"] = b.DigestChars
		item["source_text_hash"] = rec.SourceHash
		item["stored_at"] = rec.StoredAt
	}
	return out
}
