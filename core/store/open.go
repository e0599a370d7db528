package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"

	"github.com/specd/specd/core/flock"
)

// How the file is handed between processes.
//
// Every specd process first takes an exclusive flock on <db>.lock, blocking
// in the kernel, which wakes a waiter the moment the holder lets go (bbolt's
// own lock is polled every 50 ms, which made waits long and unfair). Only
// then is the bbolt file opened; its own flock is then uncontended. While a
// process waits it holds a shared flock on <db>.waiting, so the holder can
// tell (one non-blocking flock) that someone waits, and then lets the file
// go as soon as it is idle instead of lingering, and pauses yieldWindow
// before taking it back.

// yieldWindow is how long a process that gave the file up to a waiting
// process waits before taking it again, where there is no queue (see
// queueOrders): long enough for the woken waiter to run and take the lock,
// which the kernel does not hand over by itself. With the queue, the
// process simply takes a ticket behind those already waiting.
func yieldWindow() time.Duration {
	if queueOrders {
		return 0
	}
	return 3 * time.Millisecond
}

// contendedHold is how long a busy process keeps the file while another one
// waits (MaxHold applies when nobody waits).
const contendedHold = 10 * time.Millisecond

func (s *Store) lockPath() string    { return s.opts.Path + ".lock" }
func (s *Store) waitingPath() string { return s.opts.Path + ".waiting" }

// openSide opens a lock file next to the store: read-write (created if
// needed), else read-only when the folder or file is not writable (flock
// works on either). nil without error means there is no such file and it
// cannot be created: the caller goes without.
func openSide(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		return f, nil
	}
	if !isReadOnly(err) {
		return nil, err
	}
	f, err = os.Open(path)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && isReadOnly(err)) {
		return nil, nil
	}
	return f, err
}

// othersWaiting reports whether another process (or another Store on the
// same file) waits for the file right now. Without one, a busy process keeps
// going: pausing for nobody would cost it throughput.
func (s *Store) othersWaiting() bool {
	if !s.openWaitFile() {
		return false
	}
	free, err := flock.Try(s.waitF, flock.Exclusive)
	if err != nil {
		return false
	}
	if free {
		_ = flock.Release(s.waitF)
	}
	return !free
}

// openWaitFile opens <db>.waiting once (every store needs it: a holder
// that never waited must still see the others waiting).
func (s *Store) openWaitFile() bool {
	if s.waitF == nil && !s.waitTried {
		s.waitTried = true
		f, err := openSide(s.waitingPath())
		if err == nil && f != nil {
			s.waitF = f
		}
	}
	return s.waitF != nil
}

// markWaiting holds a shared flock on <db>.waiting until the returned func
// runs.
func (s *Store) markWaiting() func() {
	if !s.openWaitFile() {
		return func() {}
	}
	if ok, err := flock.Try(s.waitF, flock.Shared); err != nil || !ok {
		return func() {}
	}
	return func() { _ = flock.Release(s.waitF) }
}

// lockWait is one blocking flock running in its own goroutine, so the
// caller's deadline still bounds the wait. If the caller gives up first, the
// goroutine releases the lock (and closes the file) as soon as it gets it.
type lockWait struct {
	mu        sync.Mutex
	done      bool
	abandoned bool
	err       error
	ch        chan struct{}
}

// takeLockFile takes <db>.lock exclusively within timeout and ctx. It
// returns the held file (nil when none can exist: a read-only folder that
// never had one), LOCK_TIMEOUT, or ctx's error.
func (s *Store) takeLockFile(ctx context.Context, timeout time.Duration, start time.Time) (*os.File, error) {
	f, err := openSide(s.lockPath())
	if err != nil {
		return nil, s.storageError("open the lock file", err)
	}
	if f == nil {
		return nil, nil
	}
	ticket := queueTicket(f)
	if queueTurn(f, ticket) {
		ok, err := flock.Try(f, flock.Exclusive)
		if err != nil {
			_ = f.Close()
			return nil, s.storageError("lock", err)
		}
		if ok {
			return f, nil
		}
	}
	unmark := s.markWaiting()
	defer unmark()
	w := &lockWait{ch: make(chan struct{})}
	go func() {
		err := queueWait(f, ticket)
		if err == nil {
			err = flock.Wait(f, flock.Exclusive)
		}
		w.mu.Lock()
		w.done, w.err = true, err
		if w.abandoned {
			if err == nil {
				_ = flock.Release(f)
			}
			_ = f.Close()
		}
		w.mu.Unlock()
		close(w.ch)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var gaveUp error
	select {
	case <-w.ch:
	case <-t.C:
		gaveUp = LockTimeoutError(s.opts.Path, time.Since(start))
	case <-ctx.Done():
		gaveUp = ctx.Err()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.abandoned = true
		queueLeave(f, ticket) // the next in line need not wait for one who left
		return nil, gaveUp
	}
	if w.err != nil {
		_ = f.Close()
		return nil, s.storageError("lock", w.err)
	}
	return f, nil
}

// releaseLockFile lets <db>.lock go.
func releaseLockFile(f *os.File) {
	if f != nil {
		_ = flock.Release(f)
		_ = f.Close()
	}
}

// errEmptyStore marks an existing store file of 0 bytes.
var errEmptyStore = errors.New("the store file is empty (0 bytes)")

// errOpenPanic marks a panic inside bbolt's Open (a damaged file).
type errOpenPanic struct{ v any }

func (e errOpenPanic) Error() string { return fmt.Sprintf("bbolt panicked opening the file: %v", e.v) }

// boltOpen opens the bbolt file read-write, or read-only when it cannot be
// opened for writing. The file's own flock is taken in bbolt's OpenFile hook
// (bbolt's flock on the same descriptor then succeeds at once), so the
// 0-byte check happens under the lock: an existing empty file is refused
// with errEmptyStore, while one this call creates is initialised. A panic
// inside bbolt (a damaged file) is recovered and its lock released. created
// reports that this call created the file.
func (s *Store) boltOpen(timeout time.Duration, readOnly bool) (db *bolt.DB, created bool, err error) {
	var file *os.File
	hook := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		var f *os.File
		var err error
		if flag&os.O_CREATE != 0 {
			f, err = os.OpenFile(name, flag&^os.O_CREATE, perm)
			if errors.Is(err, fs.ErrNotExist) {
				f, err = os.OpenFile(name, flag|os.O_EXCL, perm)
				created = err == nil
			}
		} else {
			f, err = os.OpenFile(name, flag, perm)
		}
		if err != nil {
			return nil, err
		}
		how := flock.Exclusive
		if readOnly {
			how = flock.Shared
		}
		deadline := time.Now().Add(timeout)
		for {
			ok, lerr := flock.Try(f, how)
			if lerr != nil {
				_ = f.Close()
				return nil, lerr
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				_ = f.Close()
				return nil, berrors.ErrTimeout
			}
			time.Sleep(5 * time.Millisecond) // only a process without <db>.lock (an older specd) holds it
		}
		if !created {
			st, err := f.Stat()
			if err == nil && st.Size() == 0 {
				_ = flock.Release(f)
				_ = f.Close()
				return nil, errEmptyStore
			}
		}
		file = f
		return f, nil
	}
	defer func() {
		if v := recover(); v != nil {
			if file != nil {
				_ = flock.Release(file)
				_ = file.Close()
			}
			db, err = nil, errOpenPanic{v}
		}
		if err != nil && created {
			// Nothing half-written: a file this call created and could not
			// initialise (a full disk) is removed again.
			_ = os.Remove(s.opts.Path)
			created = false
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	db, err = bolt.Open(s.opts.Path, 0o644, &bolt.Options{Timeout: timeout, ReadOnly: readOnly, OpenFile: hook})
	return db, created, err
}

// storeName is how answers name the store file: relative to the workspace
// when it lies inside it, else its base name; never an absolute path.
func (s *Store) storeName() string {
	if s.opts.Workspace != "" {
		if rel, err := filepath.Rel(s.opts.Workspace, s.opts.Path); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(s.opts.Path)
}

// CorruptError is STORE_CORRUPT: the file cannot be read as a store.
func (s *Store) CorruptError(why string, cause error) *core.Error {
	return core.NewError(errcode.StoreCorrupt,
		fmt.Sprintf("The store file %s is damaged (%s); specd cannot use it.", s.storeName(), why),
		map[string]any{"store": s.storeName()}).WithCause(cause)
}

// FullError is STORE_FULL: the disk (or quota, or file size limit) refused
// the write; nothing of it was kept.
func (s *Store) FullError(cause error) *core.Error {
	return core.NewError(errcode.StoreFull,
		fmt.Sprintf("The disk holding the store file %s is full; nothing was written.", s.storeName()),
		map[string]any{"store": s.storeName()}).WithCause(cause)
}

// ReadOnlyError is STORE_READ_ONLY: the file (or its file system) cannot be
// written; reads are still served.
func (s *Store) ReadOnlyError(cause error) *core.Error {
	return core.NewError(errcode.StoreReadOnly,
		fmt.Sprintf("The store file %s is read-only for this process; reads work, writes are refused.", s.storeName()),
		map[string]any{"store": s.storeName()}).WithCause(cause)
}

// storageError classifies an error of the file system or of bbolt:
// STORE_CORRUPT, STORE_FULL, STORE_READ_ONLY, LOCK_TIMEOUT, else
// INTERNAL_ERROR (with the cause kept for the log, never shown).
func (s *Store) storageError(doing string, err error) error {
	var ce *core.Error
	var op errOpenPanic
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, errEmptyStore):
		return s.CorruptError("it is empty: 0 bytes", err)
	case errors.As(err, &op):
		return s.CorruptError("its pages are inconsistent", err)
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch),
		errors.Is(err, berrors.ErrChecksum), errors.Is(err, berrors.ErrInvalidMapping):
		return s.CorruptError("it is not a valid bbolt file", err)
	case isTooSmall(err):
		return s.CorruptError("it is truncated: shorter than the two pages every store begins with", err)
	case isNoSpace(err):
		return s.FullError(err)
	case isReadOnly(err), errors.Is(err, berrors.ErrDatabaseReadOnly):
		return s.ReadOnlyError(err)
	default:
		return core.Internal(fmt.Errorf("store: %s %s: %w", doing, filepath.Base(s.opts.Path), err))
	}
}

// isTooSmall reports bbolt's refusal of a file shorter than its first two
// pages ("file size too small N"), which bbolt returns as plain text with
// no sentinel to match.
func isTooSmall(err error) bool {
	return strings.Contains(err.Error(), "file size too small")
}

func (s *Store) openLocked(ctx context.Context) error {
	if wait := yieldWindow() - time.Since(s.yielded); !s.yielded.IsZero() && wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	s.yielded = time.Time{}
	if err := os.MkdirAll(filepath.Dir(s.opts.Path), 0o755); err != nil {
		return s.PathError(err)
	}
	ensureGitignore(filepath.Dir(s.opts.Path))
	timeout := s.opts.LockTimeout
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	start := time.Now()
	lock, err := s.takeLockFile(ctx, timeout, start)
	if err != nil {
		return err
	}
	remaining := max(timeout-time.Since(start), time.Millisecond)
	// A file found damaged is not opened again until it changes: each
	// failed bbolt open leaves its memory mapping behind.
	ident, identErr := fileIdentity(s.opts.Path)
	if s.damagedErr != nil && identErr == nil && ident.same(s.damagedAt) {
		releaseLockFile(lock)
		return s.damagedErr
	}
	s.damagedErr = nil
	readOnly := false
	db, created, err := s.boltOpen(remaining, false)
	if err != nil && isReadOnly(err) {
		readOnly = true
		db, _, err = s.boltOpen(remaining, true)
	}
	if err != nil {
		releaseLockFile(lock)
		if errors.Is(err, berrors.ErrTimeout) {
			return LockTimeoutError(s.opts.Path, time.Since(start))
		}
		if readOnly && errors.Is(err, fs.ErrNotExist) {
			return s.ReadOnlyError(err) // cannot even be created
		}
		serr := s.storageError("open", err)
		var op errOpenPanic
		if errors.As(err, &op) && identErr == nil {
			s.damagedErr, s.damagedAt = serr, ident
		}
		return serr
	}
	if s.schema == 0 || readOnly {
		if err := s.initMetaChecked(db, readOnly); err != nil {
			_ = db.Close()
			if created {
				_ = os.Remove(s.opts.Path)
			}
			releaseLockFile(lock)
			return err
		}
	}
	s.db, s.lockF, s.readOnly = db, lock, readOnly
	s.openedAt = time.Now()
	return nil
}

// initMetaChecked is initMeta with a damaged page turned into STORE_CORRUPT:
// bbolt panics (an assertion, or a fault past the end of the file) on a
// page that is not what its parent says, and the open must answer, not
// crash. A panic on a file bbolt's check finds sound is a bug and goes on.
// It runs under s.mu, so it cannot use recoverCorrupt.
func (s *Store) initMetaChecked(db *bolt.DB, readOnly bool) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if !s.damaged(db) {
				panic(v)
			}
			err = s.CorruptError("a page cannot be read", errOpenPanic{v})
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	return s.initMeta(db, readOnly)
}

// identity is what tells one state of a file from another.
type identity struct{ fi os.FileInfo }

func fileIdentity(path string) (identity, error) {
	st, err := os.Stat(path)
	return identity{st}, err
}

// same reports that a and b are the same file, unchanged.
func (a identity) same(b identity) bool {
	return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) &&
		a.fi.Size() == b.fi.Size() && a.fi.ModTime().Equal(b.fi.ModTime())
}

// readMeta reads the schema version and install id without writing: the
// opening of a read-only store, which must already be at this build's
// layout.
func (s *Store) readMeta(db *bolt.DB) error {
	var schema int
	var installID string
	err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return nil
		}
		schema, _ = strconv.Atoi(string(b.Get(keySchemaVersion)))
		installID = string(b.Get(keyInstallID))
		return nil
	})
	if err != nil {
		return s.storageError("read", err)
	}
	switch {
	case schema > SchemaVersion:
		return newerSchemaError(schema)
	case schema < SchemaVersion:
		return s.ReadOnlyError(nil).WithDetail("schema_version", schema).
			WithRemediation("The store needs an upgrade (layout " + strconv.Itoa(schema) + " to " + strconv.Itoa(SchemaVersion) + ") that a read-only file cannot take: make it writable once.")
	}
	s.installID, s.schema = installID, schema
	return nil
}
