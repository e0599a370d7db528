package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

// maxSpecFileBytes bounds one imported spec file.
const maxSpecFileBytes = 32 << 20

// ImportReport is one file's outcome in spec import.
type ImportReport struct {
	File         string   `json:"file"`
	SpecID       string   `json:"spec_id,omitempty"`
	Lifecycle    string   `json:"lifecycle,omitempty"`
	Outcome      string   `json:"outcome"` // imported | replaced | skipped | rejected | failed | would_import
	Reason       string   `json:"reason,omitempty"`
	FixesApplied int      `json:"fixes_applied"`
	Errors       int      `json:"errors"`
	Warnings     int      `json:"warnings"`
	Codes        []string `json:"diagnostic_codes,omitempty"`
}

var lifecycleFolders = map[string]specs.Lifecycle{
	"pending": specs.LifecyclePending, "active": specs.LifecycleActive,
	"completed": specs.LifecycleCompleted, "archived": specs.LifecycleArchived,
}

// specImport imports the spec JSON files at path (one file, or every
// *.json below a folder, hidden folders skipped), each reported in files[]
// under its name relative to path. Every file is read through
// core/workspacefs: confined to the workspace, never blocking on a FIFO,
// under the call's deadline. A file that cannot be read (a FIFO, a symlink
// out of the workspace, too large) is reported rejected with its code; a
// spec whose spec_id or a node id is not an id (specs.IDPattern) is
// rejected with INVALID_ID and never stored, and one with a dependency cycle
// with CYCLE_DETECTED; the auto-fix repairs everything else foundry itself
// accepts (see specs.Fix), so every other foundry spec imports.
//
// Errors: INVALID_FORMAT / NOT_FOUND for path itself (workspace-relative
// names only); UNAVAILABLE without a workspace.
func specImport(ctx context.Context, d *Deps, r *Request) Result {
	ws, err := openWorkspace(d)
	if err != nil {
		return Fail(err)
	}
	defer ws.Close()
	root, err := ws.Rel(r.Args.String("path"))
	if err != nil {
		return Fail(fileError(err))
	}
	autoFix := !r.Args.Has("auto_fix") || r.Args.Bool("auto_fix")
	overwrite, dry := r.Args.Bool("overwrite"), r.Args.Bool("dry_run")
	files, single, err := specFiles(ctx, ws, root)
	if err != nil {
		return Fail(fileError(err))
	}
	reports := make([]ImportReport, 0, len(files))
	counts := map[string]int{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Fail(err)
		}
		var rep ImportReport
		if f.Type.IsRegular() || f.Type&fs.ModeSymlink != 0 {
			raw, err := ws.ReadFile(ctx, f.Name, maxSpecFileBytes)
			if err != nil && ctx.Err() != nil {
				return Fail(ctx.Err())
			}
			if err != nil {
				rep = unreadable(err)
			} else {
				rep = importOne(ctx, d, raw, filepath.Base(filepath.Dir(f.Name)), autoFix, overwrite, dry)
			}
		} else {
			rep = ImportReport{Outcome: "rejected", Reason: "not a regular file (FIFOs, devices and sockets are never read)", Codes: []string{errcode.InvalidFormat}}
		}
		rel, _ := filepath.Rel(root, f.Name)
		if single {
			rel = filepath.Base(f.Name)
		}
		rep.File = workspacefs.Show(rel)
		counts[rep.Outcome]++
		reports = append(reports, rep)
	}
	data := SpecImportAnswer{Path: r.Args.String("path"), Files: reports, Counts: counts, Total: len(reports), DryRun: dry}
	var meta []core.MetaOption
	if counts["rejected"]+counts["failed"] > 0 {
		meta = append(meta, core.WithWarning(core.WarnPartialFailure, core.SeverityWarning,
			fmt.Sprintf("%d of %d files were not imported; see files[].reason.", counts["rejected"]+counts["failed"], len(reports)), nil))
	}
	return OK(data, meta...)
}

// SpecImportAnswer is spec import's answer: one report per file, and how
// many files had each outcome.
type SpecImportAnswer struct {
	Path   string         `json:"path"`
	Files  []ImportReport `json:"files"`
	Counts map[string]int `json:"counts"`
	Total  int            `json:"total"`
	DryRun bool           `json:"dry_run,omitempty"`
}

// unreadable reports a file that could not be read, with its error code
// and sentence (which name only workspace-relative paths).
func unreadable(err error) ImportReport {
	e := core.AsError(err)
	if e.Code == errcode.Internal {
		return ImportReport{Outcome: "failed", Reason: "cannot read the file"}
	}
	return ImportReport{Outcome: "rejected", Reason: e.Message, Codes: []string{e.Code}}
}

// specFiles lists what to import at root: root itself when it is not a
// folder (single), else every *.json entry below it in name order, hidden
// folders skipped. Entries keep their own type: a FIFO is listed, never
// opened here.
func specFiles(ctx context.Context, ws *workspacefs.Dir, root string) (files []workspacefs.Entry, single bool, err error) {
	st, err := ws.Stat(root)
	if err != nil {
		if core.AsError(err).Code == errcode.NotFound {
			return nil, false, core.NewError(errcode.NotFound, "Nothing to import at that path.",
				map[string]any{"field": "path", "received": workspacefs.Show(root)}).
				WithRemediation("Pass a directory of spec JSON files (e.g. specs/) or one .json file inside the workspace.")
		}
		return nil, false, err
	}
	if !st.IsDir() {
		return []workspacefs.Entry{{Name: root, Type: st.Mode().Type()}}, true, nil
	}
	err = ws.Walk(ctx, root, func(e workspacefs.Entry) error {
		base := filepath.Base(e.Name)
		if e.Type.IsDir() {
			if strings.HasPrefix(base, ".") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(base, ".json") {
			files = append(files, e)
		}
		return nil
	})
	return files, false, err
}

// importOne validates, fixes and stores one spec document read from a file
// in folder (a lifecycle folder name sets the lifecycle).
func importOne(ctx context.Context, d *Deps, raw []byte, folder string, autoFix, overwrite, dry bool) ImportReport {
	rep := ImportReport{}
	doc, err := specs.ParseDocument(raw)
	if err != nil {
		rep.Outcome, rep.Reason = "failed", "not a spec document: "+err.Error()
		return rep
	}
	if l, ok := lifecycleFolders[folder]; ok {
		doc.Lifecycle = l
	}
	report := specs.Validate(doc)
	if autoFix {
		fixed := specs.Fix(doc, specs.FixOptions{Clock: d.clock()})
		doc, report = fixed.Document, fixed.Report
		rep.FixesApplied = len(fixed.Applied)
	}
	rep.SpecID, rep.Lifecycle = doc.SpecID, string(doc.Lifecycle)
	rep.Errors, rep.Warnings = report.ErrorCount, report.WarningCount
	seen := map[string]bool{}
	for _, dg := range report.Diagnostics {
		if !seen[dg.Code] {
			seen[dg.Code] = true
			rep.Codes = append(rep.Codes, dg.Code)
		}
	}
	if !report.IsValid {
		rep.Outcome, rep.Reason = "rejected", rejectReason(report)
		if !autoFix {
			rep.Reason += " (auto_fix is off)"
		}
		return rep
	}
	if doc.Lifecycle == "" {
		doc.Lifecycle = specs.LifecyclePending
	}
	if doc.Version <= 0 {
		doc.Version = 1
	}
	journal := make([]specs.JournalEntry, 0, len(doc.Journal))
	for _, e := range doc.Journal {
		e.Seq = 0
		journal = append(journal, e)
	}
	exists := false
	_ = d.Specs.ReadSpec(ctx, doc.SpecID, func(*specs.Spec, specs.JournalReader) error { exists = true; return nil })
	switch {
	case exists && !overwrite:
		rep.Outcome, rep.Reason = "skipped", "a spec with this id exists (pass overwrite to replace it)"
		return rep
	case dry:
		rep.Outcome = "would_import"
		return rep
	}
	doc.Journal = nil
	if err := d.Specs.ImportSpec(ctx, specs.FromDocument(*doc), journal, overwrite); err != nil {
		rep.Outcome, rep.Reason = "failed", errorSummary(err)
		return rep
	}
	rep.Outcome = "imported"
	if exists {
		rep.Outcome = "replaced"
	}
	return rep
}

// rejectReason says why a spec with validation errors left is not stored:
// an id that is not an id, a dependency cycle (its message names the
// nodes), else the first remaining error.
func rejectReason(report specs.ValidationReport) string {
	first := ""
	for _, dg := range report.Diagnostics {
		switch {
		case dg.Severity != specs.SeverityError:
			continue
		case dg.Code == "INVALID_ID":
			return "the spec_id or a node id is not an id (" + specs.IDConstraint + "); ids are identifiers, never paths"
		case dg.Code == "CYCLE_DETECTED":
			return "a dependency cycle no fix may break: " + dg.Message + " (remove one edge and import again)"
		case first == "":
			first = dg.Code + ": " + dg.Message
		}
	}
	return "validation errors remain, first " + first
}

// specExport writes each spec (spec_id, or every stored spec) to
// <path>/<lifecycle>/<spec_id>.json through core/workspacefs: folders are
// made and files replaced atomically (temporary file + rename) inside the
// workspace root, so neither ".." nor a symlinked folder — at the top or
// below it, before or during the call — can make it write or delete outside
// the workspace, and a copy in another lifecycle folder is removed the same
// way. A stored id outside the id grammar is never used as a file name: it
// is listed in skipped[] with a PARTIAL_FAILURE warning.
//
// Errors: INVALID_FORMAT when path (or a lifecycle folder under it) is a
// file, a dangling symlink or leads out of the workspace, checked before
// anything is written; SPEC_NOT_FOUND; UNAVAILABLE without a workspace.
func specExport(ctx context.Context, d *Deps, r *Request) Result {
	ws, err := openWorkspace(d)
	if err != nil {
		return Fail(err)
	}
	defer ws.Close()
	dir, err := ws.Rel(r.Args.String("path"))
	if err != nil {
		return Fail(fileError(err))
	}
	if err := ws.MkdirAll(dir); err != nil {
		return Fail(fileError(err))
	}
	for f := range lifecycleFolders {
		if err := ws.CheckFolder(filepath.Join(dir, f)); err != nil {
			return Fail(fileError(err))
		}
	}
	var ids []string
	if id := r.Args.String("spec_id"); id != "" {
		ids = []string{id}
	} else if ids, err = d.Specs.SpecIDs(ctx); err != nil {
		return Fail(err)
	}
	a := SpecExportAnswer{Path: r.Args.String("path"), Files: []ExportedFile{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return Fail(err)
		}
		if !specs.ValidID(id) {
			// Only reachable for ids stored before the grammar existed.
			a.Skipped = append(a.Skipped, SkippedSpec{SpecID: core.TruncateValue(id, 200).(string), Reason: "not an id (" + specs.IDConstraint + "); never used as a file name"})
			continue
		}
		f, err := exportOne(ctx, d, ws, dir, id)
		if err != nil {
			return Fail(err)
		}
		a.Files = append(a.Files, f)
	}
	a.Count = len(a.Files)
	var meta []core.MetaOption
	if len(a.Skipped) > 0 {
		meta = append(meta, core.WithWarning(core.WarnPartialFailure, core.SeverityWarning,
			fmt.Sprintf("%d stored spec ids are not ids and were not exported; see data.skipped.", len(a.Skipped)), nil))
	}
	return OK(a, meta...)
}

// SpecExportAnswer is spec export's answer: the files written, and the
// stored ids that are not ids (never used as file names).
type SpecExportAnswer struct {
	Path    string         `json:"path"`
	Files   []ExportedFile `json:"files"`
	Count   int            `json:"count"`
	Skipped []SkippedSpec  `json:"skipped,omitempty"`
}

// ExportedFile is one spec file written by spec export.
type ExportedFile struct {
	SpecID  string `json:"spec_id"`
	File    string `json:"file"` // workspace-relative, under path
	Version int64  `json:"version"`
	Bytes   int    `json:"bytes"`
}

// SkippedSpec is a stored spec id spec export did not use as a file name.
type SkippedSpec struct {
	SpecID string `json:"spec_id"`
	Reason string `json:"reason"`
}

// exportOne writes spec id (with its whole journal, oldest first) to
// <dir>/<lifecycle>/<id>.json and removes its copies from the other
// lifecycle folders.
func exportOne(ctx context.Context, d *Deps, ws *workspacefs.Dir, dir, id string) (ExportedFile, error) {
	doc, err := fullDocument(ctx, d, id)
	if err != nil {
		return ExportedFile{}, specError(err, id)
	}
	folder := string(doc.Lifecycle)
	if _, ok := lifecycleFolders[folder]; !ok {
		folder = string(specs.LifecyclePending)
	}
	name := filepath.Join(folder, id+".json")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return ExportedFile{}, core.Internal(err)
	}
	if err := ws.WriteFileAtomic(ctx, filepath.Join(dir, name), buf.Bytes()); err != nil {
		return ExportedFile{}, fileError(err)
	}
	// A spec moved to another folder since the last export must not
	// linger in the old one.
	for f := range lifecycleFolders {
		if f != folder {
			if err := ws.RemoveFile(filepath.Join(dir, f, id+".json")); err != nil {
				return ExportedFile{}, fileError(err)
			}
		}
	}
	return ExportedFile{SpecID: id, File: workspacefs.Show(name), Version: doc.Version, Bytes: buf.Len()}, nil
}

// fullDocument reads spec id with its whole journal, oldest first, in one
// read transaction.
func fullDocument(ctx context.Context, d *Deps, id string) (specs.Document, error) {
	var doc specs.Document
	err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		doc = sp.Document()
		var before uint64
		for {
			page, more, err := j.Entries(before, core.PageJournal.Max, nil)
			if err != nil {
				return err
			}
			doc.Journal = append(doc.Journal, page...)
			if !more || len(page) == 0 {
				break
			}
			before = page[len(page)-1].Seq
		}
		sort.Slice(doc.Journal, func(a, b int) bool { return doc.Journal[a].Seq < doc.Journal[b].Seq })
		return nil
	})
	return doc, err
}
