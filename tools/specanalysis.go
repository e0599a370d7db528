package tools

import (
	"context"
	"sort"
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
		readAction("diff", "Node-level differences (added, removed, modified with field-level old/new) between a stored version and the current spec, or between two specs; over the token budget, modified is cut in node order and cursor continues it.",
			[]string{"spec_id"}, []string{"version", "target", "cursor"}, LatencyModerate, func(ctx context.Context, r *Request) Result { return specDiff(ctx, d, r) }),
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
		page, err := diffPage(r, diff, diffSides{specID, a.Version, a.Hierarchy, target, b.Version, b.Hierarchy})
		if err != nil {
			return Fail(err)
		}
		page.Data["spec_id"], page.Data["target"], page.Data["from_version"], page.Data["to_version"] = specID, target, a.Version, b.Version
		return Result{Data: page.Data, Meta: page.meta, Degrade: page}
	}
	var page *diffAnswer
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
		var err error
		page, err = diffPage(r, diff, diffSides{specID, int64(from), oldNodes, specID, v.CurrentHeader().Version, newNodes})
		return err
	})
	if err != nil {
		return Fail(specError(err, specID))
	}
	page.Data["spec_id"], page.Data["from_version"] = specID, from
	return Result{Data: page.Data, Meta: page.meta, Degrade: page}
}

// diffSides are the two node sets a diff compared, each pinned to its spec
// and version so that a dropped modified node can be archived on both sides.
type diffSides struct {
	oldSpec    string
	oldVersion int64
	oldNodes   map[string]*specs.Node
	newSpec    string
	newVersion int64
	newNodes   map[string]*specs.Node
}

// diffAnswer is a diff page: the answer and how it shrinks (its modified
// list, in node order) over the token budget.
type diffAnswer struct {
	*ListAnswer[specs.NodeDiff]
	meta []core.MetaOption
}

// diffPage builds the diff answer from the call's cursor on: cursor pages
// continue the modified list after the node id they carry (added, removed
// and header, short lists of ids, are repeated on every page). The
// fingerprint pins the spec, both versions and the target, so a cursor
// from another comparison is INVALID_CURSOR.
func diffPage(r *Request, diff specs.SpecDiff, s diffSides) (*diffAnswer, error) {
	specID := r.Args.String("spec_id")
	fp := core.Fingerprint("spec", "diff", specID, strconv.FormatInt(s.oldVersion, 10), s.newSpec, strconv.FormatInt(s.newVersion, 10))
	after, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
	if cerr != nil {
		return nil, cerr.WithRecovery("spec", map[string]any{"action": "diff", "spec_id": specID}, nil)
	}
	modified := diff.Modified
	if after != "" {
		i := sort.Search(len(modified), func(i int) bool { return specs.CompareIDs(modified[i].ID, after) > 0 })
		modified = modified[i:]
	}
	diff.Modified = modified
	data := structMap(diff)
	var meta []core.MetaOption
	if r.Args.Has("cursor") {
		meta = append(meta, core.WithPagination("", len(modified), nil))
	}
	archive := func(spec string, version int64, n *specs.Node) ArchiveRef {
		return ArchiveRef{ID: ArchiveID(spec, version, "node:"+n.ID), Content: n}
	}
	l := &ListAnswer[specs.NodeDiff]{
		Data: data, Key: "modified", Items: modified, PageSize: len(modified),
		ID: func(i int) string { return "node:" + modified[i].ID },
		Archive: func(i int) []ArchiveRef {
			m := modified[i]
			var refs []ArchiveRef
			if n := s.oldNodes[m.ID]; n != nil {
				refs = append(refs, archive(s.oldSpec, s.oldVersion, n))
			}
			if n := s.newNodes[m.ID]; n != nil {
				refs = append(refs, archive(s.newSpec, s.newVersion, n))
			}
			return refs
		},
		Next: func(kept int) string { return core.EncodeCursor(modified[kept-1].ID, fp) },
		Continue: func(c string) (string, map[string]any) {
			args := map[string]any{"action": "diff", "spec_id": specID, "cursor": c}
			for _, k := range []string{"version", "target"} {
				if r.Args.Has(k) {
					args[k] = r.Args[k]
				}
			}
			return "spec", args
		},
	}
	return &diffAnswer{ListAnswer: l, meta: meta}, nil
}
