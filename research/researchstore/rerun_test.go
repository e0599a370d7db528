package researchstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
)

// rerunning is an engine that runs every View fn twice, as etcd does after
// a retryable read error: what the first run left in the caller's
// variables must not reach the answer.
type rerunning struct{ bucketstore.Engine }

func (r rerunning) View(ctx context.Context, fn func(bucketstore.Tx) error) error {
	if err := r.Engine.View(ctx, fn); err != nil {
		return err
	}
	return r.Engine.View(ctx, fn)
}

// TestReadsSurviveARerun: DigestList and ArchiveGet answer the same when the
// engine runs their fn again.
func TestReadsSurviveARerun(t *testing.T) {
	ctx := context.Background()
	eng := storetest.Open(t)
	plain := New(eng, nil)
	for i := range 3 {
		rec := research.DigestRecord{SourceID: "src", QueryHash: fmt.Sprintf("q%d", i), Payload: []byte(`{}`)}
		if _, err := plain.DigestPut(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	meta, _, err := plain.ArchivePut(ctx, []byte("the source text"), research.ArchiveMeta{ContentID: "c-1"})
	if err != nil {
		t.Fatal(err)
	}
	again := New(rerunning{eng}, nil)
	for _, limit := range []int{2, 10} {
		want, wantNext, err1 := plain.DigestList(ctx, "", "", limit)
		got, gotNext, err2 := again.DigestList(ctx, "", "", limit)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || gotNext != wantNext {
			t.Errorf("limit %d: a re-run answered %d rows, next %q; one run %d rows, next %q", limit, len(got), gotNext, len(want), wantNext)
		}
	}
	_, m, err := again.ArchiveGet(ctx, meta.Hash, "")
	if err != nil || m.Hash != meta.Hash || m.ContentID != "c-1" {
		t.Errorf("ArchiveGet after a re-run: %+v, %v", m, err)
	}
}

// TestDigestGetAnswersTheStoredRecord: a digest replaced (without a source
// hash) while the first run read answers as stored, without the source
// hash of the record the first run read.
func TestDigestGetAnswersTheStoredRecord(t *testing.T) {
	ctx := context.Background()
	eng := storetest.Open(t)
	plain := New(eng, nil)
	rec := research.DigestRecord{SourceID: "src", QueryHash: "q", Payload: []byte(`{}`), SourceHash: "h1"}
	if _, err := plain.DigestPut(ctx, rec); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	rr := &storetest.Rerun{Store: eng, Between: func() {
		once.Do(func() {
			rec.SourceHash = ""
			if _, err := plain.DigestPut(ctx, rec); err != nil {
				t.Error(err)
			}
		})
	}}
	got, err := New(rr, nil).DigestGet(ctx, "src", "q")
	if err != nil || got.SourceHash != "" {
		t.Errorf("got %+v, %v; want the replacement, without a source hash", got, err)
	}
}
