// Package specstore is the spec domain's persistence over the store port
// (core/store/bucketstore): the spec, journal, history, lifecycle-index,
// intake and error-log layout, and every operation of specs.Repo on it.
// The engines (core/store on bbolt, core/etcdstore on etcd) supply only
// transactions over ordered buckets of bytes; this package owns the
// encoding, so a rule fixed here holds on every engine.
//
// Each of a Repo's operations runs inside one Engine transaction: a
// mutation either commits entirely or, on any error (a VERSION_CONFLICT of
// its expected_version guard included), changes nothing.
package specstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/autonomy"
)

// Repo is specs.Repo (and the intake inbox, the error log and the journal
// ranges research pins) over an Engine. It is safe for concurrent use when
// the Engine is.
type Repo struct {
	eng   bucketstore.Engine
	now   func() time.Time
	nodes nodeCache // decoded spec nodes, validated by their stored bytes
	// headers: decoded spec headers for writes, validated the same way
	headers headerCache
	// intakeCap is the intake inbox's capacity (SetIntakeCapacity; 0:
	// specs.MaxIntakeItems).
	intakeCap atomic.Int64
	// indexed: the store's spec list index was seen complete (speclist.go).
	indexed atomic.Bool
}

var _ specs.Repo = (*Repo)(nil)

// New returns the spec repository over eng; now is the clock of intake
// timestamps (nil: time.Now).
func New(eng bucketstore.Engine, now func() time.Time) *Repo {
	if now == nil {
		now = time.Now
	}
	return &Repo{eng: eng, now: now}
}

// SetIntakeCapacity sets how many items the intake inbox holds before it
// forgets dismissed ones or refuses new ones (n ≤ 0: specs.MaxIntakeItems).
func (s *Repo) SetIntakeCapacity(n int) { s.intakeCap.Store(int64(n)) }

func (s *Repo) intakeCapacity() int {
	if n := s.intakeCap.Load(); n > 0 {
		return int(n)
	}
	return specs.MaxIntakeItems
}

func (s *Repo) view(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.eng.View(ctx, fn)
}

func (s *Repo) update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return s.eng.Update(ctx, fn)
}

// CheckSpecs verifies every spec in tx: its header and nodes decode and
// satisfy the spec invariants (specs.CheckInvariants), its autonomy
// audit ledger's hash chain holds (autonomy.VerifyChain), and the spec list
// index, when the store has one, matches the headers (checkIndex). It returns every
// problem found (none: the specs are sound); it errors only on a read the
// engine could not serve.
func (s *Repo) CheckSpecs(tx bucketstore.Tx) ([]bucketstore.Finding, error) {
	all := tx.Bucket(bucketSpecs)
	if all == nil {
		return []bucketstore.Finding{{Problem: "no specs bucket"}}, nil
	}
	var out []bucketstore.Finding
	headers := map[string]specs.Header{}
	err := all.ForEachBucket(func(k []byte) error {
		id := string(k)
		b, h, err := loadSpec(tx, id)
		if err != nil {
			out = append(out, bucketstore.Finding{SpecID: id, Problem: err.Error()})
			return nil
		}
		headers[id] = h
		src := s.newSource(id, b)
		for _, v := range specs.CheckInvariants(specs.NewSpecView(h, src)) {
			out = append(out, bucketstore.Finding{SpecID: id, Problem: v.String()})
		}
		if src.err != nil {
			out = append(out, bucketstore.Finding{SpecID: id, Problem: fmt.Sprintf("a node does not decode: %v", src.err)})
		}
		rep, err := autonomy.VerifyChain(newJournalReader(b).Records(autonomy.Space))
		switch {
		case err != nil:
			out = append(out, bucketstore.Finding{SpecID: id, Problem: fmt.Sprintf("the autonomy audit ledger does not read: %v", err)})
		case !rep.Valid:
			out = append(out, bucketstore.Finding{SpecID: id, Problem: fmt.Sprintf("the autonomy audit ledger breaks at event %d (%s): %s", rep.DivergencePoint, rep.DivergenceType, rep.Detail)})
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	return append(out, checkIndex(tx, headers)...), nil
}

// SpecVersions reads the current version of each of ids in one read
// transaction; a spec that does not exist (or an id that is not a spec id)
// is absent from the map. A store that does not exist yet
// (bucketstore.Lazy) answers an empty map without being created. Errors:
// the engine's, INTERNAL_ERROR (an unreadable header).
func (s *Repo) SpecVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if l, ok := s.eng.(bucketstore.Lazy); ok && !l.Exists() {
		return out, nil
	}
	err := s.view(ctx, func(tx bucketstore.Tx) error {
		for _, id := range ids {
			_, h, err := loadSpec(tx, id)
			if err != nil {
				if core.AsError(err).Code == errcode.SpecNotFound {
					continue
				}
				return err
			}
			out[id] = h.Version
		}
		return nil
	})
	return out, err
}
