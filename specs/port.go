package specs

import "context"

// Repo is the persistence port of the spec domain: what the spec services
// (and the tools over them) need of the store, in the domain's terms.
// specs/specstore implements it over the store port (either engine); every
// method is one transaction. A method may run the fn it is given more than
// once, each time from the start over a fresh view (the etcd engine re-runs
// a read after a retryable error and a write that lost a race; only the
// last run counts): fn sets what it answers through outer variables on
// every run, never adds to what an earlier run left there, and has no other
// side effect.
type Repo interface {
	// ReadSpec runs fn over a lazily loaded, read-only view. SPEC_NOT_FOUND.
	ReadSpec(ctx context.Context, specID string, fn func(sp *Spec, j JournalReader) error) error
	// MutateSpec runs fn over a writable view and stores exactly what fn
	// changed, atomically. SPEC_NOT_FOUND, VERSION_CONFLICT, fn's errors.
	MutateSpec(ctx context.Context, specID string, o RepoWriteOptions, fn func(sp *Spec, j JournalWriter) error) (RepoWriteResult, error)
	// CreateSpec stores the spec build returns. DUPLICATE_ENTRY.
	CreateSpec(ctx context.Context, o RepoWriteOptions, build func(exists func(id string) bool) (*Spec, []JournalEntry, error)) (Header, error)
	// ListSpecs pages specs of a lifecycle folder ("all" = every spec).
	ListSpecs(ctx context.Context, folder, after string, limit int) ([]RepoSummary, string, error)
	// SpecIDs lists every spec id.
	SpecIDs(ctx context.Context) ([]string, error)
	// History pages versions newest first below before (0 = newest).
	History(ctx context.Context, specID string, before int64, limit int) ([]RepoVersion, bool, error)
	// HistoryCount is how many versions History can list, known without
	// reading them (total_count of spec history's pages).
	HistoryCount(ctx context.Context, specID string) (int, error)
	// ReadVersion runs fn over the spec as it was at version. VERSION_NOT_FOUND.
	ReadVersion(ctx context.Context, specID string, version int64, fn func(v VersionView) error) error
	// RollbackSpec restores version as a new version.
	RollbackSpec(ctx context.Context, specID string, version int64, o RepoWriteOptions, now func() string) (RepoWriteResult, error)
	// ImportSpec stores a whole spec, replacing an existing one if asked.
	ImportSpec(ctx context.Context, sp *Spec, journal []JournalEntry, replace bool) error
}
