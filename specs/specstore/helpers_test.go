package specstore_test

import (
	"testing"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs/specstore"
)

// repoOver is the spec repository over a bbolt store in t.TempDir(), and
// the store.
func repoOver(t testing.TB, opts ...func(*store.Options)) (*specstore.Repo, *store.Store) {
	t.Helper()
	st := storetest.Open(t, opts...)
	return specstore.New(st, nil), st
}
