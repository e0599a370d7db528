package tools

import (
	"context"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

// SpecImportAnswer is spec import's answer (specs.ImportFiles).
type SpecImportAnswer = specs.ImportResult

// SpecExportAnswer is spec export's answer (specs.ExportFiles).
type SpecExportAnswer = specs.ExportResult

// specImport imports the spec files at path through the workspace
// (specs.ImportFiles); files not imported add a PARTIAL_FAILURE warning.
//
// Errors: INVALID_FORMAT / NOT_FOUND for path itself, with server context
// as the next call; UNAVAILABLE without a workspace.
func (d *Deps) specImport(ctx context.Context, _ *mcptool.Request, args specImportArgs) mcptool.Result {
	a, err := withWorkspace(d, func(ws *workspacefs.Dir) (specs.ImportResult, error) {
		return specs.ImportFiles(ctx, d.Specs, ws, args.Path, specs.ImportOptions{
			AutoFix: args.AutoFix == nil || *args.AutoFix, Overwrite: args.Overwrite,
			DryRun: args.DryRun, Clock: d.clock(), Guard: lockedAgainstReplace})
	})
	if err != nil {
		return mcptool.Fail(fileError(err))
	}
	if n := a.NotImported(); n > 0 {
		return mcptool.OK(a, core.WithWarning(core.WarnPartialFailure, core.SeverityWarning,
			fmt.Sprintf("%d of %d files were not imported; see files[].reason.", n, a.Total), nil))
	}
	return mcptool.OK(a)
}

// specExport writes spec files through the workspace (specs.ExportFiles);
// stored ids that are not ids add a PARTIAL_FAILURE warning.
//
// Errors: INVALID_FORMAT for path, with server context as the next call;
// SPEC_NOT_FOUND; UNAVAILABLE without a workspace.
func (d *Deps) specExport(ctx context.Context, _ *mcptool.Request, args specExportArgs) mcptool.Result {
	specID := args.SpecID
	a, err := withWorkspace(d, func(ws *workspacefs.Dir) (specs.ExportResult, error) {
		return specs.ExportFiles(ctx, d.Specs, ws, args.Path, specID)
	})
	if err != nil {
		return mcptool.Fail(fileError(withSpecNextCall(err, specID)))
	}
	if len(a.Skipped) > 0 {
		return mcptool.OK(a, core.WithWarning(core.WarnPartialFailure, core.SeverityWarning,
			fmt.Sprintf("%d stored spec ids are not ids and were not exported; see data.skipped.", len(a.Skipped)), nil))
	}
	return mcptool.OK(a)
}
