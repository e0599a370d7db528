package tools

import (
	"errors"
	"fmt"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
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
	if r.Session.Holder != "" {
		return r.Session.Holder
	}
	return "specd"
}

// clock returns the spec clock of d.
func (d *Deps) clock() specs.Clock {
	if d.Runtime.Now != nil {
		return specs.Clock(d.Runtime.Now)
	}
	return specs.Clock(time.Now)
}

// specError turns a domain error into an envelope error with ranked fuzzy
// matches and a recovery call that lists what exists; a store's
// VERSION_CONFLICT gets the re-read (spec get) as its recovery.
func specError(err error, specID string) error {
	var fe *specs.FieldError
	if errors.As(err, &fe) {
		// An error about another spec named by an argument (diff's target).
		e := core.AsError(specError(fe.Err, fe.SpecID))
		if e.Details != nil {
			e.Details["field"] = fe.Field
		}
		return e
	}
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == errcode.VersionConflict && ce.Recovery == nil && specID != "" {
		// The next call is the read that gives the current version.
		return ce.WithRecovery("spec", map[string]any{"action": "get", "spec_id": specID}, nil)
	}
	var de *specs.Error
	if !errors.As(err, &de) {
		return err
	}
	e := core.NewError(de.Code, de.Message, de.ErrorDetails())
	received, _ := e.Details["received"].(string)
	var matches []string
	if len(de.Candidates) > 0 {
		matches = fuzzy.Rank(received, de.Candidates, 5)
	}
	switch de.Code {
	case errcode.TaskNotFound, errcode.DependencyNotFound:
		e.WithRecovery("task", map[string]any{"action": "list", "spec_id": specID}, matches)
	case errcode.PhaseNotFound, errcode.InvalidParent:
		e.WithRecovery("task", map[string]any{"action": "hierarchy", "spec_id": specID}, matches)
	case errcode.SpecNotFound:
		e.WithRecovery("spec", map[string]any{"action": "list"}, matches)
	case errcode.VersionNotFound, errcode.InvalidFormat:
		// A version (number or timestamp) that names no kept version.
		if f := e.Details["field"]; f == "version" || f == "target" {
			e.WithRecovery("spec", map[string]any{"action": "history", "spec_id": specID}, nil)
		}
	case errcode.TaskBlocked:
		taskID, _ := e.Details["task_id"].(string)
		e.WithRecovery("task", map[string]any{"action": "check-deps", "spec_id": specID, "task_id": taskID}, nil)
	case errcode.InvalidTransition, errcode.Conflict:
		taskID, _ := e.Details["task_id"].(string)
		switch {
		case taskID != "":
			e.WithRecovery("task", map[string]any{"action": "info", "spec_id": specID, "task_id": taskID}, nil)
		case e.Details["field"] == "to_folder":
			e.WithRecovery("lifecycle", map[string]any{"action": "state", "spec_id": specID}, nil)
		}
	default:
		if len(matches) > 0 {
			e.WithRecovery("", nil, matches)
		}
	}
	// A conflict's next call is the re-read (contract §3: "re-read first").
	if info, _ := errcode.Lookup(e.Code); info.Type == errcode.TypeConflict && specID != "" && (e.Recovery == nil || e.Recovery.SuggestedTool == "") {
		e.WithRecovery("spec", map[string]any{"action": "get", "spec_id": specID}, matches)
	}
	return e
}
