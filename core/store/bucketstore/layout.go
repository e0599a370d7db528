package bucketstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// SchemaVersion is the layout version this build writes, on every engine.
const SchemaVersion = 2

// The meta bucket: each store's own identity (never exported by Export).
var (
	MetaBucket       = []byte("meta")
	KeySchemaVersion = []byte("schema_version")
	KeyInstallID     = []byte("install_id")
	KeyCreatedAt     = []byte("created_at")
)

// SpecHeaderKey is the key of a spec's header in its bucket
// (specs/<spec_id>/header): every stored mutation of a spec writes it, so
// one change of it is one committed mutation.
const SpecHeaderKey = "header"

// Info describes a store for health checks.
type Info struct {
	Path          string `json:"path"`
	SizeBytes     int64  `json:"size_bytes"`
	SchemaVersion int    `json:"schema_version"`
	InstallID     string `json:"install_id"`
	CreatedAt     string `json:"created_at,omitempty"`
}

// Entry is one record of a store for copying it to another engine (specd
// migrate): a bucket (Key nil; Seq is its sequence, so journal numbering
// carries over) or a key of the bucket at Bucket, the path of bucket names
// from the top (["specs", "<spec_id>", "nodes"]). The meta bucket belongs
// to each store and is not exported.
type Entry struct {
	Bucket []string
	Key    []byte
	Value  []byte
	Seq    uint64
}

// IndexJournalsByTask builds every spec's journal_task index from its
// journal (the layout upgrade from version 1 to 2).
func IndexJournalsByTask(tx Tx) error {
	all := tx.Bucket(bucketSpecs)
	if all == nil {
		return nil
	}
	return all.ForEachBucket(func(id []byte) error {
		spec := all.Bucket(id)
		index, err := spec.CreateBucketIfNotExists(bucketJournalTask)
		if err != nil {
			return err
		}
		j := spec.Bucket(bucketJournal)
		if j == nil {
			return nil
		}
		return j.ForEach(func(k, v []byte) error {
			var e struct {
				TaskID string `json:"task_id"`
			}
			if json.Unmarshal(v, &e) != nil || e.TaskID == "" {
				return nil
			}
			return index.Put(taskIndexKey(e.TaskID, binary.BigEndian.Uint64(k)), nil)
		})
	})
}

// SpecProblem is one finding of CheckSpecs.
type SpecProblem struct {
	SpecID  string
	Problem string
}

// CheckSpecs verifies every spec in tx: its header and nodes decode and
// satisfy the spec invariants (specs.CheckInvariants). It returns every
// problem found (none: the specs are sound); fn errors only on a read the
// engine could not serve.
func (s *Repo) CheckSpecs(tx Tx) ([]SpecProblem, error) {
	all := tx.Bucket(bucketSpecs)
	if all == nil {
		return []SpecProblem{{Problem: "no specs bucket"}}, nil
	}
	var out []SpecProblem
	err := all.ForEachBucket(func(k []byte) error {
		id := string(k)
		b, h, err := loadSpec(tx, id)
		if err != nil {
			out = append(out, SpecProblem{SpecID: id, Problem: err.Error()})
			return nil
		}
		src := s.newSource(id, b.Bucket(bucketNodes))
		for _, v := range specs.CheckInvariants(specs.NewSpecView(h, src)) {
			out = append(out, SpecProblem{SpecID: id, Problem: v.String()})
		}
		if src.err != nil {
			out = append(out, SpecProblem{SpecID: id, Problem: fmt.Sprintf("a node does not decode: %v", src.err)})
		}
		return nil
	})
	return out, err
}

// SpecVersions reads the current version of each of ids in one read
// transaction; a spec that does not exist (or an id that is not a spec id)
// is absent from the map. Errors: the engine's, INTERNAL_ERROR (an
// unreadable header).
func (s *Repo) SpecVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := s.view(ctx, func(tx Tx) error {
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

// ForgetSpec drops the decoded nodes of specID from the cache (an engine
// that learns of another server's change to it, e.g. by a watch).
func (s *Repo) ForgetSpec(specID string) { s.nodes.dropSpec(specID) }

// AsStoreError passes coded errors through and hides the engine's behind
// INTERNAL_ERROR.
func AsStoreError(err error) error { return asStoreError(err) }
