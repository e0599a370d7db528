package tools

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// SessionConfigAnswer is task session-config's answer: who this session
// is and the limits it works within (foundry's CLI session config; specd
// keeps no per-session state beyond claims, so nothing is set here).
type SessionConfigAnswer struct {
	SessionID     string `json:"session_id"`
	ClientName    string `json:"client_name,omitempty"`
	ClientVersion string `json:"client_version,omitempty"`
	TokenBudget   int    `json:"token_budget"`
	DeadlineMS    int64  `json:"deadline_ms"`
	ReadOnly      bool   `json:"read_only"`
	Execute       bool   `json:"verification_execute"`
}

func (d *Deps) taskSessionConfig(_ context.Context, r *mcptool.Request, _ noArgs) mcptool.Result {
	budget := d.TokenBudget
	if budget <= 0 {
		budget = core.DefaultTokenBudget
	}
	deadline := d.Runtime.Deadline
	if deadline <= 0 {
		deadline = mcptool.DefaultDeadline
	}
	return mcptool.OK(SessionConfigAnswer{SessionID: r.Session.ID, ClientName: r.Session.ClientName, ClientVersion: r.Session.ClientVersion,
		TokenBudget: budget, DeadlineMS: deadline.Milliseconds(), ReadOnly: d.ReadOnly, Execute: d.VerificationExecute})
}

// fixVerificationTypes applies only the verification_type fixes (missing →
// run-tests with a command, else manual; synonyms mapped; unknown →
// manual), as foundry's fix-verification-types does.
func (d *Deps) fixVerificationTypes(ctx context.Context, r *mcptool.Request, a lockedWriteArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (SpecFixAnswer, error) {
		res := specs.FixSpecWith(sp, specs.FixOptions{Clock: d.clock(), Only: specs.VerificationTypeFixes})
		return SpecFixAnswer{Applied: res.Applied, Skipped: res.Skipped, AppliedCount: len(res.Applied),
			IsValid: res.Report.IsValid, ErrorCount: res.Report.ErrorCount, WarningCount: res.Report.WarningCount}, nil
	})
}
