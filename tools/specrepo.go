package tools

import (
	"errors"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// SpecRepo is what the spec tools need of the store: the domain's port.
type SpecRepo = specs.Repo

// Parameters shared by the spec tools.
var (
	pSpecID          = idParam("spec_id", "Spec identifier (from spec list or authoring spec-create).")
	pDryRun          = mcptool.Param{Name: "dry_run", Type: mcptool.Boolean, Description: "Compute the answer and the list of changes without storing anything."}
	pExpectedVersion = mcptool.Param{Name: "expected_version", Type: mcptool.Integer, Min: f64(0), Description: "The spec version you last read; the call fails with VERSION_CONFLICT (changing nothing) if the spec has moved on."}
	pCursor          = mcptool.Param{Name: "cursor", Type: mcptool.String, MaxLength: 1000, Description: "Opaque cursor from meta.pagination.cursor of the previous page."}
)

func pLimit(p core.PageLimits) mcptool.Param {
	return mcptool.Param{Name: "limit", Type: mcptool.Integer, Min: f64(1), Max: f64(float64(p.Max)), Clamp: true,
		Description: fmt.Sprintf("Page size (default %d; over %d is clamped).", p.Default, p.Max)}
}

// mutationArgs are the parameters every mutation takes.
var mutationArgs = []string{"dry_run", "expected_version"}

// writeOptions reads dry_run and expected_version, and applies the history
// retention.
func (d *Deps) writeOptions(r *mcptool.Request, action string) specs.RepoWriteOptions {
	o := specs.RepoWriteOptions{DryRun: r.Args.Bool("dry_run"), Action: r.Call.Tool + "." + action, Author: author(r), Keep: d.HistoryKeep}
	if v, ok := r.Args.Int("expected_version"); ok {
		ev := int64(v)
		o.ExpectedVersion = &ev
	}
	return o
}

// author names the caller in journal entries and history.
func author(r *mcptool.Request) string {
	if r.Session.ClientName != "" {
		return r.Session.ClientName
	}
	if r.Session.ID != "" {
		return r.Session.ID
	}
	return "specd"
}

// clock is the tools' one clock: the runtime's (a nil one is the wall
// clock), for the domain's timestamps and the research archive's times.
func (d *Deps) clock() core.Clock { return d.Runtime.Now }

// specError gives a spec tool's refusal the next call that recovers from
// it, when it names none yet: the domain names no tools, so the call is
// chosen here from the error's code, its details (task_id, field) and the
// spec the call was about (specNextCalls); a refusal of another type, or
// one that names its call already (the store's), passes unchanged, and
// fuzzy matches the domain ranked are kept. A conflict the table leaves
// without a call re-reads the spec (spec get), unless its details say to
// retry as is (retry_after_ms). A *specs.FieldError is about another spec,
// named by an argument (diff's target): its error gets that spec's call
// and details.field the argument.
func specError(err error, specID string) error {
	var fe *specs.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe)
	}
	var e *core.Error
	if !errors.As(err, &e) || e.NamesCall() {
		return err
	}
	if next := specNextCalls[e.Code]; next != nil {
		if tool, args := next(specID, e.Details); tool != "" {
			return e.WithRecovery(tool, args, e.Matches())
		}
	}
	if rereads(e, specID) {
		// A conflict's next call is the re-read (contract §3: "re-read first").
		return e.WithRecovery("spec", map[string]any{"action": "get", "spec_id": specID}, e.Matches())
	}
	return e
}

// fieldError is the refusal of an error about another spec, named by the
// argument fe.Field (diff's target).
func fieldError(fe *specs.FieldError) error {
	e := core.AsError(specError(fe.Err, fe.SpecID))
	if e.Details != nil {
		e.Details["field"] = fe.Field
	}
	return e
}

// rereads reports whether e is a conflict on specID whose next call is the
// re-read: not one retried as is (details.retry_after_ms).
func rereads(e *core.Error, specID string) bool {
	info, _ := errcode.Lookup(e.Code)
	return info.Type == errcode.TypeConflict && specID != "" && e.Details["retry_after_ms"] == nil
}

// specNextCalls is, by code, the call that recovers from a spec refusal on
// specID with details d; a function returns "" when it has none for d.
var specNextCalls = map[string]func(specID string, d map[string]any) (string, map[string]any){
	errcode.TaskNotFound:       taskRecovery("list"),
	errcode.DependencyNotFound: taskRecovery("list"),
	errcode.PhaseNotFound:      taskRecovery("hierarchy"),
	errcode.InvalidParent:      taskRecovery("hierarchy"),
	errcode.SpecNotFound: func(string, map[string]any) (string, map[string]any) {
		return "spec", map[string]any{"action": "list"}
	},
	// A version (number or timestamp) that names no kept version.
	errcode.VersionNotFound: versionRecovery,
	errcode.InvalidFormat:   versionRecovery,
	errcode.TaskBlocked: func(specID string, d map[string]any) (string, map[string]any) {
		taskID, _ := d["task_id"].(string)
		return "task", map[string]any{"action": "check-deps", "spec_id": specID, "task_id": taskID}
	},
	errcode.InvalidTransition: transitionRecovery,
	errcode.Conflict:          transitionRecovery,
}

// taskRecovery is the task action that shows what exists in the spec.
func taskRecovery(action string) func(string, map[string]any) (string, map[string]any) {
	return func(specID string, _ map[string]any) (string, map[string]any) {
		return "task", map[string]any{"action": action, "spec_id": specID}
	}
}

// versionRecovery lists the kept versions when the refused argument is a
// version (version, diff's target).
func versionRecovery(specID string, d map[string]any) (string, map[string]any) {
	if f := d["field"]; f == "version" || f == "target" {
		return "spec", map[string]any{"action": "history", "spec_id": specID}
	}
	return "", nil
}

// transitionRecovery reads the task a transition refused (task info), or
// the spec's lifecycle state when a folder move was refused.
func transitionRecovery(specID string, d map[string]any) (string, map[string]any) {
	if taskID, _ := d["task_id"].(string); taskID != "" {
		return "task", map[string]any{"action": "info", "spec_id": specID, "task_id": taskID}
	}
	if d["field"] == "to_folder" {
		return "lifecycle", map[string]any{"action": "state", "spec_id": specID}
	}
	return "", nil
}
