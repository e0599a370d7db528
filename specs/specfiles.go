package specs

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
)

// This file is the import and export of foundry-format spec files: folder
// walks, per-file reports and the lifecycle folder layout, every file
// through core/workspacefs (confined to the workspace root). It imports
// core for coded errors (those workspacefs returns, and the reserved-folder
// refusal of export).

// MaxSpecFileBytes bounds one imported spec file.
const MaxSpecFileBytes = 32 << 20

// JournalPageMax is the page size FullDocument reads the journal with.
const JournalPageMax = 1000

// lifecycleFolders maps the folder names of the specs/ layout to lifecycles.
var lifecycleFolders = map[string]Lifecycle{
	"pending": LifecyclePending, "active": LifecycleActive,
	"completed": LifecycleCompleted, "archived": LifecycleArchived,
}

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

// ImportOptions are spec import's switches.
type ImportOptions struct {
	AutoFix   bool       // apply the auto-fixes before storing
	Overwrite bool       // replace specs that exist (else skip them)
	DryRun    bool       // report would_import; store nothing
	Clock     core.Clock // the fixes' clock
	// Guard, when set, is asked before an existing spec is replaced, over
	// that spec's journal: its error fails that file (an autonomy session's
	// write lock: replacing would also drop the session and its audit).
	Guard func(j JournalReader) error
}

// ImportResult is spec import's answer: one report per file, and how many
// files had each outcome.
type ImportResult struct {
	Path   string         `json:"path"`
	Files  []ImportReport `json:"files"`
	Counts map[string]int `json:"counts"`
	Total  int            `json:"total"`
	DryRun bool           `json:"dry_run,omitempty"`
}

// NotImported is how many files were rejected or failed.
func (r ImportResult) NotImported() int { return r.Counts["rejected"] + r.Counts["failed"] }

// ImportFiles imports the spec JSON files at path (one file, or every
// *.json below a folder, hidden folders skipped), each reported under its
// name relative to path; a file in a lifecycle folder (pending, active,
// completed, archived) gets that lifecycle. Every file is read through ws:
// confined to the workspace, never blocking on a FIFO, under ctx. A file
// that cannot be read (a FIFO, a symlink out of the workspace, too large)
// is reported rejected with its code; a spec whose spec_id or a node id is
// not an id (IDPattern) is rejected with INVALID_ID and never stored, and
// one with a dependency cycle with CYCLE_DETECTED; the auto-fix repairs
// everything else foundry itself accepts (see Fix), so every other foundry
// spec imports.
//
// Errors: INVALID_FORMAT / NOT_FOUND for path itself (workspace-relative
// names only); ctx's error.
func ImportFiles(ctx context.Context, repo Repo, ws *workspacefs.Dir, path string, o ImportOptions) (ImportResult, error) {
	root, err := ws.Rel(path)
	if err != nil {
		return ImportResult{}, err
	}
	files, single, err := specFiles(ctx, ws, root)
	if err != nil {
		return ImportResult{}, err
	}
	res := ImportResult{Path: path, Files: make([]ImportReport, 0, len(files)), Counts: map[string]int{}, DryRun: o.DryRun}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return ImportResult{}, err
		}
		rep, err := importFile(ctx, repo, ws, f, o)
		if err != nil {
			return ImportResult{}, err
		}
		rel, _ := filepath.Rel(root, f.Name)
		if single {
			rel = filepath.Base(f.Name)
		}
		rep.File = workspacefs.Show(rel)
		res.Counts[rep.Outcome]++
		res.Files = append(res.Files, rep)
	}
	res.Total = len(res.Files)
	return res, nil
}

// importFile reads and imports one listed entry; only a cancelled ctx is
// an error.
func importFile(ctx context.Context, repo Repo, ws *workspacefs.Dir, f workspacefs.Entry, o ImportOptions) (ImportReport, error) {
	if !f.Type.IsRegular() && f.Type&fs.ModeSymlink == 0 {
		return ImportReport{Outcome: "rejected", Reason: "not a regular file (FIFOs, devices and sockets are never read)", Codes: []string{errcode.InvalidFormat}}, nil
	}
	raw, err := ws.ReadFile(ctx, f.Name, MaxSpecFileBytes)
	if err != nil && ctx.Err() != nil {
		return ImportReport{}, ctx.Err()
	}
	if err != nil {
		return unreadable(err), nil
	}
	return importOne(ctx, repo, raw, filepath.Base(filepath.Dir(f.Name)), o), nil
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

// errorSummary renders err for a reason: the code and message of a coded
// error, or "internal error" (never Go error text).
func errorSummary(err error) string {
	e := core.AsError(err)
	if e.Code == errcode.Internal {
		return "internal error"
	}
	return e.Code + ": " + e.Message
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
func importOne(ctx context.Context, repo Repo, raw []byte, folder string, o ImportOptions) ImportReport {
	doc, err := ParseDocument(raw)
	if err != nil {
		return ImportReport{Outcome: "failed", Reason: "not a spec document: " + err.Error()}
	}
	if l, ok := lifecycleFolders[folder]; ok {
		doc.Lifecycle = l
	}
	doc, rep, ok := checkImport(doc, o)
	if !ok {
		return rep
	}
	exists, refused := existingSpec(ctx, repo, doc.SpecID, o.Guard)
	if importHeld(&rep, exists, refused, o) {
		return rep
	}
	if err := storeImported(ctx, repo, doc, o.Overwrite); err != nil {
		rep.Outcome, rep.Reason = "failed", errorSummary(err)
		return rep
	}
	rep.Outcome = "imported"
	if exists {
		rep.Outcome = "replaced"
	}
	return rep
}

// existingSpec reports whether spec id is stored and, when it is and guard
// is set, guard's refusal to replace it (nil: allowed).
func existingSpec(ctx context.Context, repo Repo, id string, guard func(JournalReader) error) (exists bool, refused error) {
	_ = repo.ReadSpec(ctx, id, func(_ *Spec, j JournalReader) error {
		exists = true
		if guard != nil {
			refused = guard(j)
		}
		return nil
	})
	return exists, refused
}

// importHeld settles rep when a checked document is not stored: skipped (it
// exists and o.Overwrite is off), failed (the guard refused the
// replacement) or would_import (o.DryRun). It reports whether it did.
func importHeld(rep *ImportReport, exists bool, refused error, o ImportOptions) bool {
	switch {
	case exists && !o.Overwrite:
		rep.Outcome, rep.Reason = "skipped", "a spec with this id exists (pass overwrite to replace it)"
	case exists && refused != nil:
		rep.Outcome, rep.Reason = "failed", errorSummary(refused)
	case o.DryRun:
		rep.Outcome = "would_import"
	default:
		return false
	}
	return true
}

// storeImported stores doc through Repo.ImportSpec, its journal entries
// renumbered by the store (their seq cleared). Errors: ImportSpec's.
func storeImported(ctx context.Context, repo Repo, doc *Document, overwrite bool) error {
	journal := make([]JournalEntry, 0, len(doc.Journal))
	for _, e := range doc.Journal {
		e.Seq = 0
		journal = append(journal, e)
	}
	doc.Journal = nil
	return repo.ImportSpec(ctx, FromDocument(*doc), journal, overwrite)
}

// checkImport validates (and with AutoFix fixes) doc, filling the report's
// counts and codes; ok is false, with the report's outcome rejected, when
// errors remain. A valid document gets lifecycle pending and version 1
// when it has none.
func checkImport(doc *Document, o ImportOptions) (_ *Document, rep ImportReport, ok bool) {
	report := Validate(doc)
	if o.AutoFix {
		fixed := Fix(doc, FixOptions{Clock: o.Clock})
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
		if !o.AutoFix {
			rep.Reason += " (auto_fix is off)"
		}
		return doc, rep, false
	}
	if doc.Lifecycle == "" {
		doc.Lifecycle = LifecyclePending
	}
	if doc.Version <= 0 {
		doc.Version = 1
	}
	return doc, rep, true
}

// rejectReason says why a spec with validation errors left is not stored:
// an id that is not an id, a dependency cycle (its message names the
// nodes), else the first remaining error.
func rejectReason(report ValidationReport) string {
	first := ""
	for _, dg := range report.Diagnostics {
		switch {
		case dg.Severity != SeverityError:
			continue
		case dg.Code == "INVALID_ID":
			return "the spec_id or a node id is not an id (" + IDConstraint + "); ids are identifiers, never paths"
		case dg.Code == "CYCLE_DETECTED":
			return "a dependency cycle no fix may break: " + dg.Message + " (remove one edge and import again)"
		case first == "":
			first = dg.Code + ": " + dg.Message
		}
	}
	return "validation errors remain, first " + first
}

// ExportResult is spec export's answer: the files written, and the stored
// ids that are not ids (never used as file names).
type ExportResult struct {
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

// ReservedFolders are the workspace folders spec export never writes into:
// the store's own (.specd) and git's (.git, where a file can be a hook).
var ReservedFolders = []string{".specd", ".git"}

// notReserved refuses an export folder that is, lies below or resolves
// into one of ReservedFolders (workspacefs.Dir.Within): INVALID_FORMAT with
// an export to "specs" as the next call.
func notReserved(ws *workspacefs.Dir, dir, specID string) error {
	f := ws.Within(dir, ReservedFolders...)
	if f == "" {
		return nil
	}
	shown := workspacefs.Show(dir)
	args := map[string]any{"path": "specs"}
	if specID != "" {
		args["spec_id"] = specID
	}
	return core.NewError(errcode.InvalidFormat,
		fmt.Sprintf("path %q is (or leads into) %s, which specd and git keep for themselves; spec files are never written there.", shown, f),
		map[string]any{"field": workspacefs.Field, "constraint": "a folder inside the workspace, outside .specd and .git", "received": shown}).
		WithRemediation("Export to a folder of your own inside the workspace, e.g. specs.").
		WithStep("export-to", args, nil)
}

// ExportFiles writes each spec (specID, or every stored spec when empty)
// to <path>/<lifecycle>/<spec_id>.json through ws: folders are made and
// files replaced atomically (temporary file + rename) inside the workspace
// root, so neither ".." nor a symlinked folder — at the top or below it,
// before or during the call — can make it write or delete outside the
// workspace, and a copy in another lifecycle folder is removed the same
// way. A stored id outside the id grammar is never used as a file name: it
// is listed in Skipped.
//
// Errors: INVALID_FORMAT when path (or a lifecycle folder under it) is a
// file, a dangling symlink or leads out of the workspace, or is (or lies
// below, or resolves into) one of ReservedFolders, checked before anything
// is written; SPEC_NOT_FOUND; ctx's error.
func ExportFiles(ctx context.Context, repo Repo, ws *workspacefs.Dir, path, specID string) (ExportResult, error) {
	dir, err := prepareExportFolder(ws, path, specID)
	if err != nil {
		return ExportResult{}, err
	}
	ids := []string{specID}
	if specID == "" {
		if ids, err = repo.SpecIDs(ctx); err != nil {
			return ExportResult{}, err
		}
	}
	res := ExportResult{Path: path, Files: []ExportedFile{}}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return ExportResult{}, err
		}
		if !ValidID(id) {
			// Only reachable for ids stored before the grammar existed.
			res.Skipped = append(res.Skipped, SkippedSpec{SpecID: truncateForDetails(id), Reason: "not an id (" + IDConstraint + "); never used as a file name"})
			continue
		}
		f, err := exportOne(ctx, repo, ws, dir, id)
		if err != nil {
			return ExportResult{}, err
		}
		res.Files = append(res.Files, f)
	}
	res.Count = len(res.Files)
	return res, nil
}

// PrepareExportFolder checks and makes path as spec export's folder, the
// way ExportFiles does before writing (and the spec mirror, specs/mirror,
// when it starts): path is turned into a clean workspace-relative name,
// made, and checked as made (symlinks followed) to be outside
// ReservedFolders, with no lifecycle folder under it that is a file. It
// returns the relative name.
//
// Errors: INVALID_FORMAT as ExportFiles'.
func PrepareExportFolder(ws *workspacefs.Dir, path string) (string, error) {
	return prepareExportFolder(ws, path, "")
}

func prepareExportFolder(ws *workspacefs.Dir, path, specID string) (string, error) {
	dir, err := ws.Rel(path)
	if err != nil {
		return "", err
	}
	if err := notReserved(ws, dir, specID); err != nil {
		return "", err
	}
	if err := ws.MkdirAll(dir); err != nil {
		return "", err
	}
	if err := notReserved(ws, dir, specID); err != nil { // as made, symlinks followed
		return "", err
	}
	for f := range lifecycleFolders {
		if err := ws.CheckFolder(filepath.Join(dir, f)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ExportFolder is the lifecycle folder spec export files a spec with
// lifecycle l under (pending for a lifecycle it does not know).
func ExportFolder(l Lifecycle) string {
	if _, ok := lifecycleFolders[string(l)]; ok {
		return string(l)
	}
	return string(LifecyclePending)
}

// EncodeExport is the bytes spec export writes for doc: indented JSON,
// HTML characters unescaped, ending in a newline. spec import of those
// bytes stores doc again.
func EncodeExport(doc Document) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, core.Internal(err)
	}
	return buf.Bytes(), nil
}

// exportOne writes spec id (with its whole journal, oldest first) to
// <dir>/<lifecycle>/<id>.json and removes its copies from the other
// lifecycle folders.
func exportOne(ctx context.Context, repo Repo, ws *workspacefs.Dir, dir, id string) (ExportedFile, error) {
	doc, err := FullDocument(ctx, repo, id)
	if err != nil {
		return ExportedFile{}, err
	}
	folder := ExportFolder(doc.Lifecycle)
	name := filepath.Join(folder, id+".json")
	raw, err := EncodeExport(doc)
	if err != nil {
		return ExportedFile{}, err
	}
	if err := ws.WriteFileAtomic(ctx, filepath.Join(dir, name), raw); err != nil {
		return ExportedFile{}, err
	}
	// A spec moved to another folder since the last export must not
	// linger in the old one.
	for f := range lifecycleFolders {
		if f != folder {
			if err := ws.RemoveFile(filepath.Join(dir, f, id+".json")); err != nil {
				return ExportedFile{}, err
			}
		}
	}
	return ExportedFile{SpecID: id, File: workspacefs.Show(name), Version: doc.Version, Bytes: len(raw)}, nil
}

// FullDocument reads spec id with its whole journal, oldest first, in one
// read transaction. SPEC_NOT_FOUND.
func FullDocument(ctx context.Context, repo Repo, id string) (Document, error) {
	var doc Document
	err := repo.ReadSpec(ctx, id, func(sp *Spec, j JournalReader) error {
		doc = sp.Document()
		var before uint64
		for {
			page, more, err := j.Entries(before, JournalPageMax, nil)
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
