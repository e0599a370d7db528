// Package store is specd's embedded store on bbolt, and the only package that
// imports bbolt.
//
// The bbolt file is held only while work is in flight: the first operation
// opens it (waiting at most Options.LockTimeout for another process's lock,
// then failing with LOCK_TIMEOUT), and it is closed again once no operation
// is running and Options.Linger has passed. Several specd processes in one
// workspace (one per agent session or git worktree) therefore take turns on
// one file instead of one of them owning it.
//
// Every mutation (Update) is one atomic change: fn either commits entirely
// or, on any error or panic, changes nothing, and it is fsynced before it
// answers. Concurrent Updates share one bbolt transaction and one commit
// (group commit, batch.go), each fn behind a savepoint of its own.
//
// A file that cannot serve is named, not hidden: STORE_CORRUPT (damaged,
// truncated, or an existing empty file; the lock is released, so other
// processes get the same answer instead of LOCK_TIMEOUT), STORE_FULL (the
// disk, quota or file size limit refused a commit) and STORE_READ_ONLY (the
// file cannot be opened for writing: it is opened read-only, reads are
// served and writes refused). Answers name the file relative to
// Options.Workspace, never by its absolute path.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
)

// SchemaVersion is the layout version this build writes. Opening a file with
// an older version runs the migrations in order; a newer one is refused.
const SchemaVersion = bucketstore.SchemaVersion

// Default timings.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultLinger      = 20 * time.Millisecond
	DefaultMaxHold     = 250 * time.Millisecond
)

var (
	bucketMeta       = bucketstore.MetaBucket
	keySchemaVersion = bucketstore.KeySchemaVersion
	keyInstallID     = bucketstore.KeyInstallID
	keyCreatedAt     = bucketstore.KeyCreatedAt
)

// Options configure a Store. Zero values take the defaults.
type Options struct {
	// Path of the bbolt file. Its directory is created on first use.
	Path string
	// LockTimeout bounds the wait for another process's lock (default 5 s).
	LockTimeout time.Duration
	// Linger keeps the file open this long after the last operation so
	// bursts of calls do not reopen it each time (default 20 ms; negative
	// closes at once).
	Linger time.Duration
	// MaxHold is how long one process may keep the file open while busy
	// before it drains its in-flight work and releases it (default 250 ms).
	MaxHold time.Duration
	// Logger, Now and NewID: see bucketstore.EngineOptions.
	bucketstore.EngineOptions
	// Workspace, when set, is the folder answers name the store file
	// relative to (else they use its base name; never an absolute path).
	Workspace string
	// OnLockWait, when set, hears how long each transaction waited to get
	// the store (in-process draining and another process's file lock
	// included); it must be quick (a metric).
	OnLockWait func(time.Duration)
}

// Store is the specd store on bbolt: the store port (bucketstore.Store),
// its transactions run in bbolt's. It is safe for concurrent use.
type Store struct {
	opts Options
	log  *slog.Logger

	mu         sync.Mutex
	cond       *sync.Cond
	db         *bolt.DB
	inflight   int
	openedAt   time.Time
	draining   bool
	timer      *time.Timer
	closed     bool
	gen        uint64    // incremented on every close; guards stale linger timers
	yielded    time.Time // when the file was last given up to a waiting process
	yields     int       // how many times it was (for tests)
	lockF      *os.File  // <db>.lock, held while db is open
	waitF      *os.File  // <db>.waiting, share-locked while this store waits
	waitTried  bool      // waitF was opened (or could not be)
	damagedErr error     // STORE_CORRUPT of the file as it was at damagedAt
	damagedAt  identity  // its size, modification time and inode then
	readOnly   bool      // db was opened read-only: writes answer STORE_READ_ONLY
	fullAt     time.Time // last write refused for lack of space (zero: none since the last commit)

	installID string
	schema    int

	commits commitQueue // Updates waiting to share a commit (batch.go)
	undo    undoLog     // the savepoints' undo log, reused (batch.go)
	seek    seekers     // the shared transaction's read cursors (batch.go)
}

// Open prepares the store at opts.Path. It does not take the file lock (so it
// never blocks); the first operation does.
func Open(opts Options) (*Store, error) {
	if opts.Path == "" {
		return nil, errors.New("store: empty path")
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Linger == 0 {
		opts.Linger = DefaultLinger
	}
	if opts.MaxHold <= 0 {
		opts.MaxHold = DefaultMaxHold
	}
	opts.EngineOptions = opts.EngineOptions.WithDefaults()
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	opts.Path = abs
	s := &Store{opts: opts, log: opts.Logger}
	s.cond = sync.NewCond(&s.mu)
	return s, nil
}

// Path is the absolute path of the bbolt file.
func (s *Store) Path() string { return s.opts.Path }

// Close releases the file. Operations after Close fail with UNAVAILABLE.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for s.inflight > 0 {
		s.cond.Wait()
	}
	err := s.closeLocked()
	if s.waitF != nil {
		_ = s.waitF.Close()
		s.waitF = nil
	}
	return err
}

func (s *Store) closeLocked() error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.gen++
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	releaseLockFile(s.lockF)
	s.db, s.lockF, s.readOnly = nil, nil, false
	s.draining = false
	s.cond.Broadcast()
	return err
}

// LockTimeoutError is the LOCK_TIMEOUT answer when another process holds the
// file longer than the lock timeout.
func LockTimeoutError(path string, waited time.Duration) *core.Error {
	return core.NewError(errcode.LockTimeout,
		"The store is locked by another process.",
		map[string]any{"retry_after_ms": 250, "waited_ms": waited.Milliseconds(), "store": filepath.Base(path)})
}

// acquire opens the file if needed and registers one in-flight operation.
func (s *Store) acquire(ctx context.Context) (*bolt.DB, error) {
	if s.opts.OnLockWait != nil {
		start := time.Now()
		defer func() { s.opts.OnLockWait(time.Since(start)) }()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.draining && !s.closed {
		s.cond.Wait()
	}
	if s.closed {
		return nil, core.NewError(errcode.Unavailable, "The store is closed; the server is shutting down.", nil)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.db == nil {
		if err := s.openLocked(ctx); err != nil {
			return nil, err
		}
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.inflight++
	return s.db, nil
}

// release ends one in-flight operation and decides when to let the file go:
// after MaxHold of continuous use (contendedHold when another process
// waits), at once when idle and another process waits, else after Linger.
func (s *Store) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	held := time.Since(s.openedAt)
	waiting := s.othersWaiting()
	if held >= s.opts.MaxHold || (waiting && held >= contendedHold) {
		s.draining = true // new work waits; the file is released once in-flight work ends
	}
	if s.inflight > 0 {
		return
	}
	s.cond.Broadcast()
	if s.draining || s.closed || s.opts.Linger < 0 || waiting {
		if waiting {
			s.yielded = time.Now()
			s.yields++
		}
		if err := s.closeLocked(); err != nil {
			s.log.Warn("store close failed", "err", err)
		}
		return
	}
	gen := s.gen
	s.timer = time.AfterFunc(s.opts.Linger, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.gen == gen && s.inflight == 0 {
			if err := s.closeLocked(); err != nil {
				s.log.Warn("store close failed", "err", err)
			}
		}
	})
}

// view runs fn in a read-only transaction. Besides fn's own errors it
// answers LOCK_TIMEOUT, UNAVAILABLE (closed), STORE_CORRUPT (the file cannot
// be opened, or bbolt faults on a damaged page), STORE_READ_ONLY (a file
// that cannot be read either) or the context's error.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.reading(ctx, func(db *bolt.DB) error { return db.View(fn) })
}

// still is view over a transaction no commit passes while fn runs (see
// stillTx): the writers of this store wait until fn returns. fn must not
// write; whatever it does is rolled back.
func (s *Store) still(ctx context.Context, fn func(*bolt.Tx) error) error {
	return s.reading(ctx, func(db *bolt.DB) error { return s.stillTx(db, fn) })
}

// reading runs read with the file acquired and a fault on a damaged page
// answered as STORE_CORRUPT (view's and still's guards, in one place).
func (s *Store) reading(ctx context.Context, read func(*bolt.DB) error) (err error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release()
	defer s.recoverCorrupt(db, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return read(db)
}

// update runs fn in one read-write transaction; any error rolls it back.
// Besides fn's errors and view's, it answers STORE_READ_ONLY (opened
// read-only) and STORE_FULL (the disk, quota or file size limit refused the
// commit): in every case nothing of fn is kept.
func (s *Store) update(ctx context.Context, fn func(*bolt.Tx) error) (err error) {
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release()
	if s.isReadOnly() {
		return s.ReadOnlyError(nil)
	}
	defer s.recoverCorrupt(db, &err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var fnErr bool
	err = db.Update(func(tx *bolt.Tx) error {
		if err := ctx.Err(); err != nil {
			fnErr = true
			return err
		}
		if err := fn(tx); err != nil {
			fnErr = true
			return err
		}
		// A deadline that passed while fn ran cancels the work: nothing is kept.
		if err := ctx.Err(); err != nil {
			fnErr = true
			return err
		}
		return nil
	})
	if err == nil {
		s.noteWrite(nil)
		return nil
	}
	if fnErr {
		return err
	}
	// The commit itself failed (write or sync): classify it, and reopen the
	// file before the next operation rather than trust bbolt's memory of it.
	serr := s.storageError("commit", err)
	s.noteWrite(serr)
	return serr
}

func (s *Store) isReadOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readOnly
}

// noteWrite records the outcome of a commit: a STORE_FULL is remembered (for
// CheckWritable) until a commit succeeds; any failure closes the file once
// idle.
func (s *Store) noteWrite(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.fullAt = time.Time{}
		return
	}
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == errcode.StoreFull {
		s.fullAt = time.Now()
	}
	s.draining = true
}

// recoverCorrupt turns a panic inside a transaction into STORE_CORRUPT when
// the file really is damaged (bbolt's consistency check fails or faults);
// any other panic is a bug and goes on. SetPanicOnFault makes a fault on a
// page beyond the end of a truncated file a recoverable panic.
func (s *Store) recoverCorrupt(db *bolt.DB, err *error) {
	v := recover()
	if v == nil {
		return
	}
	if s.damaged(db) {
		s.mu.Lock()
		s.draining = true
		s.mu.Unlock()
		*err = s.CorruptError("a page cannot be read", errOpenPanic{v})
		return
	}
	panic(v)
}

// damaged runs bbolt's consistency check, reporting true if it finds a
// problem or itself panics. A file shorter than its pages is damaged
// without looking further, found in a read transaction (the file never
// shrinks under a snapshot, so this needs no stillness; and the rollback
// of a write transaction rereads the freelist page, which could be past
// the end). It must not run inside a read-write transaction of db (the
// check takes one, see stillTx); runSaved, which does, uses damagedTx.
func (s *Store) damaged(db *bolt.DB) (bad bool) {
	defer func() {
		if recover() != nil {
			bad = true
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	_ = db.View(func(tx *bolt.Tx) error {
		bad = s.truncated(tx) != ""
		return nil
	})
	if bad {
		return true
	}
	_ = s.stillTx(db, func(tx *bolt.Tx) error {
		bad = s.damagedTx(tx)
		return nil
	})
	return bad
}

// damagedTx runs bbolt's consistency check over tx, which no commit may
// pass while it runs (a read-write transaction, see stillTx), reporting
// true if it finds a problem or itself panics. A file shorter than its
// pages is damaged without looking further: bbolt's check reads pages in a
// goroutine of its own, where a fault past the end of the file could not
// be recovered.
func (s *Store) damagedTx(tx *bolt.Tx) (bad bool) {
	defer func() {
		if recover() != nil {
			bad = true
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if s.truncated(tx) != "" {
		return true
	}
	for range tx.Check() {
		bad = true
	}
	return bad
}

// stillTx runs fn in a transaction that no commit passes while fn runs,
// which bbolt's Tx.Check needs: on a read transaction it compares the
// snapshot's pages with db's live freelist, which a concurrent commit
// changes (the pages it frees are still the snapshot's, the free pages it
// takes are not), so a sound file would be reported damaged ("reachable
// freed", "unreachable unfreed"). It is a read-write transaction, always
// rolled back (writers of this process wait for fn; other processes are
// kept out by the file lock anyway), or, on a file opened read-only, where
// nothing writes, a read transaction. fn's panics go on after the rollback.
func (s *Store) stillTx(db *bolt.DB, fn func(*bolt.Tx) error) error {
	if db.IsReadOnly() {
		return db.View(fn)
	}
	tx, err := db.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// truncated describes how the file is shorter than the pages tx's meta
// says it has, or is "" when it is not.
func (s *Store) truncated(tx *bolt.Tx) string {
	st, err := os.Stat(s.opts.Path)
	if err != nil || st.Size() >= tx.Size() {
		return ""
	}
	return fmt.Sprintf("the file has %d bytes but its pages need %d: it was truncated", st.Size(), tx.Size())
}

// ensureGitignore keeps a .specd store directory out of the user's commits. A
// store placed elsewhere (--db) is left alone: that directory is the user's.
func ensureGitignore(dir string) {
	if filepath.Base(dir) != ".specd" {
		return
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Stat(p); err == nil {
		return
	}
	_ = os.WriteFile(p, []byte("# specd's local store: not for version control\n*\n"), 0o644)
}
