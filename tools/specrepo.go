package tools

import (
	"time"

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

// writeOptionsOf are w's dry_run and expected_version, with the history
// retention.
func (d *Deps) writeOptionsOf(r *mcptool.Request, w writeArgs, action string) specs.RepoWriteOptions {
	o := specs.RepoWriteOptions{DryRun: w.DryRun, Action: r.Call.Tool + "." + action, Author: author(r), Keep: d.HistoryKeep}
	if w.ExpectedVersion != nil {
		ev := int64(*w.ExpectedVersion)
		o.ExpectedVersion = &ev
	}
	return o
}

// author names the caller in journal entries and history.
func author(r *mcptool.Request) string {
	if r.Session.ClientName != "" {
		return r.Session.ClientName
	}
	if r.Session.Holder != "" {
		return r.Session.Holder
	}
	return "specd"
}

// clock is the tools' one clock: the runtime's (a nil one is the wall
// clock), for the domain's timestamps and the research archive's times.
func (d *Deps) clock() core.Clock {
	if d.Runtime.Now != nil {
		return d.Runtime.Now
	}
	return time.Now
}

// withSpecNextCall gives a spec tool's refusal the next call that recovers
// from it, when it names none yet: the domain names no tools, so the call
// is chosen here from the error's code, its details (task_id, field) and
// the spec the call was about (specRecovery); a refusal that names its call
// already (the store's) or is no *core.Error passes unchanged, and fuzzy
// matches the domain ranked are kept. A conflict the table leaves
// without a call re-reads the spec (spec get), unless its details say to
// retry as is (retry_after_ms). A *specs.FieldError is about another spec,
// named by an argument (diff's target): its error gets that spec's call
// and details.field the argument.
func withSpecNextCall(err error, specID string) error {
	var fe *specs.FieldError
	if errors.As(err, &fe) {
		return fieldError(fe)
	}
	var e *core.Error
	if !errors.As(err, &e) || e.NamesCall() || e.Step != nil {
		return err // a domain step's call is named by the registry (refusalCall)
	}
	if e.Code == errcode.AutonomyWriteLockActive { // any guarded write: the session's status names the way on
		return autonomyError(e, specID, "")
	}
	if c, ok := specNextCall(e, specID); ok {
		return e.WithNext(c, e.Matches())
	}
	return e
}

// specNextCall is the call that recovers from spec refusal e on specID:
// the code's call (specRecovery), else a conflict's re-read (rereads);
// false when there is none.
func specNextCall(e *core.Error, specID string) (core.NextCall, bool) {
	if c, ok := specRecovery(e.Code, e.Details); ok && (c.noSpec || specID != "") {
		// A call on a spec needs its id: with none known, naming the call
		// would suggest one that cannot run as given.
		taskID, _ := e.Details["task_id"].(string)
		return c.on(specID, taskID), true
	}
	if rereads(e, specID) {
		// A conflict's next call is the re-read: a conflict is retried only
		// after reading again.
		return callSpecGet.on(specID, ""), true
	}
	return core.NextCall{}, false
}

// fieldError is the refusal of an error about another spec, named by the
// argument fe.Field (diff's target).
func fieldError(fe *specs.FieldError) error {
	e := core.AsError(withSpecNextCall(fe.Err, fe.SpecID))
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

// specRecoveries is, by code, the call that recovers from a spec refusal
// whatever its details say.
var specRecoveries = map[string]specCall{
	errcode.TaskNotFound:       callTaskList,
	errcode.DependencyNotFound: callTaskList,
	errcode.PhaseNotFound:      callTaskHierarchy,
	errcode.InvalidParent:      callTaskHierarchy,
	errcode.SpecNotFound:       callSpecList,
	errcode.TaskBlocked:        callCheckDeps,
}

// specRecovery is the call that recovers from a spec refusal of code with
// details d, when there is one: specRecoveries; the kept versions when the
// refused argument is a version (version, diff's target); for a refused
// transition, the task it refused (task info) or, for a folder move, the
// spec's lifecycle state.
func specRecovery(code string, d map[string]any) (specCall, bool) {
	if c, ok := specRecoveries[code]; ok {
		return c, true
	}
	switch code {
	case errcode.VersionNotFound, errcode.InvalidFormat:
		f := d["field"]
		return callSpecHistory, f == "version" || f == "target"
	case errcode.InvalidTransition, errcode.Conflict:
		if taskID, _ := d["task_id"].(string); taskID != "" {
			return callTaskInfo, true
		}
		return callLifecycleState, d["field"] == "to_folder"
	}
	return specCall{}, false
}
