package specs

// This file declares the types the persistence port of the spec domain
// speaks in. specs/specstore implements them over the store port (bbolt or
// etcd); the tools layer sees the port in these terms, so it never sees
// the store's concrete types.

// JournalReader pages through a spec's journal.
type JournalReader interface {
	// Entries returns up to limit entries, newest first, with seq < before
	// (before 0 = from the newest) that pass keep (nil = all), and whether
	// more matching entries may exist.
	Entries(before uint64, limit int, keep func(*JournalEntry) bool) ([]JournalEntry, bool, error)
	// TaskEntries is Entries restricted to one task's entries, read through
	// an index: its cost depends on the task's entries, not the journal's.
	TaskEntries(taskID string, before uint64, limit int, keep func(*JournalEntry) bool) ([]JournalEntry, bool, error)
	// Records is the spec's record space named space (a small ordered
	// key-value space the store keeps beside the journal, in the same
	// transaction: specs/autonomy keeps its sessions there). Writes through
	// a ReadSpec view fail.
	Records(space string) Records
}

// Records is one ordered key-value space of a spec, read and written in the
// transaction of the spec operation that got it (both engines).
type Records interface {
	// Get returns the value of key, nil when absent; valid until the
	// transaction ends.
	Get(key string) []byte
	// Put stores value under key.
	Put(key string, value []byte) error
	// Delete removes key (absent is no error).
	Delete(key string) error
	// Scan calls fn for every key starting with prefix and greater than
	// after, in key order, until fn returns false.
	Scan(prefix, after string, fn func(key string, value []byte) bool) error
}

// JournalWriter is a JournalReader that can also queue entries for the
// mutation's transaction (they get their seq when it commits).
type JournalWriter interface {
	JournalReader
	Append(e JournalEntry)
}

// RepoWriteOptions describe one stored mutation.
type RepoWriteOptions struct {
	DryRun          bool   // compute and report; store nothing
	ExpectedVersion *int64 // VERSION_CONFLICT when the stored version differs
	Action          string // recorded in history, e.g. "authoring.phase-add"
	Author          string
	Keep            int // history versions kept (0 = the store's default)
	// Guard, when set, runs inside the write's transaction (MutateSpec,
	// RollbackSpec) after the version check and before anything is
	// written: its error refuses the write, and what it writes through j's
	// records commits with the change (an autonomy session's write lock and
	// its audit).
	Guard func(j JournalWriter) error
}

// RepoChange is one entry of a mutation's change list.
type RepoChange struct {
	Op     string `json:"op"`     // add | update | remove
	Target string `json:"target"` // spec | node:<id>
	Detail string `json:"detail,omitempty"`
}

// RepoWriteResult reports what a stored mutation did (or would do).
type RepoWriteResult struct {
	Version int64
	// Changes lists what a dry run would change (MutateSpec with DryRun)
	// and what RollbackSpec restored (or would); a stored MutateSpec
	// leaves it nil (no caller reads it, and building it on every write
	// cost a string per changed node).
	Changes []RepoChange
	Journal []JournalEntry
	DryRun  bool
}

// RepoSummary is one row of a spec listing, read from the header alone.
type RepoSummary struct {
	SpecID             string `json:"spec_id"`
	Title              string `json:"title"`
	Lifecycle          string `json:"lifecycle"`
	Status             string `json:"status"`
	TotalTasks         int    `json:"total_tasks"`
	CompletedTasks     int    `json:"completed_tasks"`
	ProgressPercentage int    `json:"progress_percentage"`
	CurrentPhase       string `json:"current_phase"`
	Version            int64  `json:"version"`
	LastUpdated        string `json:"last_updated"`
}

// RepoVersion is one entry of a spec's history.
type RepoVersion struct {
	Version      int64    `json:"version"`
	Timestamp    string   `json:"timestamp"`
	Action       string   `json:"action,omitempty"`
	Author       string   `json:"author,omitempty"`
	ChangedNodes []string `json:"changed_nodes"`
}

// VersionView is a spec as it was at one stored version.
type VersionView interface {
	// Header is the header at that version.
	VersionHeader() Header
	// NodeAt returns the node as it was (nil when absent then).
	NodeAt(id string) *Node
	// ChangedSince lists the ids of nodes changed after that version.
	ChangedSince() []string
	// Document assembles the whole document at that version.
	Document() Document
	// CurrentNode and CurrentHeader read the spec as it is now, for diffs.
	CurrentNode(id string) *Node
	CurrentHeader() Header
}
