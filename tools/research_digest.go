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

// sourceParams are a call's source document: text, pages or path (nil
// when not given).
type sourceParams struct {
	Text  *string  `arg:"text"`
	Pages []string `arg:"pages"`
	Path  *string  `arg:"path"`
}

// source is the call's source document as research takes it: which of
// text, pages and path it gives, and their values.
func (s sourceParams) source() research.SourceArgs {
	return research.SourceArgs{Given: givenNames([]string{"text", "pages", "path"}, s.Text != nil, s.Pages != nil, s.Path != nil),
		Text: deref(s.Text), Pages: orEmpty(s.Pages), Path: deref(s.Path)}
}

// givenNames lists the names whose flag in given is set, in order.
func givenNames(names []string, given ...bool) []string {
	var out []string
	for i, g := range given {
		if g {
			out = append(out, names[i])
		}
	}
	return out
}

// The research tool's typed arguments (mcptool.Typed).
type (
	digestValidateArgs struct {
		sourceParams
		Payload  map[string]any `arg:"payload,required"`
		SourceID string         `arg:"source_id"`
		Query    *string        `arg:"query"`
	}
	digestCreateArgs struct {
		sourceParams
		Query       string  `arg:"query,required"`
		SourceID    *string `arg:"source_id"`
		MaxSnippets int     `arg:"max_snippets"`
	}
	digestPutArgs struct {
		sourceParams
		SourceID string         `arg:"source_id,required"`
		Payload  map[string]any `arg:"payload,required"`
	}
	digestKeyArgs struct {
		SourceID  string `arg:"source_id,required"`
		QueryHash string `arg:"query_hash,required"`
	}
	digestGetArgs    = digestKeyArgs
	digestDeleteArgs = digestKeyArgs
	digestListArgs   struct {
		pageArgs
		SourceID string `arg:"source_id"`
	}
	archivePutArgs struct {
		Content   string  `arg:"content,required"`
		ContentID *string `arg:"content_id"`
		ItemType  string  `arg:"item_type"`
	}
	archiveGetArgs struct {
		Hash         *string `arg:"hash"`
		ContentID    *string `arg:"content_id"`
		ArchiveID    *string `arg:"archive_id"`
		ExpectedHash string  `arg:"expected_hash"`
		Offset       int     `arg:"offset"`
		MaxChars     int     `arg:"max_chars"`
	}
)

// sourceNotChecked is the warning of a validation made without the source.
func sourceNotChecked(action string) core.MetaOption {
	return core.WithWarning(warnSourceNotChecked, core.SeverityInfo,
		"The source text was not available, so source_text_hash and the locators were not verified; give text, pages or path (or archive the source with research digest-put).",
		core.DetailsOf(actionContext{Action: action}))
}

func digestValidate(ctx context.Context, d *Deps, _ *mcptool.Request, args digestValidateArgs) mcptool.Result {
	a := research.ValidateArgs{Payload: args.Payload, Source: args.source(), SourceID: args.SourceID, Query: args.Query}
	res, err := researchService(d).Validate(ctx, a)
	if err != nil {
		// Nothing archived under source_id: list what is stored for it.
		return mcptool.Fail(withNextCall(err, errcode.ArchiveNotFound, toResearchDigestList.Call(digestListArgs{SourceID: a.SourceID})))
	}
	if res.Source == "none" {
		return mcptool.OK(res, sourceNotChecked("digest-validate"))
	}
	return mcptool.OK(res)
}

func digestCreate(ctx context.Context, d *Deps, _ *mcptool.Request, a digestCreateArgs) mcptool.Result {
	res, err := researchService(d).Create(ctx, research.CreateArgs{Source: a.source(), Query: a.Query,
		SourceID: deref(a.SourceID), HasSourceID: a.SourceID != nil, MaxSnippets: a.MaxSnippets})
	if err != nil {
		return mcptool.Fail(err)
	}
	switch ctx := (digestSizeContext{OriginalChars: res.CanonicalChars, DigestChars: res.DigestChars, Shortened: res.Shortened}); {
	case slices.Contains(res.Shortened, "evidence_snippets"):
		return mcptool.OK(res, warnOf(warnDigestNotCompressed, fmt.Sprintf("The source (%d characters) is too short to compress: the digest keeps its text as the summary, with no key points or snippets.", res.CanonicalChars), ctx))
	case len(res.Shortened) > 0:
		return mcptool.OK(res, warnOf(warnDigestNotCompressed, fmt.Sprintf("The digest came out longer than its source: %s left out or cut so that it is not.", strings.Join(res.Shortened, " and ")), ctx))
	}
	return mcptool.OK(res)
}

// warnDigestNotCompressed: digest-create could not make a digest shorter
// than its source in full, and says what it kept instead.
const warnDigestNotCompressed = "DIGEST_NOT_COMPRESSED"

func digestPut(ctx context.Context, d *Deps, a digestPutArgs, sweeper *research.Sweeper) mcptool.Result {
	svc := researchService(d)
	svc.Sweeper = sweeper
	res, err := svc.Put(ctx, research.PutArgs{SourceID: a.SourceID, Payload: a.Payload, Source: a.source()})
	if err != nil {
		return mcptool.Fail(err)
	}
	if !res.TextChecked {
		return mcptool.OK(res, sourceNotChecked("digest-put"))
	}
	return mcptool.OK(res)
}

func digestGet(ctx context.Context, d *Deps, _ *mcptool.Request, a digestGetArgs) mcptool.Result {
	res, err := researchService(d).Get(ctx, a.SourceID, a.QueryHash)
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(res)
}

func digestList(ctx context.Context, d *Deps, r *mcptool.Request, a digestListArgs) mcptool.Result {
	sourceID := a.SourceID
	restart := toResearchDigestList.Args(digestListArgs{SourceID: sourceID})
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

func digestDelete(ctx context.Context, d *Deps, _ *mcptool.Request, a digestDeleteArgs) mcptool.Result {
	res, err := researchService(d).Delete(ctx, a.SourceID, a.QueryHash)
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
