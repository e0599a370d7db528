package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/research"
)

func TestArchiveRoundTripAndSweep(t *testing.T) {
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	st := storetest.Open(t, func(o *store.Options) { o.Now = func() time.Time { return now } })
	ctx := context.Background()
	m, created, err := st.ArchivePut(ctx, []byte("the canonical text"), research.ArchiveMeta{ContentID: "src-1", ItemType: "source"})
	if err != nil || !created || m.Hash != research.ArchiveKey([]byte("the canonical text")) {
		t.Fatalf("put: %+v %v %v", m, created, err)
	}
	if _, again, _ := st.ArchivePut(ctx, []byte("the canonical text"), research.ArchiveMeta{}); again {
		t.Fatal("the same bytes were stored twice")
	}
	for _, q := range []struct{ hash, id string }{{m.Hash, ""}, {"", "src-1"}} {
		got, meta, err := st.ArchiveGet(ctx, q.hash, q.id)
		if err != nil || string(got) != "the canonical text" || meta.ItemType != "source" {
			t.Fatalf("get %+v: %q %+v %v", q, got, meta, err)
		}
	}
	if _, _, err := st.ArchiveGet(ctx, "sha256:"+fmt.Sprintf("%064d", 0), ""); codeOf(err) != errcode.ArchiveNotFound {
		t.Fatalf("unknown hash: %v", err)
	}
	// Nothing expires before the cutoff; everything archived earlier does.
	if n, err := st.ArchiveSweep(ctx, now.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("early sweep removed %d (%v)", n, err)
	}
	if n, err := st.ArchiveSweep(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("sweep removed %d (%v)", n, err)
	}
	if _, _, err := st.ArchiveGet(ctx, "", "src-1"); codeOf(err) != errcode.ArchiveNotFound {
		t.Fatalf("swept content id still resolves: %v", err)
	}
}

func TestDigestStorePagesBySource(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	for _, src := range []string{"a", "b"} {
		for i := 0; i < 3; i++ {
			if _, err := st.DigestPut(ctx, research.DigestRecord{SourceID: src, QueryHash: fmt.Sprintf("%08x", i), Payload: []byte(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	replaced, _ := st.DigestPut(ctx, research.DigestRecord{SourceID: "a", QueryHash: "00000000", Payload: []byte(`{"v":2}`)})
	if !replaced {
		t.Fatal("second put of the same key must report a replacement")
	}
	var got []string
	after := ""
	for {
		rows, next, err := st.DigestList(ctx, "a", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got = append(got, r.SourceID+"/"+r.QueryHash)
		}
		if next == "" {
			break
		}
		after = next
	}
	if len(got) != 3 || got[0] != "a/00000000" {
		t.Fatalf("listing a: %v", got)
	}
	all, _, _ := st.DigestList(ctx, "", "", 100)
	if len(all) != 6 {
		t.Fatalf("all: %d", len(all))
	}
	if err := st.DigestDelete(ctx, "a", "00000001"); err != nil {
		t.Fatal(err)
	}
	_, err := st.DigestGet(ctx, "a", "00000001")
	if codeOf(err) != errcode.DigestNotFound {
		t.Fatalf("deleted digest: %v", err)
	}
}
