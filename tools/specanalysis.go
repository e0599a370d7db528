package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/research"
	"github.com/specd/specd/specs"
)

// targetPattern keeps paths out of diff's target before the domain checks
// it (an id, a version number or a timestamp: specs.CompareSpecRef).
const targetPattern = `^[0-9A-Za-z][0-9A-Za-z:.,+_ -]*$`

// analysisParams are the spec tool's parameters used only by these actions.
var analysisParams = []mcptool.Param{
	{Name: "target", Type: mcptool.String, MaxLength: specs.MaxIDLength, Pattern: targetPattern, Description: "diff: a version, timestamp or spec_id to compare with (default: the previous version)."},
	{Name: "threshold", Type: mcptool.Number, Min: f64(0.1), Max: f64(1), Description: "duplicate-detection: similarity threshold (default 0.8)."},
	{Name: "max_pairs", Type: mcptool.Integer, Min: f64(1), Max: f64(1000), Clamp: true, Description: "duplicate-detection: most pairs to report (default 100)."},
	{Name: "scope", Type: mcptool.String, Enum: []string{"titles", "descriptions", "both"}, Description: "duplicate-detection: compare titles (default), descriptions, or both together."},
	{Name: "bottleneck_threshold", Type: mcptool.Integer, Min: f64(1), Max: f64(1000), Description: "analyze-deps: a node that blocks at least this many others is a bottleneck (default 3)."},
}

func specAnalysisActions(d *Deps, readAction func(name, summary string, required, optional []string, latency string, answer any, h mcptool.TypedHandler) mcptool.Action) []mcptool.Action {
	return []mcptool.Action{
		readAction("stats", "Counts of nodes, phases, tasks, subtasks and verifications, status counts, max depth, verification coverage and progress.",
			[]string{"spec_id"}, nil, mcptool.LatencyModerate, StatsAnswer{}, analysis(d, func(sp *specs.Spec, _ specArgs) StatsAnswer { return specs.StatsOf(sp) })),
		readAction("analyze-deps", "Dependency count, bottlenecks (nodes blocking at least bottleneck_threshold others) and cycles over blocked_by edges.",
			[]string{"spec_id"}, []string{"bottleneck_threshold"}, mcptool.LatencyModerate, DepsAnswer{}, analysis(d, func(sp *specs.Spec, a analyzeDepsArgs) DepsAnswer {
				return specs.DepsAnalysisOf(sp, intOr(a.BottleneckThreshold, 3))
			})),
		readAction("completeness-check", "A 0–100 completeness score (titles 25%, descriptions 40%, file paths 35%, over the categories that have items) with the issues found.",
			[]string{"spec_id"}, nil, mcptool.LatencyModerate, CompletenessAnswer{}, analysis(d, func(sp *specs.Spec, _ specArgs) CompletenessAnswer { return specs.CompletenessOf(sp) })),
		readAction("duplicate-detection", "Pairs of task/verify nodes whose titles (or descriptions) are similar above threshold; the measure is described in the answer.",
			[]string{"spec_id"}, []string{"threshold", "max_pairs", "scope"}, mcptool.LatencyModerate, DuplicatesAnswer{}, analysis(d, func(sp *specs.Spec, a duplicatesArgs) DuplicatesAnswer {
				return specs.DuplicatesOf(sp, specs.DuplicateOptions{Threshold: a.Threshold, MaxPairs: a.MaxPairs, Scope: a.Scope})
			})),
		readAction("diff", "Node-level differences (added, removed, modified with field-level old/new) between a stored version and the current spec, or between two specs; limit and the token budget cut modified in node order; cursor continues it.",
			[]string{"spec_id"}, []string{"version", "target", "cursor", "limit"}, mcptool.LatencyModerate, SpecDiffAnswer{}, mcptool.Typed(d.specDiff)),
	}
}

// analysis is the handler of a read-only analysis: fn over the call's spec.
func analysis[A specArged, T any](d *Deps, fn func(sp *specs.Spec, a A) T) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, _ *mcptool.Request, a A) mcptool.Result {
		return readTo(ctx, d, a.spec(), func(sp *specs.Spec, _ specs.JournalReader) (T, error) { return fn(sp, a), nil })
	})
}

// The analyses' answers are the domain's results.
type (
	StatsAnswer        = specs.StatsResult
	DepsAnswer         = specs.DepsResult
	CompletenessAnswer = specs.CompletenessResult
	DuplicatesAnswer   = specs.DuplicatesResult
)

// SpecDiffAnswer is spec diff's answer: against a stored version
// (from_version) or another spec (target, from_version and to_version:
// the two specs' versions).
type SpecDiffAnswer struct {
	SpecID      string `json:"spec_id"`
	Target      string `json:"target,omitempty"`
	FromVersion int64  `json:"from_version"`
	ToVersion   int64  `json:"to_version,omitempty"`
	specs.SpecDiff
}

func (d *Deps) specDiff(ctx context.Context, r *mcptool.Request, a specDiffArgs) mcptool.Result {
	c, err := specs.CompareSpecRef(ctx, d.Specs, a.SpecID, a.Target, versionText(a.Version))
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, a.SpecID))
	}
	return diffPage(r, a.SpecID, a.paged(), c)
}

// diffPage answers the diff from the call's cursor on: cursor pages
// continue the modified list after the node id they carry (added, removed
// and header, short lists of ids, are repeated on every page); over the
// token budget, modified is cut in node order. The fingerprint pins the
// spec, both versions and the target, so a cursor from another comparison
// is INVALID_CURSOR. paged: the call gave cursor or limit (then the last
// page also carries its pagination meta).
func diffPage(r *mcptool.Request, specID string, paged bool, c specs.Comparison) mcptool.Result {
	head := SpecDiffAnswer{SpecID: c.OldSpec, Target: c.Target, FromVersion: c.OldVersion}
	if c.Target != "" {
		head.ToVersion = c.NewVersion
	}
	p, err := mcptool.OpenPage(r, "spec", "diff", specID, core.PageLimits{}, toSpecDiff.Args(specDiffArgs{specArgs: specOf(specID)}),
		strconv.FormatInt(c.OldVersion, 10), c.NewSpec, strconv.FormatInt(c.NewVersion, 10))
	if err != nil {
		return mcptool.Fail(err)
	}
	// limit (foundry's cap on reported changes) pages modified; without
	// it a page holds all that fit the token budget.
	modified, more := c.ModifiedPage(p.After, p.Limit)
	answer := func(k int) any {
		a := head
		a.SpecDiff = c.Diff
		a.Modified = modified[:k]
		return a
	}
	var meta []core.MetaOption
	if more {
		meta = append(meta, core.WithPagination(p.Cursor(modified[len(modified)-1].ID, true), p.Limit, nil))
	} else if paged {
		meta = append(meta, core.WithPagination("", len(modified), nil))
	}
	archive := func(spec string, version int64, n *specs.Node) mcptool.ArchiveRef {
		return mcptool.ArchiveRef{ID: research.SpecArchiveID(spec, version, "node:"+n.ID), Content: n}
	}
	l := &mcptool.ListAnswer[specs.NodeDiff]{
		Items: modified, PageSize: len(modified), Answer: answer,
		ID: func(i int) string { return "node:" + modified[i].ID },
		Archive: func(i int) []mcptool.ArchiveRef {
			m := modified[i]
			var refs []mcptool.ArchiveRef
			if n := c.OldNodes[m.ID]; n != nil {
				refs = append(refs, archive(c.OldSpec, c.OldVersion, n))
			}
			if n := c.NewNodes[m.ID]; n != nil {
				refs = append(refs, archive(c.NewSpec, c.NewVersion, n))
			}
			return refs
		},
		Next:     func(kept int) string { return p.Cursor(modified[kept-1].ID, true) },
		Continue: mcptool.ContinueWith("spec", toSpecDiff.Args(specDiffArgs{specArgs: specOf(specID)}), r.Args, "version", "target", "limit"),
	}
	return mcptool.Result{Data: answer(len(modified)), Meta: meta, Degrade: l}
}
