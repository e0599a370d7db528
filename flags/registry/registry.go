// Package registry is specd's feature flag registry: the one place that
// names each flag, its lifecycle state, its default and what it gates.
// Everything else reads it from here: the flags package evaluates these
// flags through OpenFeature, the tools set each gated action's flag from
// Gates, and capabilities lists the entries.
//
// It imports only the standard library, so the tools can read it without
// depending on OpenFeature (tests/layout_test.go checks both).
package registry

import (
	"encoding/json"
	"slices"
)

// Flag names.
const (
	ResponseContractV2  = "response_contract_v2"
	TaskBatchOperations = "task_batch_operations"
	ResearchDigests     = "research_digests"
	ContentArchive      = "content_archive"
	VerificationExecute = "verification_execute"
	AutonomySessions    = "autonomy_sessions"
)

// Lifecycle states of a flag.
const (
	StateExperimental = "experimental"
	StateBeta         = "beta"
	StateStable       = "stable"
	StateDeprecated   = "deprecated"
)

// Gate is one thing a flag decides: a tool action (Tool and Action), or,
// with What set, something that is not an action (the answer shape).
type Gate struct {
	Tool, Action string
	What         string
}

// String is "tool action", or What.
func (g Gate) String() string {
	if g.What != "" {
		return g.What
	}
	return g.Tool + " " + g.Action
}

// MarshalJSON writes the gate as its String.
func (g Gate) MarshalJSON() ([]byte, error) { return json.Marshal(g.String()) }

// Flag is one registry entry.
type Flag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	State       string `json:"state"`
	Default     bool   `json:"default"`
	Owner       string `json:"owner"`
	Gates       []Gate `json:"gates"` // what the flag decides
}

func actions(tool string, names ...string) []Gate {
	out := make([]Gate, len(names))
	for i, n := range names {
		out[i] = Gate{Tool: tool, Action: n}
	}
	return out
}

// Flags lists every flag specd knows, in a stable order. The flags
// package's embedded default flag file holds exactly these flags with
// these defaults (a test there keeps the two in step).
var Flags = []Flag{
	{Name: ResponseContractV2, State: StateStable, Default: true, Owner: "specd core",
		Description: "Answer with the response-v2 envelope (on) or the legacy v1 shape (off); decided once per session.",
		Gates:       []Gate{{What: "answer shape (envelope v2 vs legacy v1), outputSchema in tools/list"}}},
	{Name: TaskBatchOperations, State: StateBeta, Default: true, Owner: "specd tasks",
		Description: "The batch actions of the task tool.",
		Gates:       actions("task", "prepare-batch", "start-batch", "complete-batch", "reset-batch")},
	{Name: ResearchDigests, State: StateBeta, Default: true, Owner: "specd research",
		Description: "The research tool's digest actions.",
		Gates:       actions("research", "digest-validate", "digest-create", "digest-put", "digest-get", "digest-list", "digest-delete")},
	{Name: ContentArchive, State: StateBeta, Default: true, Owner: "specd research",
		Description: "Archiving content (archive-put) and reading it back (archive-get).",
		Gates:       actions("research", "archive-put", "archive-get")},
	{Name: VerificationExecute, State: StateExperimental, Default: false, Owner: "specd verification",
		Description: "verification execute runs verify nodes' shell commands; only on a server started with --enable-verification-execute.",
		Gates:       []Gate{{Tool: "verification", Action: "execute"}, {Tool: "test", Action: "run"}}},
	{Name: AutonomySessions, State: StateBeta, Default: true, Owner: "specd tasks",
		Description: "Autonomy sessions (foundry v0.16's step engine): the session lifecycle, steps with proofs and receipts, audit events, gate waivers and the evidence gate.",
		Gates:       append(actions("task", "session", "session-step", "session-events", "gate-waiver"), Gate{Tool: "review", Action: "fidelity-gate"})},
}

// Lookup returns the registry entry of name.
func Lookup(name string) (Flag, bool) {
	i := slices.IndexFunc(Flags, func(f Flag) bool { return f.Name == name })
	if i < 0 {
		return Flag{}, false
	}
	return Flags[i], true
}

// Gated is the flag that gates tool's action, "" when none does.
func Gated(tool, action string) string {
	for _, f := range Flags {
		for _, g := range f.Gates {
			if g.What == "" && g.Tool == tool && g.Action == action {
				return f.Name
			}
		}
	}
	return ""
}
