package etcdstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/specd/specd/core/etcdstore"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/research"
	"github.com/specd/specd/research/researchstore"
)

// afterFirstRun is an engine whose first update, once its fn has run (and
// before that run commits), lets between run: another server's write that
// makes the commit lose its race, so etcd runs fn again from a fresh read.
type afterFirstRun struct {
	bucketstore.Engine
	once    sync.Once
	between func()
}

func (e *afterFirstRun) Update(ctx context.Context, fn func(bucketstore.Tx) error) error {
	return e.Engine.Update(ctx, func(tx bucketstore.Tx) error {
		err := fn(tx)
		e.once.Do(e.between)
		return err
	})
}

// TestArchivePutRerunReadsAfresh: a put that is not told a content id,
// item type or reason keeps what the latest earlier put said. When another
// server's put (content id "second") wins the race against it, etcd runs
// the put's transaction again: that run must complete the put from the
// metadata it reads then, not from what the lost run read ("first").
func TestArchivePutRerunReadsAfresh(t *testing.T) {
	t.Parallel()
	ep := startEtcd(t, 4096)
	a := openStore(t, ep, nil)
	b := openStore(t, ep, func(o *etcdstore.Options) { o.Prefix = a.Prefix() })
	ctx := context.Background()
	content := []byte("the same source text, archived by two servers")
	if _, _, err := researchOf(a).ArchivePut(ctx, content, research.ArchiveMeta{ContentID: "first", ItemType: "source", Reason: "first put"}); err != nil {
		t.Fatal(err)
	}
	hooked := &afterFirstRun{Engine: a, between: func() {
		if _, _, err := researchOf(b).ArchivePut(ctx, content, research.ArchiveMeta{ContentID: "second", ItemType: "note", Reason: "second put"}); err != nil {
			t.Error(err)
		}
	}}
	got, _, err := researchstore.New(hooked, clock).ArchivePut(ctx, content, research.ArchiveMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ContentID != "second" || got.ItemType != "note" || got.Reason != "second put" {
		t.Errorf("the put answered %+v; want the second put's content id, item type and reason", got)
	}
	_, stored, err := researchOf(a).ArchiveGet(ctx, got.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	if stored.ContentID != "second" || stored.ItemType != "note" || stored.Reason != "second put" {
		t.Errorf("stored %+v; want the second put's content id, item type and reason", stored)
	}
}
