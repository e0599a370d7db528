package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/specd/specd/core"
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

func codeOf(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

func addPhase(t testing.TB, st *store.Store, id, title string, m core.Mutation) (specs.RepoWriteResult, error) {
	t.Helper()
	return st.MutateSpec(context.Background(), id, specs.RepoWriteOptions{DryRun: m.DryRun, ExpectedVersion: m.ExpectedVersion, Action: "authoring.phase-add"}, func(sp *specs.Spec, _ specs.JournalWriter) error {
		sp.Clock = clock
		_, err := specs.AddPhase(sp, specs.PhaseInput{Title: title})
		return err
	})
}
