package mcptool

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// FlagContext is who asks, for one flag decision.
type FlagContext struct {
	SessionID     string
	ClientName    string
	ClientVersion string
	APIKeyID      string // the API key's id over HTTP (Session.KeyID)
	Tool          string
	Action        string
	// PerRequest marks a request that belongs to no session (protocol
	// 2026-07-28): Contract decides it from the client identity each time
	// instead of keeping a session's decision.
	PerRequest bool
}

// SourceErrorFallback is the Source of a decision the provider could not
// make (not ready, or failing): the registry default was used, and the
// answer carries a FALLBACK_USED warning.
const SourceErrorFallback = "error_fallback"

// FlagDecision is one flag's value for one caller and where it came from
// (file, flagd, default or error_fallback).
type FlagDecision struct {
	Flag    string
	On      bool
	Variant string
	Source  string
}

// Flags decides specd's feature flags per caller; *flags.Service implements
// it (the flag names live in flags/registry, and the tools set Action.Flag
// from there, so the framework names no flag). A nil Flags evaluates nothing: every gate is open and
// every session gets the response-v2 envelope.
type Flags interface {
	// Gate decides flag for one call, now (a file edit applies at once).
	Gate(ctx context.Context, flag string, c FlagContext) FlagDecision
	// Contract is the response-contract flag for c's session, decided once
	// per session and kept (each time for a PerRequest context).
	Contract(ctx context.Context, c FlagContext) FlagDecision
	// Forget drops a finished session's decisions.
	Forget(sessionID string)
	// Observe records a finished call for rollout health.
	Observe(decisions []FlagDecision, errorType string, d time.Duration)
	// List is every flag with its value for c (server capabilities).
	List(ctx context.Context, c FlagContext) any
	// Health is the rollout health table since start (server flags).
	Health() any
	// FileName names the flag file (never an absolute path).
	FileName() string
	// Status is the provider's state (health check).
	Status() FlagStatus
}

// FlagStatus is the flag provider's state as health check reports it.
type FlagStatus struct {
	Provider string // file or flagd
	State    string // ready, not_ready, stale, error or fatal
	// Problem says what is wrong now ("" when nothing): the flag file's
	// current state refused, or the provider not ready. Warning is its
	// warning code and Context the warning's details.
	Problem string
	Warning string
	Context map[string]any
}

// NewFlagContext is who asks, for one flag decision on tool and action
// ("" for the session-wide contract decision).
func NewFlagContext(sess Session, tool, action string) FlagContext {
	return FlagContext{SessionID: sess.ID, ClientName: sess.ClientName, ClientVersion: sess.ClientVersion, APIKeyID: sess.KeyID, Tool: tool, Action: action}
}

// gate decides a's flag for this call; off answers FEATURE_DISABLED.
func (rt *Runtime) gate(ctx context.Context, t *Tool, a *Action, sess Session) (FlagDecision, *core.Error) {
	if a.Flag == "" || rt.Flags == nil {
		return FlagDecision{}, nil
	}
	d := rt.Flags.Gate(ctx, a.Flag, NewFlagContext(sess, t.Name, a.Name))
	if d.On {
		return d, nil
	}
	return d, featureDisabled(t.Name, a.Name, a.Flag, rt.Flags.FileName())
}

// fallbackWarning is the FALLBACK_USED warning of an answer served under a
// decision the provider could not make (nil for any other decision).
func (rt *Runtime) fallbackWarning(d FlagDecision) core.MetaOption {
	if d.Source != SourceErrorFallback {
		return nil
	}
	return core.WithWarning(core.WarnFallbackUsed, core.SeverityWarning,
		fmt.Sprintf("Feature flag %s took its default (%s): the flag provider (%s) is not ready.", d.Flag, onOff(d.On), rt.Flags.FileName()),
		map[string]any{"flag": d.Flag, "value": d.On, "source": d.Source})
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// featureDisabled is the FEATURE_DISABLED answer of an action whose flag is
// off for this client.
func featureDisabled(tool, action, flag, file string) *core.Error {
	e := core.NewError(errcode.FeatureDisabled,
		fmt.Sprintf("%s %s is off for this client: feature flag %s is off.", tool, action, flag),
		map[string]any{"feature": flag, "tool": tool, "action": action}).
		WithRemediation(fmt.Sprintf("Ask the operator to turn feature flag %s on for this client in %s; server(action=\"capabilities\") shows every flag's value for you.", flag, file)).
		WithRecovery("server", map[string]any{"action": "capabilities"}, nil)
	e.Extra = map[string]any{"feature": flag}
	return e
}

// served is the flag decisions a finished call was served under: the
// session's contract decision and, for a gated action, the gate's. Rollout
// health (Flags.Observe) and the variant metric (Access.Done) both count
// these, so the two never disagree.
func (rt *Runtime) served(contract, gate FlagDecision) []FlagDecision {
	if rt.Flags == nil {
		return nil
	}
	ds := make([]FlagDecision, 1, 2)
	ds[0] = contract
	if gate.Flag != "" {
		ds = append(ds, gate)
	}
	return ds
}

// observe records a finished call for rollout health under ds (served).
func (rt *Runtime) observe(ds []FlagDecision, env core.Envelope) {
	if rt.Flags == nil {
		return
	}
	errType := ""
	if !env.Success {
		if m, ok := env.Data.(map[string]any); ok {
			errType, _ = m["error_type"].(string)
		}
		if errType == "" {
			errType = errcode.TypeInternal
		}
	}
	rt.Flags.Observe(ds, errType, time.Duration(env.Meta.Telemetry.DurationMS*float64(time.Millisecond)))
}

// contract is response_contract_v2 for this caller: decided once per
// session and kept (protocol 2025-11-25, whose session began with
// initialize); a 2026-07-28 request has no session, so it is decided per
// request from the client identity in its _meta, which gives the same answer
// for the same client as long as the flag file is unchanged.
func (rt *Runtime) contract(ctx context.Context, sess Session) FlagDecision {
	c := NewFlagContext(sess, "", "")
	c.PerRequest = server.IsModernRequest(ctx)
	return rt.Flags.Contract(ctx, c)
}

// contractV2 reports whether this caller gets the response-v2 envelope.
func (rt *Runtime) contractV2(ctx context.Context, sess Session) bool {
	return rt.Flags == nil || rt.contract(ctx, sess).On
}

// withFlagHooks decides the contract once per session at initialize and
// forgets it when the session ends, and serves a v1 session its tools/list
// (legacyToolList). It adds to the server's hooks when
// another option set some (server.WithHooks would replace them).
func withFlagHooks(rt *Runtime) server.ServerOption {
	return func(s *server.MCPServer) {
		h := s.GetHooks()
		if h == nil {
			h = &server.Hooks{}
			server.WithHooks(h)(s)
		}
		addFlagHooks(h, rt)
	}
}

func addFlagHooks(h *server.Hooks, rt *Runtime) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		rt.contractV2(ctx, sessionFromContext(ctx, *rt))
	})
	h.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) {
		if id := cs.SessionID(); id != "" && id != stdioSessionID {
			rt.Flags.Forget(id)
		}
	})
	h.AddAfterListTools(legacyToolList(rt))
}
