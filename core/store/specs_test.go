package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs"
)

var clock = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func createSpec(t testing.TB, st *store.Store, name string) string {
	t.Helper()
	h, err := st.CreateSpec(context.Background(), specs.RepoWriteOptions{Action: "authoring.spec-create"},
		func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
			sp, err := specs.NewSpec(specs.NewSpecInput{Name: name, Mission: "m"}, clock, exists)
			return sp, nil, err
		})
	if err != nil {
		t.Fatal(err)
	}
	return h.SpecID
}
