package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/research"
)

// Digest actions: validate, create, put, get, list, delete. Each binds its
// arguments, calls one research.Service method and wraps the result.

// Warning codes of the research tool (tools may add their own to core's).
const (
	warnSourceNotChecked = "SOURCE_NOT_CHECKED"
	warnHashMismatch     = "HASH_MISMATCH"
)

// sourceArgs binds the call's source document: which of text, pages and
// path it gives, and their values.
func sourceArgs(r *mcptool.Request) research.SourceArgs {
	return research.SourceArgs{Given: givenArgs(r, "text", "pages", "path"),
		Text: r.Args.String("text"), Pages: r.Args.Strings("pages"), Path: r.Args.String("path")}
}

// givenArgs lists which of keys the call gives, in the order of keys.
func givenArgs(r *mcptool.Request, keys ...string) []string {
	var given []string
	for _, k := range keys {
		if r.Args.Has(k) {
			given = append(given, k)
		}
	}
	return given
}

// sourceNotChecked is the warning of a validation made without the source.
func sourceNotChecked(action string) core.MetaOption {
	return core.WithWarning(warnSourceNotChecked, core.SeverityInfo,
		"The source text was not available, so source_text_hash and the locators were not verified; give text, pages or path (or archive the source with research digest-put).",
		map[string]any{"action": action})
}

func digestValidate(ctx context.Context, d *Deps, r *mcptool.Request) mcptool.Result {
	a := research.ValidateArgs{Payload: r.Args.Object("payload"), Source: sourceArgs(r), SourceID: r.Args.String("source_id")}
	if r.Args.Has("query") {
		q := r.Args.String("query")
		a.Query = &q
	}
	res, err := researchService(d).Validate(ctx, a)
	if err != nil {
		// Nothing archived under source_id: list what is stored for it.
		return mcptool.Fail(withNextCall(err, errcode.ArchiveNotFound, core.NextCall{Tool: "research", Args: map[string]any{"action": "digest-list", "source_id": a.SourceID}}))
	}
	if res.Source == "none" {
		return mcptool.OK(res, sourceNotChecked("digest-validate"))
	}
	return mcptool.OK(res)
}

func digestCreate(ctx context.Context, d *Deps, r *mcptool.Request) mcptool.Result {
	res, err := researchService(d).Create(ctx, research.CreateArgs{Source: sourceArgs(r), Query: r.Args.String("query"),
		SourceID: r.Args.String("source_id"), HasSourceID: r.Args.Has("source_id"), MaxSnippets: r.Args.IntOr("max_snippets", 0)})
	if err != nil {
		return mcptool.Fail(err)
	}
	switch ctx := map[string]any{"original_chars": res.CanonicalChars, "digest_chars": res.DigestChars, "shortened": res.Shortened}; {
	case slices.Contains(res.Shortened, "evidence_snippets"):
		return mcptool.OK(res, warn(warnDigestNotCompressed, fmt.Sprintf("The source (%d characters) is too short to compress: the digest keeps its text as the summary, with no key points or snippets.", res.CanonicalChars), ctx))
	case len(res.Shortened) > 0:
		return mcptool.OK(res, warn(warnDigestNotCompressed, fmt.Sprintf("The digest came out longer than its source: %s left out or cut so that it is not.", strings.Join(res.Shortened, " and ")), ctx))
	}
	return mcptool.OK(res)
}

// warnDigestNotCompressed: digest-create could not make a digest shorter
// than its source in full, and says what it kept instead.
const warnDigestNotCompressed = "DIGEST_NOT_COMPRESSED"

func digestPut(ctx context.Context, d *Deps, r *mcptool.Request, sweeper *research.Sweeper) mcptool.Result {
	svc := researchService(d)
	svc.Sweeper = sweeper
	res, err := svc.Put(ctx, research.PutArgs{SourceID: r.Args.String("source_id"), Payload: r.Args.Object("payload"), Source: sourceArgs(r)})
	if err != nil {
		return mcptool.Fail(err)
	}
	if !res.TextChecked {
		return mcptool.OK(res, sourceNotChecked("digest-put"))
	}
	return mcptool.OK(res)
}

func digestGet(ctx context.Context, d *Deps, r *mcptool.Request) mcptool.Result {
	res, err := researchService(d).Get(ctx, r.Args.String("source_id"), r.Args.String("query_hash"))
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(res)
}

func digestList(ctx context.Context, d *Deps, r *mcptool.Request) mcptool.Result {
	sourceID := r.Args.String("source_id")
	restart := map[string]any{"action": "digest-list"}
	if sourceID != "" {
		restart["source_id"] = sourceID
	}
	page, err := mcptool.OpenPage(r, "research", "digest-list", "", core.PageList, restart, sourceID)
	if err != nil {
		return mcptool.Fail(err)
	}
	res, next, err := researchService(d).List(ctx, sourceID, page.After, page.Limit)
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(res, page.Meta(page.Cursor(next, next != "")))
}

func digestDelete(ctx context.Context, d *Deps, r *mcptool.Request) mcptool.Result {
	res, err := researchService(d).Delete(ctx, r.Args.String("source_id"), r.Args.String("query_hash"))
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(res)
}

// LinkedDigest is what a research node's task context shows of one linked
// digest (research.LinkedDigest).
type LinkedDigest = research.LinkedDigest

// digestIDsOf reads metadata.digest_ids of a research node
// (research.DigestIDsOf).
func digestIDsOf(metadata map[string]any) []string { return research.DigestIDsOf(metadata) }

// digestSummaries resolves linked digest ids for a research node's task
// context (research.Service.LinkedDigests). It runs its own read
// transactions, so call it after (never inside) a spec read.
func (d *Deps) digestSummaries(ctx context.Context, ids []string) []LinkedDigest {
	return researchService(d).LinkedDigests(ctx, ids)
}
