package tools

import (
	"context"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/tools/degrade"
)

const specDescription = `Use this when you need to read or check a whole spec: list specs by folder, find one, get it (big specs degrade to summary or reference_only within the token budget, with archive ids for what was left out), validate and fix it, see stats, dependency analysis, completeness and duplicate tasks, its history and diffs between versions, the enums it uses, or import/export foundry-format spec files. ` +
	`Use task instead to work through tasks one at a time, and authoring to change the spec's structure. ` +
	`Typical composition: spec list → spec get → spec validate → spec fix (dry_run first) → lifecycle activate.`

// maxJournalInGet bounds the journal entries a spec get reads before
// budgeting (the newest ones; journal list pages through all of them).
const maxJournalInGet = 1000

func specTool(d *Deps) *mcptool.Tool {
	budget := d.TokenBudget
	if budget <= 0 {
		budget = core.DefaultTokenBudget
	}
	folders := []string{"all"}
	for _, l := range specs.Lifecycles() {
		folders = append(folders, string(l))
	}
	memo := &degrade.HashMemo{} // per tool instance: archive ids are unique per store, not per process
	readAction := func(name, summary string, required, optional []string, latency string, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: required, Optional: optional,
			SideEffects: mcptool.EffectRead, Idempotent: true, Latency: latency, Answer: answer, Typed: h}
	}
	t := &mcptool.Tool{
		Name:        "spec",
		Title:       "specd spec",
		Description: specDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion, pCursor, pLimit(core.PageList),
			{Name: "status", Type: mcptool.String, Enum: folders, Synonyms: specs.LifecycleSynonyms, Description: "Lifecycle folder to list (default all)."},
			{Name: "include_progress", Type: mcptool.Boolean, Description: "Include task counts and progress in list rows (default true)."},
			{Name: "query", Type: mcptool.String, MaxLength: 200, Description: "find: text to match against spec ids and titles."},
			{Name: "max_tokens", Type: mcptool.Integer, Min: f64(200), Max: f64(float64(budget)), Clamp: true, Description: "get: a smaller token budget for this answer (default the server's budget)."},
			{Name: "version", Type: mcptool.IntOrString, Min: f64(1), MaxLength: 64, Description: "get/diff/history: a version, or a timestamp (the version current then)."},
			{Name: "path", Type: mcptool.String, MaxLength: 4096, Description: "import/export: a directory (or, for import, one spec JSON file) inside the workspace."},
			{Name: "auto_fix", Type: mcptool.Boolean, Description: "import: apply the auto-fixes before storing (default true)."},
			{Name: "overwrite", Type: mcptool.Boolean, Description: "import: replace specs that already exist (as a new version; default false: skip them)."},
			{Name: "create_backup", Type: mcptool.Boolean},
		},
	}
	t.Actions = []mcptool.Action{
		readAction("find", "Finds a spec by exact spec_id, or by text over ids and titles (query), and says which folder it is in.",
			nil, []string{"spec_id", "query"}, mcptool.LatencyFast, SpecFindAnswer{}, mcptool.Typed(d.specFind)),
		readAction("get", "The whole spec document with its journal; within the token budget (max_tokens), degrading partial → summary → reference_only.",
			[]string{"spec_id"}, []string{"max_tokens", "version"}, mcptool.LatencyModerate, SpecGetAnswer{}, mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a specGetArgs) mcptool.Result {
				return specGet(ctx, d, r, a, budget, memo)
			})),
		readAction("list", "Specs of a lifecycle folder (status: all, pending, active, completed, archived), in spec id order (as foundry's), paged; a row's status is its folder, work_status the spec's own.",
			nil, []string{"status", "include_progress", "cursor", "limit"}, mcptool.LatencyFast, SpecListAnswer{}, mcptool.Typed(d.specList)),
		readAction("validate", "Validation diagnostics {code, message, severity, category, location, suggested_fix, auto_fixable, fix_id}; is_valid means no errors.",
			[]string{"spec_id"}, []string{"auto_fix", "create_backup"}, mcptool.LatencyModerate, SpecValidateAnswer{}, mcptool.Typed(d.specValidate)),
		{
			Name: "fix", Summary: "Applies every auto-fixable diagnostic (recount, align parent/child, attach orphans, add missing fields, sync reverse edges, map synonyms); never invents a file_path. dry_run shows the fixes.",
			Required: []string{"spec_id"}, Optional: append([]string{"auto_fix", "create_backup"}, mutationArgs...), SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyModerate,
			Answer: SpecFixAnswer{}, Typed: mcptool.Typed(d.specFix),
		},
		readAction("schema", "The enums specs use: node types, statuses, task categories, verification types, journal entry types, blocker types, lifecycle folders and more.",
			nil, nil, mcptool.LatencyFast, SpecSchemaAnswer{}, mcptool.Typed(specSchema)),
		readAction("history", "Stored versions newest first (the last 50 are kept), each with the action that made it and the nodes it changed; paged; version starts the list at that version (or timestamp).",
			[]string{"spec_id"}, []string{"version", "cursor", "limit"}, mcptool.LatencyFast, SpecHistoryAnswer{}, mcptool.Typed(d.specHistory)),
		{
			Name: "export", Summary: "Writes spec JSON files in the specs/{pending,active,completed,archived}/ layout under a directory inside the workspace (one spec, or all).",
			Required: []string{"path"}, Optional: []string{"spec_id"},
			// Destructive: it overwrites the spec files already at the path.
			SideEffects: mcptool.EffectWrite, Idempotent: true, Destructive: true, Latency: mcptool.LatencySlow, Answer: SpecExportAnswer{}, Typed: mcptool.Typed(d.specExport),
		},
		{
			Name: "import", Summary: "Imports foundry-format spec JSON (one file, or a specs/ folder with pending/active/completed/archived subfolders) from inside the workspace: validates, fixes (auto_fix), maps folder → lifecycle, reports per file.",
			Required: []string{"path"}, Optional: []string{"auto_fix", "overwrite", "dry_run"},
			// Destructive: with overwrite it replaces existing specs (history keeps them).
			SideEffects: mcptool.EffectWrite, Destructive: true, Latency: mcptool.LatencySlow, Answer: SpecImportAnswer{}, Typed: mcptool.Typed(d.specImport),
		},
	}
	t.Params = append(t.Params, analysisParams...)
	t.Actions = append(t.Actions, specAnalysisActions(d, readAction)...)
	t.Actions = append(t.Actions, specFoundryActions(d, readAction)...)
	return t
}

// SpecFindAnswer is spec find's answer: by spec_id, the spec's folder
// (spec_id, title, folder, version); by query, the matches (query, specs,
// count; at most 100).
type SpecFindAnswer struct {
	Found   bool                 `json:"found"`
	SpecID  string               `json:"spec_id,omitempty"`
	Title   string               `json:"title,omitempty"`
	Folder  specs.Lifecycle      `json:"folder,omitempty"`
	Version int64                `json:"version,omitempty"`
	Query   string               `json:"query,omitempty"`
	Specs   *[]specs.RepoSummary `json:"specs,omitempty"`
	Count   *int                 `json:"count,omitempty"`
}

func (d *Deps) specFind(ctx context.Context, _ *mcptool.Request, a specFindArgs) mcptool.Result {
	id, q := a.SpecID, strings.ToLower(a.Query)
	if id == "" && q == "" {
		return mcptool.Fail(core.FieldError(errcode.MissingRequired, "find needs spec_id or query.",
			core.FieldDetail{Field: "spec_id", Action: "find"}))
	}
	if id != "" {
		return readTo(ctx, d, id, func(sp *specs.Spec, _ specs.JournalReader) (SpecFindAnswer, error) {
			return SpecFindAnswer{Found: true, SpecID: id, Title: sp.Header.Title, Folder: specs.LifecycleOf(sp), Version: sp.Header.Version}, nil
		})
	}
	matches, err := specs.FindSpecs(ctx, d.Specs, q, core.PageList.Max)
	if err != nil {
		return mcptool.Fail(err)
	}
	answer := func(k int) any {
		m := matches[:k]
		return SpecFindAnswer{Found: len(matches) > 0, Query: q, Specs: &m, Count: &k}
	}
	res := mcptool.OK(answer(len(matches)))
	// Over the token budget, the last matches go; their ids are in
	// dropped_content_ids (a longer query narrows the search).
	res.Degrade = &mcptool.ListAnswer[specs.RepoSummary]{Items: matches, Answer: answer,
		ID: func(i int) string { return "item:" + matches[i].SpecID }}
	return res
}

func specGet(ctx context.Context, d *Deps, r *mcptool.Request, a specGetArgs, budget int, memo *degrade.HashMemo) mcptool.Result {
	specID := a.SpecID
	if a.MaxTokens != nil && *a.MaxTokens < budget {
		budget = *a.MaxTokens
	}
	doc, err := specs.ReadDocumentRef(ctx, d.Specs, specID, versionText(a.Version), maxJournalInGet)
	if err == nil {
		err = ctx.Err() // the deadline holds for the decoding, too
	}
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, specID))
	}
	deg := &docDegrader{doc: doc, memo: memo, dataBudget: budget}
	data, b, err := deg.fit(budget)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return mcptool.Fail(err)
	}
	res := mcptool.OK(data)
	// Over the whole envelope's budget, deg fits again and its report
	// replaces this one.
	res.DataMeta, res.Degrade = fidelityMeta(b, budget, r.ArchiveServed), deg
	return res
}

// SpecListAnswer is spec list's answer: one page of a lifecycle folder.
type SpecListAnswer struct {
	Specs  []SpecRow `json:"specs"`
	Count  int       `json:"count"`
	Status string    `json:"status"`
	// NextCalls, when the store holds no spec in the folder listed (all
	// or pending), creates the first one.
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

// callFirstSpec fills an empty spec list: a spec named as a placeholder
// (authoring spec-create).
var callFirstSpec = specCall{tool: "authoring", action: "spec-create", noSpec: true, fixed: [][2]string{{"name", "First spec"}}}

// SpecRow is one spec of spec list (specs.ListRows).
type SpecRow = specs.SpecRow

func (d *Deps) specList(ctx context.Context, r *mcptool.Request, a specListArgs) mcptool.Result {
	folder := orElse(a.Status, "all")
	p, err := mcptool.OpenPage(r, "spec", "list", "", core.PageList, toSpecList.Args(specListArgs{Status: folder}), folder)
	if err != nil {
		return mcptool.Fail(err)
	}
	rows, next, err := d.Specs.ListSpecs(ctx, folder, p.After, p.Limit)
	if err != nil {
		return mcptool.Fail(err)
	}
	withProgress := a.IncludeProgress == nil || *a.IncludeProgress
	items := specs.ListRows(rows, withProgress)
	var fill []core.NextCall
	if len(items) == 0 && p.After == "" && (folder == "all" || folder == string(specs.LifecyclePending)) {
		fill = []core.NextCall{callFirstSpec.on("", "")}
	}
	answer := func(k int) any { return SpecListAnswer{Specs: items[:k], Count: k, Status: folder, NextCalls: fill} }
	res := mcptool.OK(answer(len(items)), p.Meta(p.Cursor(next, next != "")))
	// Over the token budget, the page ends earlier: the last rows go and
	// the cursor continues after the last row kept.
	res.Degrade = &mcptool.ListAnswer[SpecRow]{Items: items, Answer: answer, PageSize: p.Limit,
		ID:       func(i int) string { return "item:" + rows[i].SpecID },
		Next:     func(kept int) string { return p.Cursor(rows[kept-1].SpecID, true) },
		Continue: mcptool.ContinueWith("spec", toSpecList.Args(specListArgs{Status: folder}), r.Args, "limit", "include_progress")}
	return res
}

// SpecHistoryAnswer is spec history's answer: one page of stored
// versions, newest first, and the spec's revision notes.
type SpecHistoryAnswer struct {
	SpecID    string              `json:"spec_id"`
	Versions  []specs.RepoVersion `json:"versions"`
	Revisions []specs.Revision    `json:"revisions"`
}

func (d *Deps) specHistory(ctx context.Context, r *mcptool.Request, a specHistoryArgs) mcptool.Result {
	specID := a.SpecID
	p, err := mcptool.OpenPage(r, "spec", "history", specID, core.PageHistory, toSpecHistory.Args(specHistoryArgs{specArgs: a.specArgs}))
	if err != nil {
		return mcptool.Fail(err)
	}
	before, err := p.AfterNumber()
	if err != nil {
		return mcptool.Fail(err)
	}
	if p.Limit > core.PageHistory.Max {
		return mcptool.Fail(core.FieldError(errcode.InvalidFormat, "limit for history is at most 100.",
			core.FieldDetail{Field: "limit", Received: p.Limit, Constraint: "≤ 100"}))
	}
	h, err := specs.ReadHistoryFrom(ctx, d.Specs, specID, versionText(a.Version), int64(before), p.Limit)
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, specID))
	}
	next := ""
	if len(h.Versions) > 0 {
		next = p.Cursor(strconv.FormatInt(h.Versions[len(h.Versions)-1].Version, 10), h.More)
	}
	// total_count: every version the listing reaches (not known when it
	// starts from a given version).
	var total *int
	if versionRef(r.Args, "version") == "" {
		total = &h.Total
	}
	return mcptool.OK(SpecHistoryAnswer{SpecID: specID, Versions: h.Versions, Revisions: h.Revisions}, core.WithPagination(next, p.Limit, total))
}

// SpecValidateAnswer is spec validate's answer. Backup and AutoFix answer
// foundry's create_backup and auto_fix when given: validate never changes
// the spec (foundry's validate does not either).
type SpecValidateAnswer struct {
	SpecID string `json:"spec_id"`
	specs.ValidationReport
	Backup  string `json:"backup,omitempty"`
	AutoFix string `json:"auto_fix,omitempty"`
}

// historyKeepsVersions answers foundry's create_backup: there is no backup
// file to make, every version is kept.
const historyKeepsVersions = "No backup file is written: specd keeps every version in history (spec history; authoring spec-rollback restores one)."

// foundryNotes are the answers to create_backup and auto_fix, when given.
func (a foundryNoteArgs) foundryNotes(autoFix string) (backup, fix string) {
	if a.CreateBackup != nil {
		backup = historyKeepsVersions
	}
	if a.AutoFix != nil {
		fix = autoFix
	}
	return backup, fix
}

func (d *Deps) specValidate(ctx context.Context, _ *mcptool.Request, a specValidateArgs) mcptool.Result {
	backup, fix := a.foundryNotes("validate never changes the spec; spec fix applies the auto-fixable diagnostics.")
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (SpecValidateAnswer, error) {
		report, err := specs.ValidateSpecContext(ctx, sp)
		return SpecValidateAnswer{SpecID: a.SpecID, ValidationReport: report, Backup: backup, AutoFix: fix}, err
	})
}

// SpecFixAnswer is spec fix's answer: the fixes applied (or, under
// dry_run, that would be), those skipped, and the validity after.
type SpecFixAnswer struct {
	Mutation
	Applied      []specs.AppliedFix `json:"applied"`
	Skipped      []specs.SkippedFix `json:"skipped"`
	AppliedCount int                `json:"applied_count"`
	IsValid      bool               `json:"is_valid"`
	ErrorCount   int                `json:"error_count"`
	WarningCount int                `json:"warning_count"`
	Backup       string             `json:"backup,omitempty"`   // create_backup given
	AutoFix      string             `json:"auto_fix,omitempty"` // auto_fix given
}

func (d *Deps) specFix(ctx context.Context, r *mcptool.Request, a specFixArgs) mcptool.Result {
	backup, fix := a.foundryNotes("fix always applies every auto-fixable diagnostic (dry_run only shows them).")
	return d.fixSpec(ctx, r, a.writeArgs, backup, fix)
}

// validateFix is foundry's validate-fix: fix without its notes.
func (d *Deps) validateFix(ctx context.Context, r *mcptool.Request, a writeArgs) mcptool.Result {
	return d.fixSpec(ctx, r, a, "", "")
}

// fixSpec applies every auto-fixable diagnostic of w's spec, answering
// backup and fix as the notes to create_backup and auto_fix.
func (d *Deps) fixSpec(ctx context.Context, r *mcptool.Request, w writeArgs, backup, fix string) mcptool.Result {
	return mutateTo(ctx, d, r, w, func(sp *specs.Spec, _ specs.JournalWriter) (SpecFixAnswer, error) {
		res := specs.FixSpec(sp, d.clock())
		return SpecFixAnswer{Applied: res.Applied, Skipped: res.Skipped, AppliedCount: len(res.Applied),
			IsValid: res.Report.IsValid, ErrorCount: res.Report.ErrorCount, WarningCount: res.Report.WarningCount, Backup: backup, AutoFix: fix}, nil
	})
}

// SpecSchemaAnswer is spec schema's answer: the enums specs use.
type SpecSchemaAnswer = specs.Enums

func specSchema(context.Context, *mcptool.Request, noArgs) mcptool.Result {
	return mcptool.OK(specs.SpecEnums())
}
