package tools

import (
	"context"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs/autonomy"
)

// Who may drive an autonomy session (README "Autonomous runs", "Security"):
// on a server with API keys a session belongs to the key that started it.
// Its driving calls — session-step (next, report, replay, heartbeat),
// session pause, resume, rebase, end and reset, a start that would replace
// or reuse it (force, its idempotency_key) and review fidelity-gate — run
// under that key (any MCP session of it: an agent that reconnects keeps
// its session) or under an admin key (the operator who ends a stuck
// agent's session); another key is FORBIDDEN. Reads (status, list,
// session-events) stay open to every key, and the overrides a maintainer
// makes on purpose — gate-waiver and the write-lock bypass — are not
// bound: they are audited with their actor. A session started without a
// key, and a caller without one (stdio, the CLI, a keyless server), are
// not bound (autonomy.Session.DrivableBy).

// sessionOwnerDetail: the autonomy session another key may not drive, who
// started it and the caller's key.
type sessionOwnerDetail struct {
	SpecID     string `json:"spec_id"`
	SessionID  string `json:"session_id"`
	OwnerKeyID string `json:"owner_key_id"`
	StartedBy  string `json:"started_by"`
	KeyID      string `json:"key_id"`
}

// callerIsAdmin reports whether the call came with an admin-role API key.
func callerIsAdmin(ctx context.Context) bool {
	id, ok := httpguard.IdentityFrom(ctx)
	return ok && id.Role == httpguard.Admin
}

// mayDrive refuses (FORBIDDEN) a driving call on s by a caller whose key
// may not drive it: the refusal names the session, its key and holder,
// and as recovery the status call that shows them.
func mayDrive(ctx context.Context, r *mcptool.Request, s *autonomy.Session) error {
	if s == nil || s.DrivableBy(r.Session.KeyID) || callerIsAdmin(ctx) {
		return nil
	}
	status := toTaskSession.Call(sessionArgs{Command: "status", SpecID: s.SpecID, SessionID: s.ID})
	return core.NewError(errcode.Forbidden,
		fmt.Sprintf("Autonomy session %s of spec %s belongs to key %s (started by %s); key %s may not drive it.", s.ID, s.SpecID, s.OwnerKeyID, s.StartedBy, r.Session.KeyID),
		core.DetailsOf(sessionOwnerDetail{SpecID: s.SpecID, SessionID: s.ID, OwnerKeyID: s.OwnerKeyID, StartedBy: s.StartedBy, KeyID: r.Session.KeyID})).
		WithRemediation(fmt.Sprintf("Drive the session with key %s (any MCP session of it), or have an admin key end it; task session {command: status} shows who holds it.", s.OwnerKeyID)).
		WithNext(status, nil)
}

// resolveDriven resolves the session a call names (autonomy.Resolve) and,
// when the call drives it, refuses a caller who may not (mayDrive).
func resolveDriven(ctx context.Context, r *mcptool.Request, rec autonomy.Records, sid string, drive bool) (*autonomy.Session, error) {
	s, err := autonomy.Resolve(rec, sid)
	if err != nil || !drive {
		return s, err
	}
	return s, mayDrive(ctx, r, s)
}

// mayDriveNamed is mayDrive for the session a driving call names (sid,
// else the spec's active session, else its newest). A session that does
// not resolve is left to the call, which names that error.
func mayDriveNamed(ctx context.Context, r *mcptool.Request, rec autonomy.Records, sid string) error {
	s, err := autonomy.Resolve(rec, sid)
	if err != nil {
		return nil
	}
	return mayDrive(ctx, r, s)
}

// mayReplace refuses a start by another key that would end (force) or
// reuse (the same idempotency_key) the spec's active session; any other
// start is the domain's to decide (SPEC_SESSION_EXISTS).
func mayReplace(ctx context.Context, r *mcptool.Request, rec autonomy.Records, a sessionArgs) error {
	cur, err := autonomy.ActiveSession(rec)
	if err != nil || cur == nil {
		return err
	}
	if a.Force || (a.IdempotencyKey != "" && a.IdempotencyKey == cur.IdempotencyKey) {
		return mayDrive(ctx, r, cur)
	}
	return nil
}
