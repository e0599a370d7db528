package bucketstore

import (
	"encoding/binary"
	"encoding/json"
)

// SchemaVersion is the layout version this build writes, on every engine.
// 3: a node's children are kept in chunks beside it in its nodes bucket
// (specs/specstore), converted lazily: a node written by layout 2 reads as
// it is and is converted by its next write. A build of layout 2 refuses a
// store of layout 3 (it would read the chunked nodes as damaged).
const SchemaVersion = 3

// The meta bucket: each store's own identity (never exported by Export).
var (
	MetaBucket       = []byte("meta")
	KeySchemaVersion = []byte("schema_version")
	KeyInstallID     = []byte("install_id")
	KeyCreatedAt     = []byte("created_at")
)

// The layout's top-level buckets besides meta. Their contents are the
// domain stores' (specs/specstore: specs, lifecycle, spec_list, intake, error_log;
// research/researchstore: archive_*, digests); an engine creates them all
// so a read never finds one missing.
var (
	BucketSpecs       = []byte("specs")
	BucketLifecycle   = []byte("lifecycle")
	BucketIntake      = []byte("intake")
	BucketErrorLog    = []byte("error_log")
	BucketArchiveData = []byte("archive_data")
	BucketArchiveMeta = []byte("archive_meta")
	BucketArchiveIDs  = []byte("archive_ids")
	BucketDigests     = []byte("digests")
	BucketSpecList    = []byte("spec_list")
)

// TopBuckets lists the layout's top-level buckets besides meta (each
// engine's own): an engine whose buckets must be created makes them all.
var TopBuckets = [][]byte{
	BucketArchiveData, BucketArchiveMeta, BucketArchiveIDs, BucketDigests,
	BucketSpecs, BucketLifecycle, BucketIntake, BucketErrorLog, BucketSpecList,
}

// SpecHeaderKey is the key of a spec's header in its bucket
// (specs/<spec_id>/header): every stored mutation of a spec writes it, so
// one change of it is one committed mutation (what an engine's change feed
// watches).
const SpecHeaderKey = "header"

// Buckets of one spec's bucket (specs/<spec_id>/…): its nodes, its journal
// (keys: 8-byte big-endian sequence numbers), the journal's by-task
// index (keys: <task_id>\x00<seq>) and its history. The nodes bucket also
// holds the chunks of its nodes' children lists (keys:
// <node_id>\x00<chunk as 4-byte big endian>; see specs/specstore).
var (
	BucketNodes       = []byte("nodes")
	BucketJournal     = []byte("journal")
	BucketJournalTask = []byte("journal_task")
	BucketHistory     = []byte("history")
)

// Info describes a store for health checks.
type Info struct {
	Path          string `json:"path"`
	SizeBytes     int64  `json:"size_bytes"`
	SchemaVersion int    `json:"schema_version"`
	InstallID     string `json:"install_id"`
}

// Finding is one problem a store check reports (`specd check`).
type Finding struct {
	SpecID  string `json:"spec_id,omitempty"` // empty: the store itself
	Problem string `json:"problem"`
}

func (f Finding) String() string {
	if f.SpecID == "" {
		return "store: " + f.Problem
	}
	return f.SpecID + ": " + f.Problem
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

// TaskIndexKey is the key of journal entry seq in a spec's journal_task
// index: <task_id>\x00<seq as 8-byte big endian>.
func TaskIndexKey(taskID string, seq uint64) []byte {
	k := make([]byte, 0, len(taskID)+9)
	k = append(k, taskID...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// IndexJournalsByTask builds every spec's journal_task index from its
// journal (the layout upgrade from version 1 to 2).
func IndexJournalsByTask(tx Tx) error {
	all := tx.Bucket(BucketSpecs)
	if all == nil {
		return nil
	}
	return all.ForEachBucket(func(id []byte) error {
		spec := all.Bucket(id)
		index, err := spec.CreateBucketIfNotExists(BucketJournalTask)
		if err != nil {
			return err
		}
		j := spec.Bucket(BucketJournal)
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
			return index.Put(TaskIndexKey(e.TaskID, binary.BigEndian.Uint64(k)), nil)
		})
	})
}
