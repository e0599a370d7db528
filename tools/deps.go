package tools

import (
	"time"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/research/researchstore"
	"github.com/specd/specd/specs/mirror"
	"github.com/specd/specd/specs/specstore"
)

// Deps are the services and facts the tools are built over. cmd/specd fills
// it (OverStore); tests fill it with real stores in temporary directories.
type Deps struct {
	// Subscriptions is the spec subscription registry NewMCPServer
	// installs (nil before, or without a spec store); in-process readers
	// such as the board follow spec changes through its Watch.
	Subscriptions *mcptool.Subscriptions
	// Store is the store's health (a narrow view of the one store port,
	// bucketstore.Store; the subscription watcher also uses its
	// ChangeStamp when Store is the whole port).
	Store bucketstore.Health
	Specs SpecRepo
	// Research is the archive and digest store of the research tool (the
	// same store as Specs); nil makes its storing actions UNAVAILABLE.
	Research ResearchStore
	// Notes keeps the workspace's intake inbox and the record of error
	// answers (the same store as Specs); nil records no errors and makes
	// the intake and error actions UNAVAILABLE.
	Notes NotesStore
	// ArchiveRetention is how long archived research content is kept
	// (cmd/specd sets DefaultArchiveRetention, 30 days); 0 keeps it
	// forever. Writes to the archive sweep expired items at most hourly.
	ArchiveRetention time.Duration
	// TestCommand is the command of the "Run tests" verify node that phase
	// scaffolds get (config verify.test_command); empty makes it manual.
	TestCommand  string
	Version      string   // server version
	Workspace    string   // workspace root
	ConfigSource string   // where the configuration came from (flags, env, defaults)
	Transports   []string // enabled transports
	Started      time.Time
	TokenBudget  int
	Runtime      mcptool.Runtime
	// VerificationExecute lets verification execute run verify nodes'
	// commands (off unless the server is started with
	// --enable-verification-execute or SPECD_VERIFICATION_EXECUTE=1).
	VerificationExecute bool
	// VerifyTimeout is verification execute's default timeout (0: 300 s).
	VerifyTimeout time.Duration
	// HistoryKeep is how many versions of history each spec keeps (0: the
	// store's default, 50).
	HistoryKeep int
	// StrictComplete makes task complete refuse pending tasks (config
	// tasks.strict_complete): they must be started first.
	StrictComplete bool
	// ConfigSources names each setting's source (flag, env or default);
	// server context reports it as config_sources.
	ConfigSources map[string]string
	// Toolsets, when not empty, names the only tools offered (--toolsets;
	// health and server are always offered); ReadOnly offers only read
	// actions and refuses the others with FORBIDDEN (--read-only).
	Toolsets []string
	ReadOnly bool
	// AllowGateWaiver enables task gate-waiver (off unless the server is
	// started with --allow-gate-waiver, as foundry's allow_gate_waiver).
	AllowGateWaiver bool
	// AllowLockBypass lets a task or lifecycle mutation bypass an autonomy
	// session's write lock with bypass_autonomy_lock and a bypass_reason
	// (off unless --allow-lock-bypass, as foundry's allow_lock_bypass).
	AllowLockBypass bool
	// Mirror, when set, is the spec mirror folder (--mirror); health check
	// reports its conflicts and failures.
	Mirror *mirror.Mirror
}

// OverStore fills d's store services over st, the one store port: Store
// (its health and change stamp), Specs and Notes (specs/specstore: specs,
// journal, history, intake inbox, error log) and Research
// (research/researchstore's archive and digests, with the spec journal
// ranges that archive ids pin). It returns the spec repository.
func (d *Deps) OverStore(st bucketstore.Store) *specstore.Repo {
	repo := specstore.New(st, nil)
	d.Store, d.Specs, d.Notes = st, repo, repo
	d.Research = researchOverStore{researchstore.New(st, nil), repo}
	return repo
}

// researchOverStore is ResearchStore over the one store: research's archive
// and digests, and the spec journal's ranges.
type researchOverStore struct {
	*researchstore.Store
	*specstore.Repo
}
