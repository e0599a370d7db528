// Package flags holds specd's feature flags: the registry (code is the source
// of truth), their evaluation through OpenFeature with the flagd provider
// (file mode by default, a real flagd for a fleet), the per-session decision
// of the response contract, and rollout health counts.
//
// Only this package (and cmd/specd, which wires it) imports OpenFeature; the
// tools see flags through the small tools.Flags interface.
package flags

import (
	_ "embed"
	"slices"
)

// Flag names.
const (
	ResponseContractV2  = "response_contract_v2"
	TaskBatchOperations = "task_batch_operations"
	ResearchDigests     = "research_digests"
	ContentArchive      = "content_archive"
	VerificationExecute = "verification_execute"
)

// Lifecycle states of a flag.
const (
	StateExperimental = "experimental"
	StateBeta         = "beta"
	StateStable       = "stable"
	StateDeprecated   = "deprecated"
)

// Flag is one registry entry.
type Flag struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	State       string   `json:"state"`
	Default     bool     `json:"default"`
	Owner       string   `json:"owner"`
	Gates       []string `json:"gates"` // what the flag decides: "tool action" pairs, or the answer shape
}

// Registry lists every flag specd knows, in a stable order. The embedded
// default flag file holds exactly these flags with these defaults (a test
// keeps the two in step).
var Registry = []Flag{
	{Name: ResponseContractV2, State: StateStable, Default: true, Owner: "specd core",
		Description: "Answer with the response-v2 envelope (on) or the legacy v1 shape (off); decided once per session.",
		Gates:       []string{"answer shape (envelope v2 vs legacy v1), outputSchema in tools/list"}},
	{Name: TaskBatchOperations, State: StateBeta, Default: true, Owner: "specd tasks",
		Description: "The batch actions of the task tool.",
		Gates:       []string{"task prepare-batch", "task start-batch", "task complete-batch", "task reset-batch"}},
	{Name: ResearchDigests, State: StateBeta, Default: true, Owner: "specd research",
		Description: "The research tool's digest actions.",
		Gates:       []string{"research digest-validate", "research digest-create", "research digest-put", "research digest-get", "research digest-list", "research digest-delete"}},
	{Name: ContentArchive, State: StateBeta, Default: true, Owner: "specd research",
		Description: "Archiving content (archive-put) and reading it back (archive-get).",
		Gates:       []string{"research archive-put", "research archive-get"}},
	{Name: VerificationExecute, State: StateExperimental, Default: false, Owner: "specd verification",
		Description: "verification execute runs verify nodes' shell commands; only on a server started with --enable-verification-execute.",
		Gates:       []string{"verification execute"}},
}

// Lookup returns the registry entry of name.
func Lookup(name string) (Flag, bool) {
	i := slices.IndexFunc(Registry, func(f Flag) bool { return f.Name == name })
	if i < 0 {
		return Flag{}, false
	}
	return Registry[i], true
}

// DefaultFile is the embedded default flag file (flagd's JSON format): every
// registry flag with its default. specd init writes it to
// <workspace>/.specd/flags.json for editing.
//
//go:embed default.json
var DefaultFile []byte
