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
// Every mutation is one bbolt read-write transaction: fn either commits
// entirely or, on any error or panic, changes nothing.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/specd/specd/core"
)

// SchemaVersion is the layout version this build writes. Opening a file with
// an older version runs the migrations in order; a newer one is refused.
const SchemaVersion = 2

// Default timings.
const (
	DefaultLockTimeout = 5 * time.Second
	DefaultLinger      = 20 * time.Millisecond
	DefaultMaxHold     = 250 * time.Millisecond
)

var (
	bucketMeta = []byte("meta")

	keySchemaVersion = []byte("schema_version")
	keyInstallID     = []byte("install_id")
	keyCreatedAt     = []byte("created_at")
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
	// Logger receives store events (default: slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID generates install ids (default core.NewUUID).
	NewID func() string
}

// Store is the specd store. It is safe for concurrent use.
type Store struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	cond     *sync.Cond
	db       *bolt.DB
	inflight int
	openedAt time.Time
	draining bool
	timer    *time.Timer
	closed   bool
	gen      uint64    // incremented on every close; guards stale linger timers
	yielded  time.Time // when the file was last given up to a waiting process
	yields   int       // how many times it was (for tests)

	installID string
	schema    int

	nodes nodeCache // decoded spec nodes, validated by their stored bytes
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
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = core.NewUUID
	}
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
	return s.closeLocked()
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
	s.db = nil
	s.draining = false
	s.cond.Broadcast()
	return err
}

// LockTimeoutError is the LOCK_TIMEOUT answer when another process holds the
// file longer than the lock timeout.
func LockTimeoutError(path string, waited time.Duration) *core.Error {
	return core.NewError(core.CodeLockTimeout,
		"The store is locked by another process.",
		map[string]any{"retry_after_ms": 250, "waited_ms": waited.Milliseconds(), "store": filepath.Base(path)})
}

// acquire opens the file if needed and registers one in-flight operation.
func (s *Store) acquire(ctx context.Context) (*bolt.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.draining && !s.closed {
		s.cond.Wait()
	}
	if s.closed {
		return nil, core.NewError(core.CodeUnavailable, "The store is closed; the server is shutting down.", nil)
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

// yieldWindow is how long a process that gave the file up after MaxHold
// waits before taking it again, when another process is waiting. bbolt polls
// a held lock every 50 ms, so a shorter window would let a busy process
// re-take the lock before the other one looks, starving it.
const yieldWindow = 60 * time.Millisecond

// waitingFresh is how recent a waiting mark must be to count.
const waitingFresh = 2 * time.Second

// waitingPath is the mark a process leaves next to the store while it waits
// for the lock; its modification time is the signal.
func (s *Store) waitingPath() string { return s.opts.Path + ".waiting" }

func (s *Store) markWaiting() {
	p := s.waitingPath()
	now := time.Now()
	if err := os.Chtimes(p, now, now); err != nil {
		_ = os.WriteFile(p, nil, 0o644)
	}
}

// othersWaiting reports whether another process marked, recently, that it
// waits for the file. Without one, a busy process keeps going: pausing for
// nobody would cost it a quarter of its throughput.
func (s *Store) othersWaiting() bool {
	st, err := os.Stat(s.waitingPath())
	return err == nil && time.Since(st.ModTime()) < waitingFresh
}

func (s *Store) openLocked(ctx context.Context) error {
	if wait := yieldWindow - time.Since(s.yielded); !s.yielded.IsZero() && wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		s.yielded = time.Time{}
	}
	if err := os.MkdirAll(filepath.Dir(s.opts.Path), 0o755); err != nil {
		return core.Internal(fmt.Errorf("store: create directory: %w", err))
	}
	ensureGitignore(filepath.Dir(s.opts.Path))
	timeout := s.opts.LockTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	start := time.Now()
	// First a try that does not wait; if another process holds the file,
	// leave a mark so it knows someone is waiting, then wait for real.
	db, err := bolt.Open(s.opts.Path, 0o644, &bolt.Options{Timeout: time.Nanosecond})
	if errors.Is(err, berrors.ErrTimeout) {
		s.markWaiting()
		db, err = bolt.Open(s.opts.Path, 0o644, &bolt.Options{Timeout: timeout})
	}
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return LockTimeoutError(s.opts.Path, time.Since(start))
		}
		return core.Internal(fmt.Errorf("store: open %s: %w", s.opts.Path, err))
	}
	if s.schema == 0 {
		if err := s.initMeta(db); err != nil {
			_ = db.Close()
			return err
		}
	}
	s.db = db
	s.openedAt = time.Now()
	return nil
}

// release ends one in-flight operation and decides when to let the file go.
func (s *Store) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	held := time.Since(s.openedAt)
	if held >= s.opts.MaxHold {
		s.draining = true // new work waits; the file is released once in-flight work ends
	}
	if s.inflight > 0 {
		return
	}
	s.cond.Broadcast()
	if s.draining || s.closed || s.opts.Linger < 0 {
		if s.draining && s.othersWaiting() {
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

// view runs fn in a read-only transaction.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release()
	return db.View(fn)
}

// update runs fn in one read-write transaction; any error rolls it back.
func (s *Store) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release()
	return db.Update(func(tx *bolt.Tx) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		// A deadline that passed while fn ran cancels the work: nothing is kept.
		return ctx.Err()
	})
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
