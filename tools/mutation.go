package tools

import (
	"context"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// Mutation is the part every stored spec mutation's answer shares: the
// spec, the version written (or that would be, under dry_run) and, under
// dry_run, the changes that were not stored.
type Mutation struct {
	SpecID  string             `json:"spec_id"`
	Version int64              `json:"version"`
	DryRun  bool               `json:"dry_run,omitempty"`
	Changes []specs.RepoChange `json:"changes,omitzero"` // non-nil exactly under dry_run
}

func (m *Mutation) mutated(x Mutation) { *m = x }

// mutated is implemented by answers that embed Mutation.
type mutated interface{ mutated(Mutation) }

// mutationOf is the Mutation of a stored write.
func mutationOf(specID string, res specs.RepoWriteResult) Mutation {
	m := Mutation{SpecID: specID, Version: res.Version}
	if res.DryRun {
		m.DryRun, m.Changes = true, res.Changes
		if m.Changes == nil {
			m.Changes = []specs.RepoChange{}
		}
	}
	return m
}

// specArgs names the spec a call works on: the typed argument every spec
// action embeds.
type specArgs struct {
	SpecID string `arg:"spec_id,required"`
}

// writeArgs are a spec mutation's typed arguments: its spec, dry_run and
// expected_version (mutationArgs).
type writeArgs struct {
	specArgs
	DryRun          bool `arg:"dry_run"`
	ExpectedVersion *int `arg:"expected_version"`
}

// mutateAnswer runs fn as the call's one store transaction over its spec
// (MutateSpec: expected_version, dry_run, the journal in the same
// transaction) and returns fn's typed result with its Mutation filled in.
// Refusals get their next call (withSpecNextCall).
func mutateAnswer[T any, P interface {
	*T
	mutated
}](ctx context.Context, d *Deps, r *mcptool.Request, w writeArgs, fn func(sp *specs.Spec, j specs.JournalWriter) (T, error)) (T, error) {
	var out T
	o := d.writeOptionsOf(r, w, r.Call.Action)
	o.Guard = func(j specs.JournalWriter) error { return d.checkWriteLock(r, j) }
	res, err := d.Specs.MutateSpec(ctx, w.SpecID, o, func(sp *specs.Spec, j specs.JournalWriter) error {
		sp.Clock = d.clock()
		var err error
		out, err = fn(sp, j)
		return err
	})
	if err != nil {
		return out, withSpecNextCall(err, w.SpecID)
	}
	P(&out).mutated(mutationOf(w.SpecID, res))
	return out, nil
}

// readAnswer runs fn over spec specID in one read transaction and returns
// its typed result. The call's deadline holds for the work a read
// computes: past it, before fn (loading a large spec) or after it, the
// answer is ctx's error, which the dispatcher answers as UNAVAILABLE.
func readAnswer[T any](ctx context.Context, d *Deps, specID string, fn func(sp *specs.Spec, j specs.JournalReader) (T, error)) (T, error) {
	var out T
	err := d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, j specs.JournalReader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if out, err = fn(sp, j); err != nil {
			return err
		}
		return ctx.Err()
	})
	if err != nil {
		return out, withSpecNextCall(err, specID)
	}
	return out, nil
}

// mutateTo is mutateAnswer wrapped as the handler's Result.
func mutateTo[T any, P interface {
	*T
	mutated
}](ctx context.Context, d *Deps, r *mcptool.Request, w writeArgs, fn func(sp *specs.Spec, j specs.JournalWriter) (T, error)) mcptool.Result {
	return answer(mutateAnswer[T, P](ctx, d, r, w, fn))
}

// readTo is readAnswer wrapped as the handler's Result.
func readTo[T any](ctx context.Context, d *Deps, specID string, fn func(sp *specs.Spec, j specs.JournalReader) (T, error)) mcptool.Result {
	return answer(readAnswer(ctx, d, specID, fn))
}
