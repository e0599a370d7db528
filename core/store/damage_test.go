package store_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/bucketstore"
)

// fillStore writes enough into a fresh store at path that the file is a
// few hundred KB (12 buckets of the specs bucket, each written by 8
// commits of a 2 KB and a 1 KB value), closes it and returns the bucket
// names.
func fillStore(t *testing.T, path string) []string {
	t.Helper()
	st, err := store.Open(store.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 12; i++ {
		id := fmt.Sprintf("spec-%d", i)
		ids = append(ids, id)
		for p := 0; p < 8; p++ {
			err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
				b, err := tx.Bucket(bucketstore.BucketSpecs).CreateBucketIfNotExists([]byte(id))
				if err != nil {
					return err
				}
				if err := b.Put([]byte(fmt.Sprintf("phase-%d", p)), []byte(strings.Repeat("x", 2000))); err != nil {
					return err
				}
				return b.Put([]byte(fmt.Sprintf("note-%d", p)), []byte(strings.Repeat("y", 1000)))
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// readBucket reads every value of the specs bucket's bucket id in one read
// transaction and reports how many phase keys it holds.
func readBucket(ctx context.Context, st *store.Store, id string) (phases int, err error) {
	err = st.View(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(id))
		if b == nil {
			return fmt.Errorf("no bucket %s", id)
		}
		return b.ForEach(func(k, v []byte) error {
			if strings.HasPrefix(string(k), "phase-") && len(v) == 2000 {
				phases++
			}
			return nil
		})
	})
	return phases, err
}

func openStore(t *testing.T, path string, lockTimeout time.Duration, mods ...func(*store.Options)) *store.Store {
	t.Helper()
	o := store.Options{Path: path, LockTimeout: lockTimeout, Workspace: filepath.Dir(filepath.Dir(path))}
	for _, m := range mods {
		m(&o)
	}
	st, err := store.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// TestCorruptStoreIsNamedAndReleased: a store truncated to
// half its size or to 8 KB answers STORE_CORRUPT naming the file relative to
// the workspace, on every call (never LOCK_TIMEOUT: the lock taken by the
// failed open is released), to a second Store on the same file too, and the
// same Store works again once the bytes are restored.
func TestCorruptStoreIsNamedAndReleased(t *testing.T) {
	// One filled store, copied into each case's workspace: the same bytes
	// as filling each one (a hundred committed writes, fsynced, per fill).
	filled := filepath.Join(t.TempDir(), "specd.db")
	filledIDs := fillStore(t, filled)
	full, err := os.ReadFile(filled)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size func(full int64) int64
		open bool // the server has the file open (mapped) when it is cut
	}{
		{"half", func(full int64) int64 { return full / 2 }, false},
		{"8KB", func(int64) int64 { return 8 << 10 }, false},
		{"half while open", func(full int64) int64 { return full / 2 }, true},
		{"8KB while open", func(int64) int64 { return 8 << 10 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a workspace each; the maps check counts this case's file only
			ws := t.TempDir()
			path := filepath.Join(ws, ".specd", "specd.db")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, full, 0o644); err != nil {
				t.Fatal(err)
			}
			ids := filledIDs
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			server := openStore(t, path, 300*time.Millisecond, func(o *store.Options) { o.Linger = time.Hour })
			ctx := context.Background()
			if tc.open {
				for _, id := range ids {
					if _, err := readBucket(ctx, server, id); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.Truncate(path, tc.size(int64(len(good)))); err != nil {
				t.Fatal(err)
			}
			for call := 1; call <= 2; call++ {
				_, err := readBucket(ctx, server, ids[len(ids)-1])
				expectCorrupt(t, err, ws)
			}
			other := openStore(t, path, 300*time.Millisecond)
			_, err = other.Info(ctx)
			expectCorrupt(t, err, ws)
			// A failed bbolt open leaves its mapping behind: the damaged
			// file is not opened again on every call.
			for i := 0; i < 20; i++ {
				_, err = server.Info(ctx)
				expectCorrupt(t, err, ws)
			}
			if maps, err := os.ReadFile("/proc/self/maps"); err == nil {
				if n := strings.Count(string(maps), path); n > 2 {
					t.Fatalf("%d mappings of the damaged file after 22 calls from two stores", n)
				}
			}

			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				phases, err := readBucket(ctx, server, id)
				if err != nil {
					t.Fatalf("after restoring the bytes: %v", err)
				}
				if phases != 8 {
					t.Fatalf("%s restored with %d phases", id, phases)
				}
			}
			if err := server.Check(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func expectCorrupt(t *testing.T, err error, ws string) {
	t.Helper()
	ce := core.AsError(err)
	if ce == nil || ce.Code != errcode.StoreCorrupt {
		t.Fatalf("want STORE_CORRUPT, got %v", err)
	}
	p := ce.Payload("r")
	if p["error_type"] != errcode.TypeUnavailable || ce.Details["store"] != ".specd/specd.db" {
		t.Fatalf("STORE_CORRUPT payload %v", p)
	}
	text := fmt.Sprint(ce.Message, p)
	if strings.Contains(text, ws) || !strings.Contains(text, "specd backup") {
		t.Fatalf("answer shows a server path or no way out: %s", text)
	}
}

// TestEmptyStoreFileIsRefused: an existing 0-byte store
// file is STORE_CORRUPT, not silently a new empty store; a file this
// process creates is initialised.
func TestEmptyStoreFileIsRefused(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".specd", "specd.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, path, 300*time.Millisecond)
	_, err := st.Info(context.Background())
	expectCorrupt(t, err, ws)
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the empty file was changed: %v %v", fi, err)
	}
	// A missing file is created and initialised.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Info(context.Background()); err != nil {
		t.Fatalf("new store: %v", err)
	}
}

// TestConcurrentCreationIsNotEmpty (item 8's race): stores racing to create
// the same new file all succeed with one install id; none of them mistakes
// the file another one is initialising for an empty store, because the
// 0-byte check runs under the file's lock.
func TestConcurrentCreationIsNotEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".specd", "specd.db")
	const n = 8
	ids := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		st := openStore(t, path, 5*time.Second)
		go func() {
			id, err := st.InstallID(context.Background())
			ids <- id
			errs <- err
		}()
	}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		seen[<-ids] = true
	}
	if len(seen) != 1 {
		t.Fatalf("install ids %v: more than one store was created", seen)
	}
}

// truncationSizes are the sizes a store is cut to by the truncation tests:
// every 512 bytes up to 16 KB, and both sides of the page boundaries.
func truncationSizes() []int {
	sizes := []int{4095, 4096, 4097, 8191, 8192, 8193}
	for n := 0; n <= 16384; n += 512 {
		sizes = append(sizes, n)
	}
	return sizes
}

// TestEveryTruncationIsStoreCorrupt: a store cut to any
// size short of its pages is STORE_CORRUPT saying what is wrong and how to
// recover, both when opened for a call and when verified (specd check),
// never INTERNAL_ERROR or an empty message.
func TestEveryTruncationIsStoreCorrupt(t *testing.T) {
	filled := filepath.Join(t.TempDir(), "specd.db")
	fillStore(t, filled)
	full, err := os.ReadFile(filled)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range truncationSizes() {
		ws := t.TempDir()
		path := filepath.Join(ws, ".specd", "specd.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		st := openStore(t, path, 300*time.Millisecond)
		_, err := st.Info(context.Background())
		if ce := core.AsError(err); ce == nil || ce.Code != errcode.StoreCorrupt || !strings.Contains(ce.Message, "damaged (") {
			t.Errorf("%d bytes, open: want STORE_CORRUPT saying what is wrong, got %v", n, err)
			continue
		}
		expectCorrupt(t, err, ws)
		findings, err := st.Verify(context.Background(), nil)
		if ce := core.AsError(err); len(findings) == 0 && (ce == nil || ce.Code != errcode.StoreCorrupt || ce.Message == "") {
			t.Errorf("%d bytes, verify: want STORE_CORRUPT or findings, got %v %v", n, findings, err)
		}
	}
}

// TestEveryDamagedPageIsStoreCorrupt: a store with one
// page overwritten by garbage (a sample of pages, the roots among them) either still opens (the page was free or
// only data) or is STORE_CORRUPT with a message; opening and verifying it
// (specd check) never panic and never answer INTERNAL_ERROR.
func TestEveryDamagedPageIsStoreCorrupt(t *testing.T) {
	filled := filepath.Join(t.TempDir(), "specd.db")
	fillStore(t, filled)
	full, err := os.ReadFile(filled)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	pages := len(full) / page
	// The root bucket's page, as each of the two meta pages names it (the
	// page header is 16 bytes; the meta's root pgid follows magic, version,
	// page size and flags).
	roots := map[int]bool{}
	for m := 0; m < 2; m++ {
		roots[int(binary.LittleEndian.Uint64(full[m*page+32:]))] = true
	}
	for p := 2; p < pages; p++ {
		if p >= 8 && p%8 != 0 && !roots[p] {
			continue // the first pages, every eighth and the roots
		}
		ws := t.TempDir()
		path := filepath.Join(ws, ".specd", "specd.db")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		bad := append([]byte(nil), full...)
		copy(bad[p*page:], strings.Repeat("GARBAGE!", 4))
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		st := openStore(t, path, 300*time.Millisecond)
		if _, err := st.Info(context.Background()); err != nil {
			expectCorrupt(t, err, ws)
		}
		_, err := st.Verify(context.Background(), nil)
		if ce := core.AsError(err); err != nil && (ce == nil || ce.Code != errcode.StoreCorrupt || ce.Message == "") {
			t.Errorf("page %d, verify: want STORE_CORRUPT or findings, got %v", p, err)
		}
	}
}
