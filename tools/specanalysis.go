package tools

import (
	"context"
	"strconv"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// analysisParams are the spec tool's parameters used only by these actions.
var analysisParams = []Param{
	idParam("target", "diff: what to compare with — a version number, or another spec_id (default: the version before the current one)."),
	{Name: "threshold", Type: Number, Min: f64(0.1), Max: f64(1), Description: "duplicate-detection: similarity threshold (default 0.8)."},
	{Name: "max_pairs", Type: Integer, Min: f64(1), Max: f64(1000), Description: "duplicate-detection: most pairs to report (default 100)."},
	{Name: "scope", Type: String, Enum: []string{"titles", "descriptions", "both"}, Description: "duplicate-detection: compare titles (default), descriptions, or both together."},
	{Name: "bottleneck_threshold", Type: Integer, Min: f64(1), Max: f64(1000), Description: "analyze-deps: a node that blocks at least this many others is a bottleneck (default 3)."},
}

func specAnalysisActions(d *Deps, readAction func(name, summary string, required, optional []string, latency string, h Handler) Action) []Action {
	plain := func(fn func(sp *specs.Spec, a Args) any) Handler {
		return func(ctx context.Context, r *Request) Result {
			return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
				m := structMap(fn(sp, r.Args))
				m["version"] = sp.Header.Version
				return m, nil, nil
			})
		}
	}
	return []Action{
		readAction("stats", "Counts of nodes, phases, tasks, subtasks and verifications, status counts, max depth, verification coverage and progress.",
			[]string{"spec_id"}, nil, LatencyModerate, plain(func(sp *specs.Spec, _ Args) any { return specs.Stats(sp) })),
		readAction("analyze-deps", "Dependency count, bottlenecks (nodes blocking at least bottleneck_threshold others) and cycles over blocked_by edges.",
			[]string{"spec_id"}, []string{"bottleneck_threshold"}, LatencyModerate, plain(func(sp *specs.Spec, a Args) any {
				return specs.AnalyzeDeps(sp, a.IntOr("bottleneck_threshold", 3))
			})),
		readAction("completeness-check", "A 0–100 completeness score (titles 25%, descriptions 40%, file paths 35%, over the categories that have items) with the issues found.",
			[]string{"spec_id"}, nil, LatencyModerate, plain(func(sp *specs.Spec, _ Args) any { return specs.Completeness(sp) })),
		readAction("duplicate-detection", "Pairs of task/verify nodes whose titles (or descriptions) are similar above threshold; the measure is described in the answer.",
			[]string{"spec_id"}, []string{"threshold", "max_pairs", "scope"}, LatencyModerate, plain(func(sp *specs.Spec, a Args) any {
				th, _ := a.Float("threshold")
				return specs.DuplicateDetection(sp, specs.DuplicateOptions{Threshold: th, MaxPairs: a.IntOr("max_pairs", 0), Scope: a.String("scope")})
			})),
		readAction("diff", "Node-level differences (added, removed, modified with field-level old/new) between a stored version and the current spec, or between two specs.",
			[]string{"spec_id"}, []string{"version", "target"}, LatencyModerate, func(ctx context.Context, r *Request) Result { return specDiff(ctx, d, r) }),
	}
}

func specDiff(ctx context.Context, d *Deps, r *Request) Result {
	specID := r.Args.String("spec_id")
	target := r.Args.String("target")
	from, hasFrom := r.Args.Int("version")
	if n, err := strconv.Atoi(target); err == nil && target != "" {
		from, hasFrom, target = n, true, ""
	}
	if target != "" {
		// Another spec: compare the two current documents.
		var a, b specs.Document
		if err := d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, _ specs.JournalReader) error { a = sp.Document(); return nil }); err != nil {
			return Fail(specError(err, specID))
		}
		if err := d.Specs.ReadSpec(ctx, target, func(sp *specs.Spec, _ specs.JournalReader) error { b = sp.Document(); return nil }); err != nil {
			e := core.AsError(specError(err, target))
			if e.Details != nil {
				e.Details["field"] = "target"
			}
			return Fail(e)
		}
		diff := specs.DiffDocuments(a, b)
		m := structMap(diff)
		m["spec_id"], m["target"], m["from_version"], m["to_version"] = specID, target, a.Version, b.Version
		return OK(m)
	}
	var out map[string]any
	err := d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		if !hasFrom {
			from = int(sp.Header.Version) - 1
		}
		return nil
	})
	if err != nil {
		return Fail(specError(err, specID))
	}
	if from < 1 {
		from = 1
	}
	err = d.Specs.ReadVersion(ctx, specID, int64(from), func(v specs.VersionView) error {
		oldNodes, newNodes := map[string]*specs.Node{}, map[string]*specs.Node{}
		for _, id := range v.ChangedSince() {
			oldNodes[id] = v.NodeAt(id)
			newNodes[id] = v.CurrentNode(id)
		}
		diff := specs.Diff(oldNodes, newNodes)
		diff.Header = specs.DiffHeader(v.VersionHeader(), v.CurrentHeader())
		out = structMap(diff)
		return nil
	})
	if err != nil {
		return Fail(specError(err, specID))
	}
	out["spec_id"], out["from_version"] = specID, from
	return OK(out)
}
