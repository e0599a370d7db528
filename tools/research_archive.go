package tools

import (
	"cmp"
	"context"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/jcs"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/research"
)

// The archive actions. Research content lives in the store's content-addressed
// archive; spec items dropped from budgeted answers are not copied there (a
// read never writes) but pinned by archive ids
// "spec:<spec_id>@<version>/<item>" and served from the store at that version
// (a read never writes; research.SpecItems).

func archivePut(ctx context.Context, d *Deps, a archivePutArgs, sweeper *research.Sweeper) mcptool.Result {
	svc := researchService(d)
	svc.Sweeper = sweeper
	res, err := svc.ArchivePut(ctx, research.ArchivePutArgs{Content: a.Content, ContentID: deref(a.ContentID),
		HasContentID: a.ContentID != nil, ItemType: a.ItemType})
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(res)
}

func archiveGet(ctx context.Context, d *Deps, args archiveGetArgs, budget int) mcptool.Result {
	a := research.ArchiveGetArgs{Given: givenNames([]string{"hash", "content_id", "archive_id"}, args.Hash != nil, args.ContentID != nil, args.ArchiveID != nil),
		Hash: deref(args.Hash), ContentID: deref(args.ContentID), ArchiveID: deref(args.ArchiveID), ExpectedHash: args.ExpectedHash}
	if research.CheckArchiveGet(a) == nil && research.IsSpecArchiveID(a.ArchiveID) {
		return archiveGetSpec(ctx, d, a, budget)
	}
	c, err := researchService(d).ArchiveGet(ctx, a)
	if err != nil {
		// Nothing under that id: list the stored digests (of that source).
		rec := toResearchDigestList.Call(digestListArgs{SourceID: cmp.Or(a.ArchiveID, a.ContentID)})
		return mcptool.Fail(withNextCall(err, errcode.ArchiveNotFound, rec))
	}
	return archiveWindowAnswer(c, args.Offset, args.MaxChars, budget)
}

// archiveWindowAnswer answers archived content with the window of its text
// from offset, at most maxChars characters (0: no limit) and what fits the
// token budget.
func archiveWindowAnswer(c research.ArchivedContent, offset, maxChars, budget int) mcptool.Result {
	build := func(budget int) (any, []core.MetaOption, error) {
		res, cut, err := c.Answer(offset, maxChars, max(budget*4-archiveAnswerSlack, 1024))
		if err != nil {
			return nil, nil, err
		}
		var meta []core.MetaOption
		if cut {
			meta = windowCut(res.Window, budget)
		}
		if !c.Verified {
			meta = append(meta, hashMismatch(c.ExpectedHash, c.Hash))
		}
		return res, meta, nil
	}
	data, meta, err := build(budget)
	if err != nil {
		return mcptool.Fail(err)
	}
	res := mcptool.OK(data, meta...)
	// The window is cut by the text's bytes; JSON escapes (quotes, control
	// characters, <, >, &) can make its encoding larger. Over the token
	// budget, cut the window shorter in proportion to the overshoot.
	res.Degrade = mcptool.DegradeFunc(func(f mcptool.Fit) (any, []core.MetaOption, bool, error) {
		b := budget
		for range 6 {
			data, meta, err := build(b)
			if err != nil {
				return nil, nil, false, err
			}
			t := f.Measure(data, meta)
			if t <= f.Budget {
				return data, meta, true, nil
			}
			if b <= archiveAnswerSlack/4 {
				break
			}
			b = max(archiveAnswerSlack/4, b*f.Budget/t*9/10)
		}
		return nil, nil, false, nil
	})
	return res
}

// windowCut reports a window the token budget cut: partial fidelity and a
// CONTENT_TRUNCATED warning saying where to continue.
func windowCut(w research.Window, budget int) []core.MetaOption {
	n, total := w.ReturnedChars, w.TotalChars
	return []core.MetaOption{
		core.WithFidelity(core.FidelityPartial, nil, nil),
		core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
			fmt.Sprintf("The content was cut to %d of %d characters to fit %d tokens; call again with offset %d for the rest.", n, total, budget, w.Offset+n),
			core.DetailsOf(core.TruncationContext{DroppedCount: total - w.Offset - n, TotalCount: total, Reason: core.TruncatedTokenBudget, BudgetTokens: budget})),
	}
}

func hashMismatch(expected, got string) core.MetaOption {
	return core.WithWarning(warnHashMismatch, core.SeverityWarning,
		"The content's hash differs from expected_hash: it is not the content that hash named.",
		core.DetailsOf(hashMismatchContext{ExpectedHash: expected, Hash: got}))
}

// archiveGetSpec serves a spec archive id (research.SpecItems.Get); an item
// over the token budget is answered with the archive ids of its parts in
// meta.content_archive_hashes, at reference_only fidelity.
func archiveGetSpec(ctx context.Context, d *Deps, a research.ArchiveGetArgs, budget int) mcptool.Result {
	items := research.SpecItems{Hash: jcs.Hash, ArchiveID: research.SpecArchiveID, Tokens: mcptool.TokensOf}
	if d.Specs != nil {
		items.Specs = d.Specs
	}
	if d.Research != nil {
		items.Journal = d.Research
	}
	read, err := items.Get(ctx, a.ArchiveID, a.ExpectedHash, budget, archiveAnswerSlack/4)
	if err != nil {
		// The item is gone from the spec (or its version): re-read the spec.
		if ref, perr := research.ParseSpecArchiveID(a.ArchiveID); perr == nil {
			err = withNextCall(err, errcode.ArchiveNotFound, callSpecGet.on(ref.SpecID, ""))
		}
		return mcptool.Fail(err)
	}
	var meta []core.MetaOption
	if r := read.Result; r.ExpectedHash != "" && !r.Verified {
		meta = append(meta, hashMismatch(r.ExpectedHash, r.Hash))
	}
	if len(read.Parts) > 0 {
		meta = append(meta,
			core.WithFidelity(core.FidelityReferenceOnly, []string{read.Result.Item}, read.Parts),
			core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
				fmt.Sprintf("The item (%d tokens) exceeds the %d-token budget; fetch its %d parts (meta.content_archive_hashes) with research archive-get.", read.Tokens, budget, len(read.Parts)),
				core.DetailsOf(core.TruncationContext{DroppedCount: 1, TotalCount: 1, Reason: core.TruncatedTokenBudget, BudgetTokens: budget, Parts: len(read.Parts)})))
	}
	return mcptool.OK(read.Result, meta...)
}
