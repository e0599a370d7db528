package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// maxSpecFileBytes bounds one imported spec file.
const maxSpecFileBytes = 32 << 20

// workspacePath resolves p (relative to the workspace, or absolute) and
// refuses anything that ends up outside the workspace: "..", absolute paths
// elsewhere, and symlinks pointing out of it. The nearest existing ancestor
// is resolved, so a directory that does not exist yet can be named.
func workspacePath(workspace, p string) (string, error) {
	bad := func(why string) error {
		return core.NewError(core.CodeInvalidFormat, "path must stay inside the workspace: "+why+".",
			map[string]any{"field": "path", "received": p, "constraint": "inside the workspace " + workspace})
	}
	if workspace == "" {
		return "", core.NewError(core.CodeUnavailable, "The server has no workspace configured.", nil)
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", core.Internal(err)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	// Resolve the longest existing prefix through symlinks.
	rest := ""
	cur := p
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			p = filepath.Join(real, rest)
			break
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", bad("no part of it exists")
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", bad("it resolves to " + p)
	}
	return p, nil
}

// importReport is one file's outcome.
type importReport struct {
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

func specImport(ctx context.Context, d *Deps, r *Request) Result {
	root, err := workspacePath(d.Workspace, r.Args.String("path"))
	if err != nil {
		return Fail(err)
	}
	autoFix := !r.Args.Has("auto_fix") || r.Args.Bool("auto_fix")
	overwrite, dry := r.Args.Bool("overwrite"), r.Args.Bool("dry_run")
	files, err := specFiles(d.Workspace, root)
	if err != nil {
		return Fail(err)
	}
	reports := make([]importReport, 0, len(files))
	counts := map[string]int{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Fail(err)
		}
		rep := importOne(ctx, d, f, autoFix, overwrite, dry)
		rel, _ := filepath.Rel(root, f)
		if rel == "." {
			rel = filepath.Base(f)
		}
		rep.File = filepath.ToSlash(rel)
		counts[rep.Outcome]++
		reports = append(reports, rep)
	}
	data := map[string]any{"path": r.Args.String("path"), "files": reports, "counts": counts, "total": len(reports)}
	if dry {
		data["dry_run"] = true
	}
	var meta []core.MetaOption
	if counts["rejected"]+counts["failed"] > 0 {
		meta = append(meta, core.WithWarning(core.WarnPartialFailure, core.SeverityWarning,
			fmt.Sprintf("%d of %d files were not imported; see files[].reason.", counts["rejected"]+counts["failed"], len(reports)), nil))
	}
	return OK(data, meta...)
}

// specFiles lists the .json files under root (or root itself), skipping
// symlinks that leave the workspace.
func specFiles(workspace, root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, core.NewError(core.CodeNotFound, "Nothing to import at that path.", map[string]any{"field": "path", "received": root}).
			WithRemediation("Pass a directory of spec JSON files (e.g. specs/) or one .json file inside the workspace.")
	}
	if !st.IsDir() {
		return []string{root}, nil
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if e.IsDir() {
			if strings.HasPrefix(e.Name(), ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(e.Name(), ".json") {
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if _, err := workspacePath(workspace, p); err != nil {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	sort.Strings(out)
	return out, err
}

func importOne(ctx context.Context, d *Deps, file string, autoFix, overwrite, dry bool) importReport {
	rep := importReport{}
	raw, err := os.ReadFile(file)
	if err != nil {
		rep.Outcome, rep.Reason = "failed", "cannot read the file"
		return rep
	}
	if len(raw) > maxSpecFileBytes {
		rep.Outcome, rep.Reason = "failed", fmt.Sprintf("file is larger than %d MB", maxSpecFileBytes>>20)
		return rep
	}
	doc, err := specs.ParseDocument(raw)
	if err != nil {
		rep.Outcome, rep.Reason = "failed", "not a spec document: "+err.Error()
		return rep
	}
	if l, ok := lifecycleFolders[filepath.Base(filepath.Dir(file))]; ok {
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
		rep.Outcome, rep.Reason = "rejected", "validation errors remain"
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

func specExport(ctx context.Context, d *Deps, r *Request) Result {
	dir, err := workspacePath(d.Workspace, r.Args.String("path"))
	if err != nil {
		return Fail(err)
	}
	var ids []string
	if id := r.Args.String("spec_id"); id != "" {
		ids = []string{id}
	} else if ids, err = d.Specs.SpecIDs(ctx); err != nil {
		return Fail(err)
	}
	written := []map[string]any{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return Fail(err)
		}
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
		if err != nil {
			return Fail(specError(err, id))
		}
		folder := string(doc.Lifecycle)
		if folder == "" {
			folder = string(specs.LifecyclePending)
		}
		target := filepath.Join(dir, folder, id+".json")
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return Fail(core.Internal(err))
		}
		if err := writeFileAtomic(target, buf.Bytes()); err != nil {
			return Fail(core.Internal(err))
		}
		// A spec moved to another folder since the last export must not
		// linger in the old one.
		for f := range lifecycleFolders {
			if f != folder {
				old := filepath.Join(dir, f, id+".json")
				if err := os.Remove(old); err != nil && !errors.Is(err, os.ErrNotExist) {
					return Fail(core.Internal(err))
				}
			}
		}
		rel, _ := filepath.Rel(dir, target)
		written = append(written, map[string]any{"spec_id": id, "file": filepath.ToSlash(rel), "version": doc.Version, "bytes": buf.Len()})
	}
	return OK(map[string]any{"path": r.Args.String("path"), "files": written, "count": len(written)})
}

// writeFileAtomic writes through a temporary file and a rename, so a reader
// never sees half a spec.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".specd-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
