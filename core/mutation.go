package core

import "github.com/specd/specd/core/errcode"

// Mutation carries the plumbing every mutating action accepts: dry_run (compute
// the answer, store nothing) and expected_version (optimistic concurrency
// against the spec's version).
type Mutation struct {
	DryRun          bool
	ExpectedVersion *int64
}

// CheckVersion answers VERSION_CONFLICT when an expected version was given
// and differs from current. It must be called inside the mutation's
// transaction, after reading the current version, so nothing changes on a
// mismatch.
func (m Mutation) CheckVersion(current int64) *Error {
	if m.ExpectedVersion == nil || *m.ExpectedVersion == current {
		return nil
	}
	return &Error{
		Code:    errcode.VersionConflict,
		Message: "The spec changed since you read it.",
		Details: map[string]any{
			"field":            "expected_version",
			"expected_version": *m.ExpectedVersion,
			"current_version":  current,
		},
	}
}

// Change is one entry of a dry run's changes list.
type Change struct {
	Op     string `json:"op"`     // add | update | remove
	Target string `json:"target"` // e.g. node:task-1-2, metadata.risks
	Detail string `json:"detail,omitempty"`
}
