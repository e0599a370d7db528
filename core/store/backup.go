package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core/store/bucketstore"
)

// ErrBackupExists is returned by Backup when the destination exists and
// overwriting was not asked for.
var ErrBackupExists = errors.New("the backup file exists (pass --force to overwrite it)")

// Backup writes a consistent copy of the whole store to dst while other
// processes may be using it: the copy is bbolt's Tx.WriteTo inside one read
// transaction, taken in turn with every other process like any operation.
// It is written to a temporary file in dst's folder, synced, and only then
// put in place, so dst is either the complete copy or untouched. An existing
// dst is refused with ErrBackupExists unless force is set. It returns the
// bytes written. Store errors: LOCK_TIMEOUT, STORE_CORRUPT, UNAVAILABLE.
func (s *Store) Backup(ctx context.Context, dst string, force bool) (int64, error) {
	if !force {
		if _, err := os.Lstat(dst); err == nil {
			return 0, ErrBackupExists
		} else if !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, err
	}
	keep := false
	defer func() {
		if !keep {
			_ = os.Remove(tmp.Name())
		}
	}()
	var n int64
	err = s.view(ctx, func(tx *bolt.Tx) error {
		var werr error
		n, werr = tx.WriteTo(tmp)
		return werr
	})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if force {
		err = os.Rename(tmp.Name(), dst)
	} else {
		// A hard link never replaces: a dst created meanwhile is kept.
		if err = os.Link(tmp.Name(), dst); errors.Is(err, fs.ErrExist) {
			err = ErrBackupExists
		}
	}
	if err != nil {
		return 0, err
	}
	keep = force // the renamed temporary file is dst now; a linked one is removed
	return n, nil
}

// Verify checks the whole store: bbolt's consistency check of every page,
// then, when the pages are sound and check is not nil, check's findings
// over the same transaction (the domain's: specs/specstore.CheckSpecs
// verifies every spec's invariants and that its records decode); a file
// shorter than its pages is reported as truncated without reading them.
// The checks run in a transaction no commit passes (see stillTx): bbolt's
// check of a read transaction would report a sound file as damaged while
// this store commits, so the store's writers wait until Verify ends;
// check must not write (nothing it does is kept). It returns every finding
// (none: the store is sound). A file that cannot be opened at all is the
// error STORE_CORRUPT; other errors: LOCK_TIMEOUT, STORE_READ_ONLY
// (unreadable), UNAVAILABLE.
func (s *Store) Verify(ctx context.Context, check func(bucketstore.Tx) ([]bucketstore.Finding, error)) ([]bucketstore.Finding, error) {
	var out []bucketstore.Finding
	// The length first, in a read transaction: the file never shrinks
	// under a snapshot, and a write transaction's rollback rereads the
	// freelist page, which a truncated file may lack.
	err := s.view(ctx, func(tx *bolt.Tx) error {
		if why := s.truncated(tx); why != "" {
			out = append(out, bucketstore.Finding{Problem: why})
		}
		return nil
	})
	if err != nil || len(out) > 0 {
		return out, err // reading pages past the end would fault
	}
	err = s.still(ctx, func(tx *bolt.Tx) error {
		if why := s.truncated(tx); why != "" {
			out = append(out, bucketstore.Finding{Problem: why})
			return nil
		}
		for err := range tx.Check() {
			out = append(out, bucketstore.Finding{Problem: err.Error()})
		}
		if len(out) > 0 {
			return nil // the pages are damaged: reading specs could fault
		}
		if check == nil {
			return nil
		}
		problems, err := check((*boltTx)(tx))
		out = append(out, problems...)
		return err
	})
	return out, err
}
