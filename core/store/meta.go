package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
)

// Migration upgrades the layout from To-1 to To inside the opening
// transaction. Migrations run in order; a failure leaves the file untouched.
type Migration struct {
	To    int
	Name  string
	Apply func(tx *bolt.Tx) error
}

// migrations is the ordered list of layout upgrades. Version 1 is the initial
// layout.
var migrations = []Migration{
	{To: 2, Name: "journal index by task", Apply: indexJournalsByTask},
	// Lazy: specs/specstore reads a node with its children inline as
	// before and converts it on its next write; the version marks the
	// file so that a layout-2 build refuses it.
	{To: 3, Name: "children in chunks (nodes convert on their next write)", Apply: func(*bolt.Tx) error { return nil }},
}

// indexJournalsByTask builds every spec's journal_task index from its journal.
func indexJournalsByTask(tx *bolt.Tx) error { return bucketstore.IndexJournalsByTask((*boltTx)(tx)) }

// initMeta creates the meta bucket on first use, records the schema version
// and install id, and runs pending migrations, all in one transaction. A
// read-only file is only read (see readMeta). Errors: UNAVAILABLE (a newer
// layout), STORE_FULL, STORE_READ_ONLY, STORE_CORRUPT, INTERNAL_ERROR.
func (s *Store) initMeta(db *bolt.DB, readOnly bool) error {
	if readOnly {
		return s.readMeta(db)
	}
	var installID string
	var schema int
	err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		current := 0
		if v := b.Get(keySchemaVersion); v != nil {
			current, err = strconv.Atoi(string(v))
			if err != nil {
				return fmt.Errorf("corrupt schema version %q", v)
			}
		}
		if current > SchemaVersion {
			return errNewerSchema{current}
		}
		if current == 0 {
			current = SchemaVersion // a new file starts at the current layout
			if err := b.Put(keyCreatedAt, []byte(s.opts.Now().UTC().Format(time.RFC3339))); err != nil {
				return err
			}
		}
		for _, m := range migrations {
			if m.To <= current {
				continue
			}
			if err := m.Apply(tx); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.To, m.Name, err)
			}
			current = m.To
		}
		if err := b.Put(keySchemaVersion, []byte(strconv.Itoa(current))); err != nil {
			return err
		}
		if v := b.Get(keyInstallID); v != nil {
			installID = string(v)
		} else {
			installID = s.opts.NewID()
			if err := b.Put(keyInstallID, []byte(installID)); err != nil {
				return err
			}
		}
		schema = current
		return createBuckets(tx)
	})
	var newer errNewerSchema
	if errors.As(err, &newer) {
		return newerSchemaError(newer.version)
	}
	if err != nil {
		return s.storageError("initialise", err)
	}
	s.installID, s.schema = installID, schema
	return nil
}

// createBuckets makes every top-level bucket of the current layout.
func createBuckets(tx *bolt.Tx) error {
	for _, name := range topBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// topBuckets lists the layout's top-level buckets besides meta; files of
// this store that add one register it in init.
var topBuckets = append([][]byte{}, bucketstore.TopBuckets...)

type errNewerSchema struct{ version int }

// newerSchemaError is UNAVAILABLE for a file of a newer layout.
func newerSchemaError(version int) *core.Error {
	return core.NewError(errcode.Unavailable,
		fmt.Sprintf("The store was written by a newer specd (layout %d; this build reads up to %d).", version, SchemaVersion),
		map[string]any{"schema_version": version, "supported": SchemaVersion}).
		WithRemediation("Upgrade specd, or point --db at another store file.")
}

func (e errNewerSchema) Error() string { return fmt.Sprintf("schema version %d is newer", e.version) }

// Info reads the store's identity. It opens the file (creating it on first
// use) and may answer LOCK_TIMEOUT.
func (s *Store) Info(ctx context.Context) (bucketstore.Info, error) {
	var info bucketstore.Info
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		info.InstallID = string(b.Get(keyInstallID))
		info.SchemaVersion, _ = strconv.Atoi(string(b.Get(keySchemaVersion)))
		info.SizeBytes = tx.Size()
		return nil
	})
	info.Path = s.opts.Path
	if st, statErr := os.Stat(s.opts.Path); statErr == nil {
		info.SizeBytes = st.Size()
	}
	return info, err
}

// InstallID is this store's stable UUID, created on first use.
func (s *Store) InstallID(ctx context.Context) (string, error) {
	s.mu.Lock()
	id := s.installID
	s.mu.Unlock()
	if id != "" {
		return id, nil
	}
	info, err := s.Info(ctx)
	return info.InstallID, err
}

// CheckWritable proves the file can be locked and written: it begins a
// read-write transaction and rolls it back, so nothing changes. Errors:
// LOCK_TIMEOUT, STORE_CORRUPT, STORE_READ_ONLY (opened read-only), STORE_FULL
// (the last commit was refused for lack of space and none succeeded since),
// UNAVAILABLE, INTERNAL_ERROR.
func (s *Store) CheckWritable(ctx context.Context) error {
	db, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer s.release()
	s.mu.Lock()
	readOnly, fullAt := s.readOnly, s.fullAt
	s.mu.Unlock()
	if readOnly {
		return s.ReadOnlyError(nil)
	}
	if !fullAt.IsZero() {
		return s.FullError(nil).WithDetail("since", fullAt.UTC().Format(time.RFC3339))
	}
	tx, err := db.Begin(true)
	if err != nil {
		return s.storageError("begin", err)
	}
	return tx.Rollback()
}

// Check runs bbolt's consistency check over the whole file and returns every
// problem found, joined, in a transaction no commit passes (see stillTx).
// Tests call it when their store closes.
func (s *Store) Check(ctx context.Context) error {
	return s.still(ctx, func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}
