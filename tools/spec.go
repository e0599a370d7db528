package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

const specDescription = `Use this when you need to read or check a whole spec: list specs by folder, find one, get it (big specs degrade to summary or reference_only within the token budget, with archive ids for what was left out), validate and fix it, see stats, dependency analysis, completeness and duplicate tasks, its history and diffs between versions, the enums it uses, or import/export foundry-format spec files. ` +
	`Use task instead to work through tasks one at a time, and authoring to change the spec's structure. ` +
	`Typical composition: spec list → spec get → spec validate → spec fix (dry_run first) → lifecycle activate.`

// maxJournalInGet bounds the journal entries a spec get reads before
// budgeting (the newest ones; journal list pages through all of them).
const maxJournalInGet = 1000

func specTool(d *Deps) *Tool {
	budget := d.TokenBudget
	if budget <= 0 {
		budget = core.DefaultTokenBudget
	}
	folders := []string{"all"}
	for _, l := range specs.Lifecycles() {
		folders = append(folders, string(l))
	}
	memo := &hashMemo{} // per tool instance: archive ids are unique per store, not per process
	readAction := func(name, summary string, required, optional []string, latency string, h Handler) Action {
		return Action{Name: name, Summary: summary, Required: required, Optional: optional,
			SideEffects: EffectRead, Idempotent: true, Latency: latency, Handler: h}
	}
	t := &Tool{
		Name:        "spec",
		Title:       "specd spec",
		Description: specDescription,
		Params: []Param{
			pSpecID, pDryRun, pExpectedVersion, pCursor, pLimit(core.PageList),
			{Name: "status", Type: String, Enum: folders, Description: "Lifecycle folder to list (default all)."},
			{Name: "include_progress", Type: Boolean, Description: "Include task counts and progress in list rows (default true)."},
			{Name: "query", Type: String, MaxLength: 200, Description: "find: text to match against spec ids and titles."},
			{Name: "max_tokens", Type: Integer, Min: f64(200), Max: f64(float64(budget)), Description: "get: a smaller token budget for this answer (default the server's budget)."},
			{Name: "version", Type: Integer, Min: f64(1), Description: "get/diff: a stored version (spec history lists them)."},
			{Name: "path", Type: String, MaxLength: 4096, Description: "import/export: a directory (or, for import, one spec JSON file) inside the workspace."},
			{Name: "auto_fix", Type: Boolean, Description: "import: apply the auto-fixes before storing (default true)."},
			{Name: "overwrite", Type: Boolean, Description: "import: replace specs that already exist (as a new version; default false: skip them)."},
		},
	}
	t.Actions = []Action{
		readAction("find", "Finds a spec by exact spec_id, or by text over ids and titles (query), and says which folder it is in.",
			nil, []string{"spec_id", "query"}, LatencyFast, func(ctx context.Context, r *Request) Result { return specFind(ctx, d, r) }),
		readAction("get", "The whole spec document with its journal; within the token budget (max_tokens), degrading partial → summary → reference_only.",
			[]string{"spec_id"}, []string{"max_tokens", "version"}, LatencyModerate, func(ctx context.Context, r *Request) Result { return specGet(ctx, d, r, budget, memo) }),
		readAction("list", "Specs of a lifecycle folder (status: all, pending, active, completed, archived), in spec id order, paged.",
			nil, []string{"status", "include_progress", "cursor", "limit"}, LatencyFast, func(ctx context.Context, r *Request) Result { return specList(ctx, d, r) }),
		readAction("validate", "Validation diagnostics {code, message, severity, category, location, suggested_fix, auto_fixable, fix_id}; is_valid means no errors.",
			[]string{"spec_id"}, nil, LatencyModerate, func(ctx context.Context, r *Request) Result {
				return d.read(ctx, r, func(sp *specs.Spec, _ specs.JournalReader) (map[string]any, []core.MetaOption, error) {
					doc := sp.Document()
					return structMap(specs.Validate(&doc)), nil, nil
				})
			}),
		{
			Name: "fix", Summary: "Applies every auto-fixable diagnostic (recount, align parent/child, attach orphans, add missing fields, sync reverse edges, map synonyms); never invents a file_path. dry_run shows the fixes.",
			Required: []string{"spec_id"}, Optional: mutationArgs, SideEffects: EffectWrite, Idempotent: true, Latency: LatencyModerate,
			Handler: func(ctx context.Context, r *Request) Result {
				return d.mutate(ctx, r, func(sp *specs.Spec, _ specs.JournalWriter) (map[string]any, error) {
					doc := sp.Document()
					res := specs.Fix(&doc, specs.FixOptions{Clock: d.clock()})
					if len(res.Applied) > 0 {
						applyDocument(sp, res.Document)
					}
					return map[string]any{"applied": res.Applied, "skipped": res.Skipped, "applied_count": len(res.Applied),
						"is_valid": res.Report.IsValid, "error_count": res.Report.ErrorCount, "warning_count": res.Report.WarningCount}, nil
				})
			},
		},
		readAction("schema", "The enums specs use: node types, statuses, task categories, verification types, journal entry types, blocker types, lifecycle folders and more.",
			nil, nil, LatencyFast, func(ctx context.Context, r *Request) Result {
				return OK(map[string]any{
					"node_types": specs.NodeTypes(), "statuses": specs.Statuses(), "lifecycle_folders": specs.Lifecycles(),
					"task_categories": specs.TaskCategories, "complexities": specs.Complexities, "verification_types": specs.VerificationTypes,
					"verification_results": specs.VerificationResults, "journal_entry_types": specs.JournalEntryTypes, "blocker_types": specs.BlockerTypes,
					"blocking_modes": specs.BlockingModes, "requirement_types": specs.RequirementTypes, "dependency_types": specs.DependencyTypes,
					"risk_levels": specs.RiskLevels, "templates": templateNames(),
				})
			}),
		readAction("history", "Stored versions newest first (the last 50 are kept), each with the action that made it and the nodes it changed; paged.",
			[]string{"spec_id"}, []string{"cursor", "limit"}, LatencyFast, func(ctx context.Context, r *Request) Result { return specHistory(ctx, d, r) }),
		{
			Name: "export", Summary: "Writes spec JSON files in the specs/{pending,active,completed,archived}/ layout under a directory inside the workspace (one spec, or all).",
			Required: []string{"path"}, Optional: []string{"spec_id"},
			// Destructive: it overwrites the spec files already at the path.
			SideEffects: EffectWrite, Idempotent: true, Destructive: true, Latency: LatencySlow, Handler: func(ctx context.Context, r *Request) Result { return specExport(ctx, d, r) },
		},
		{
			Name: "import", Summary: "Imports foundry-format spec JSON (one file, or a specs/ folder with pending/active/completed/archived subfolders) from inside the workspace: validates, fixes (auto_fix), maps folder → lifecycle, reports per file.",
			Required: []string{"path"}, Optional: []string{"auto_fix", "overwrite", "dry_run"},
			// Destructive: with overwrite it replaces existing specs (history keeps them).
			SideEffects: EffectWrite, Destructive: true, Latency: LatencySlow, Handler: func(ctx context.Context, r *Request) Result { return specImport(ctx, d, r) },
		},
	}
	t.Params = append(t.Params, analysisParams...)
	t.Actions = append(t.Actions, specAnalysisActions(d, readAction)...)
	return t
}

// applyDocument makes the view equal to doc, editing only what differs.
func applyDocument(sp *specs.Spec, doc *specs.Document) {
	want := map[string]bool{}
	for id, n := range doc.Hierarchy {
		if n == nil {
			continue
		}
		want[id] = true
		old := sp.Node(id)
		if old == nil || !sameJSON(old, n) {
			c := n.Clone()
			c.ID = id
			sp.Put(c)
		}
	}
	for _, id := range sp.IDs() {
		if !want[id] {
			sp.Delete(id)
		}
	}
	h := sp.Header
	h.Title, h.Metadata, h.Status, h.ProgressPercentage, h.CurrentPhase = doc.Title, doc.Metadata, doc.Status, doc.ProgressPercentage, doc.CurrentPhase
	h.Generated, h.LastUpdated = doc.Generated, doc.LastUpdated
	sp.Header = h
	// Rebuild the store's rollup summaries of the nodes just replaced.
	specs.RecomputeAll(sp)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func specFind(ctx context.Context, d *Deps, r *Request) Result {
	id, q := r.Args.String("spec_id"), strings.ToLower(r.Args.String("query"))
	if id == "" && q == "" {
		return Fail(core.NewError(errcode.MissingRequired, "find needs spec_id or query.", map[string]any{"field": "spec_id", "action": "find"}))
	}
	if id != "" {
		var row map[string]any
		err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			l := sp.Header.Lifecycle
			if l == "" {
				l = specs.LifecyclePending
			}
			row = map[string]any{"found": true, "spec_id": id, "title": sp.Header.Title, "folder": l, "version": sp.Header.Version}
			return nil
		})
		if err != nil {
			return Fail(specError(err, id))
		}
		return OK(row)
	}
	matches := []specs.RepoSummary{}
	after := ""
	for {
		rows, next, err := d.Specs.ListSpecs(ctx, "all", after, core.PageList.Max)
		if err != nil {
			return Fail(err)
		}
		for _, row := range rows {
			if strings.Contains(strings.ToLower(row.SpecID), q) || strings.Contains(strings.ToLower(row.Title), q) {
				matches = append(matches, row)
			}
		}
		if next == "" || len(matches) >= 100 {
			break
		}
		after = next
	}
	if len(matches) > 100 {
		matches = matches[:100]
	}
	res := OK(map[string]any{"found": len(matches) > 0, "query": q, "specs": matches, "count": len(matches)})
	// Over the token budget, the last matches go; their ids are in
	// dropped_content_ids (a longer query narrows the search).
	res.Degrade = &ListAnswer[specs.RepoSummary]{Data: res.Data.(map[string]any), Key: "specs", Items: matches, CountKey: "count",
		ID: func(i int) string { return "item:" + matches[i].SpecID }}
	return res
}

func specGet(ctx context.Context, d *Deps, r *Request, budget int, memo *hashMemo) Result {
	specID := r.Args.String("spec_id")
	if mt, ok := r.Args.Int("max_tokens"); ok && mt < budget {
		budget = mt
	}
	var doc specs.Document
	var err error
	if v, ok := r.Args.Int("version"); ok {
		err = d.Specs.ReadVersion(ctx, specID, int64(v), func(vv specs.VersionView) error {
			doc = vv.Document()
			return nil
		})
		if err == nil {
			err = d.Specs.ReadSpec(ctx, specID, func(_ *specs.Spec, j specs.JournalReader) error {
				entries, _, jerr := j.Entries(0, maxJournalInGet, nil)
				doc.Journal = entries
				return jerr
			})
		}
	} else {
		err = d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, j specs.JournalReader) error {
			doc = sp.Document()
			entries, _, jerr := j.Entries(0, maxJournalInGet, nil)
			doc.Journal = entries
			return jerr
		})
	}
	if err != nil {
		return Fail(specError(err, specID))
	}
	sort.Slice(doc.Journal, func(i, j int) bool { return doc.Journal[i].Seq < doc.Journal[j].Seq })
	b, err := budgetDocument(doc, budget, memo)
	if err != nil {
		return Fail(err)
	}
	b.Data["version"] = doc.Version
	res := OK(b.Data, fidelityMeta(b, budget)...)
	res.Degrade = &docDegrader{doc: doc, memo: memo, dataBudget: budget}
	return res
}

func specList(ctx context.Context, d *Deps, r *Request) Result {
	folder := r.Args.String("status")
	if folder == "" {
		folder = "all"
	}
	fp := core.Fingerprint("spec", "list", "", folder)
	after, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
	if cerr != nil {
		return Fail(cerr.WithRecovery("spec", map[string]any{"action": "list", "status": folder}, nil))
	}
	limit := r.Args.IntOr("limit", core.PageList.Default)
	rows, next, err := d.Specs.ListSpecs(ctx, folder, after, limit)
	if err != nil {
		return Fail(err)
	}
	withProgress := !r.Args.Has("include_progress") || r.Args.Bool("include_progress")
	items := make([]map[string]any, 0, len(rows))
	for _, row := range rows {
		m := map[string]any{"spec_id": row.SpecID, "title": row.Title, "lifecycle": row.Lifecycle, "status": row.Status,
			"version": row.Version, "last_updated": row.LastUpdated}
		if withProgress {
			m["total_tasks"], m["completed_tasks"] = row.TotalTasks, row.CompletedTasks
			m["progress_percentage"], m["current_phase"] = row.ProgressPercentage, row.CurrentPhase
		}
		items = append(items, m)
	}
	cursor := ""
	if next != "" {
		cursor = core.EncodeCursor(next, fp)
	}
	res := OK(map[string]any{"specs": items, "count": len(items), "status": folder}, core.WithPagination(cursor, limit, nil))
	// Over the token budget, the page ends earlier: the last rows go and
	// the cursor continues after the last row kept.
	res.Degrade = &ListAnswer[map[string]any]{Data: res.Data.(map[string]any), Key: "specs", Items: items, CountKey: "count", PageSize: limit,
		ID:   func(i int) string { return "item:" + rows[i].SpecID },
		Next: func(kept int) string { return core.EncodeCursor(rows[kept-1].SpecID, fp) },
		Continue: func(c string) (string, map[string]any) {
			args := map[string]any{"action": "list", "status": folder, "cursor": c}
			for _, k := range []string{"limit", "include_progress"} {
				if r.Args.Has(k) {
					args[k] = r.Args[k]
				}
			}
			return "spec", args
		}}
	return res
}

func specHistory(ctx context.Context, d *Deps, r *Request) Result {
	specID := r.Args.String("spec_id")
	fp := core.Fingerprint("spec", "history", specID)
	key, cerr := core.DecodeCursor(r.Args.String("cursor"), fp)
	if cerr != nil {
		return Fail(cerr.WithRecovery("spec", map[string]any{"action": "history", "spec_id": specID}, nil))
	}
	var before int64
	if key != "" {
		n, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return Fail(core.NewError(errcode.InvalidCursor, "The cursor is not one this server issued.", map[string]any{"field": "cursor"}).
				WithRecovery("spec", map[string]any{"action": "history", "spec_id": specID}, nil))
		}
		before = n
	}
	limit := r.Args.IntOr("limit", core.PageHistory.Default)
	if limit > core.PageHistory.Max {
		return Fail(core.NewError(errcode.InvalidFormat, "limit for history is at most 100.", map[string]any{"field": "limit", "received": limit, "constraint": "≤ 100"}))
	}
	versions, more, err := d.Specs.History(ctx, specID, before, limit)
	if err != nil {
		return Fail(specError(err, specID))
	}
	var revisions []specs.Revision
	_ = d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		revisions = specs.Revisions(sp)
		return nil
	})
	if revisions == nil {
		revisions = []specs.Revision{}
	}
	cursor := ""
	if more && len(versions) > 0 {
		cursor = core.EncodeCursor(strconv.FormatInt(versions[len(versions)-1].Version, 10), fp)
	}
	return OK(map[string]any{"spec_id": specID, "versions": versions, "revisions": revisions}, core.WithPagination(cursor, limit, nil))
}
