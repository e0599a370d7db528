package tools

import (
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/tools/degrade"
)

// fidelityMeta reports a degraded answer: content_fidelity, the dropped ids,
// their archive hashes and a CONTENT_TRUNCATED warning, which sends the
// caller to research archive-get only when served says it may call it
// (asked only when the answer is degraded).
func fidelityMeta(b degrade.Result, budget int, served func() bool) []core.MetaOption {
	if b.Fidelity == core.FidelityFull {
		return nil
	}
	msg := fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out (fetch them with research archive-get).", b.Fidelity, budget, len(b.Dropped))
	if !served() {
		msg = fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out (read again with a larger max_tokens, or page through them with the calls in data.next_calls when given).", b.Fidelity, budget, len(b.Dropped))
	}
	ctx := core.TruncationContext{DroppedCount: len(b.Dropped), TotalCount: b.Total, Reason: core.TruncatedTokenBudget, BudgetTokens: budget}
	if len(b.Archive) == 0 && len(b.Dropped) > 0 {
		msg = fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out, and their archive ids did not fit either: page through them with the calls in data.next_calls, or read again with a larger max_tokens.", b.Fidelity, budget, len(b.Dropped))
		ctx.ArchiveIDsOmitted = true
	}
	return []core.MetaOption{
		core.WithFidelity(b.Fidelity, b.Dropped, b.Archive),
		core.WithWarning(core.WarnContentTruncated, core.SeverityWarning, msg, core.DetailsOf(ctx)),
	}
}

// docDegrader is spec get's Degrader: degrade.FitMeasured fits the
// document so that the whole envelope (meta included: dropped ids, archive
// hashes, the warning) is within the answer budget.
type docDegrader struct {
	doc        specs.Document
	memo       *degrade.HashMemo
	dataBudget int
	// bare answers with the document itself rather than {spec, version}
	// (the spec resource).
	bare bool
}

// SpecGetAnswer is spec get's answer: the document at the fidelity that
// fits (a specs.Document, degrade.Summary or degrade.Reference), its
// version, and at reference_only the calls that page through the rest.
type SpecGetAnswer struct {
	Spec      any             `json:"spec"`
	Version   int64           `json:"version"`
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

// hasher names dropped items by archive ids pinned to the document's
// version and hashes them through the memo.
func (g *docDegrader) hasher() degrade.Hasher {
	return g.memo.Hasher(func(item string) string {
		return research.SpecArchiveID(g.doc.SpecID, g.doc.Version, item)
	})
}

// fit runs degrade.Fit within budget and shapes its answer.
func (g *docDegrader) fit(budget int) (any, degrade.Result, error) {
	b, err := degrade.Fit(g.doc, budget, g.hasher())
	if err != nil {
		return nil, b, err
	}
	return g.shape(b), b, nil
}

// shape is the answer's data for b (bare: the document itself with
// next_calls beside its fields).
func (g *docDegrader) shape(b degrade.Result) any {
	if !g.bare {
		return SpecGetAnswer{Spec: b.Answer.Spec, Version: g.doc.Version, NextCalls: b.Answer.NextCalls}
	}
	m := mcptool.StructMap(b.Answer.Spec)
	if b.Answer.NextCalls != nil {
		m["next_calls"] = b.Answer.NextCalls
	}
	return m
}

func (g *docDegrader) Degrade(f mcptool.Fit) (any, []core.MetaOption, bool, error) {
	var data any
	var meta []core.MetaOption
	_, ok, err := degrade.FitMeasured(g.doc, g.dataBudget, f.Budget, g.hasher(), func(b degrade.Result) int {
		data, meta = g.shape(b), fidelityMeta(b, f.Budget, func() bool { return f.ArchiveServed })
		return f.Measure(data, meta)
	})
	if err != nil || !ok {
		return nil, nil, false, err
	}
	return data, meta, true, nil
}
