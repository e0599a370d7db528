package specstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/autonomy"
)

// testRecordsLiveInTheSpecTransaction: a spec's record space is written in
// the mutation's own transaction (a failed mutation keeps none of its
// records, a records-only mutation makes no spec version), reads back in
// key order by prefix and after, and refuses writes through a read.
func testRecordsLiveInTheSpecTransaction(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "records")
	v0 := version(t, st, id)
	_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
		r := j.Records("test")
		for _, k := range []string{"a/2", "a/1", "b/1", "a/3"} {
			if err := r.Put(k, []byte("v"+k)); err != nil {
				return err
			}
		}
		return r.Delete("a/3")
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := version(t, st, id); v != v0 {
		t.Fatalf("a records-only mutation made version %d (was %d)", v, v0)
	}
	boom := errors.New("boom")
	_, err = st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
		if err := j.Records("test").Put("a/9", []byte("x")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed mutation: %v", err)
	}
	err = st.ReadSpec(ctx, id, func(sp *specs.Spec, j specs.JournalReader) error {
		r := j.Records("test")
		var got []string
		_ = r.Scan("a/", "", func(k string, v []byte) bool { got = append(got, k+"="+string(v)); return true })
		if strings.Join(got, ",") != "a/1=va/1,a/2=va/2" {
			t.Errorf("scan a/: %v (a failed mutation's record, or a deleted one, is there)", got)
		}
		got = nil
		_ = r.Scan("a/", "a/1", func(k string, _ []byte) bool { got = append(got, k); return true })
		if strings.Join(got, ",") != "a/2" {
			t.Errorf("scan a/ after a/1: %v", got)
		}
		if string(r.Get("b/1")) != "vb/1" || r.Get("zz") != nil || j.Records("other").Get("a/1") != nil {
			t.Error("get reads another key or space")
		}
		if err := r.Put("c", []byte("x")); err == nil {
			t.Error("a read transaction accepted a record write")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func version(t *testing.T, st Port, id string) int64 {
	t.Helper()
	var v int64
	if err := st.ReadSpec(context.Background(), id, func(sp *specs.Spec, _ specs.JournalReader) error { v = sp.Header.Version; return nil }); err != nil {
		t.Fatal(err)
	}
	return v
}

// testAutonomySessionsAndTheirChain: a session started inside a spec
// mutation is read back by the next transaction, its audit chain holds,
// and CheckSpecs (specd check) reports a tampered event.
func testAutonomySessionsAndTheirChain(t *testing.T, open portOpener) {
	st := open(t, nil)
	ctx := context.Background()
	id := createSpec(t, st, "autonomy")
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var sid string
	_, err := st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
		s, _, err := autonomy.Start(sp, j.Records(autonomy.Space), autonomy.StartInput{}, now)
		if s != nil {
			sid = s.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.MutateSpec(ctx, id, specs.RepoWriteOptions{}, func(sp *specs.Spec, j specs.JournalWriter) error {
		_, _, err := autonomy.Start(sp, j.Records(autonomy.Space), autonomy.StartInput{}, now)
		return err
	})
	if codeOf(err) != "SPEC_SESSION_EXISTS" {
		t.Fatalf("second start: %v", err)
	}
	check := func() []bucketstore.Finding {
		var f []bucketstore.Finding
		if err := st.View(ctx, func(tx bucketstore.Tx) error { var err error; f, err = st.CheckSpecs(tx); return err }); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := check(); len(f) != 0 {
		t.Fatalf("sound chain: %v", f)
	}
	err = st.Update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketstore.BucketSpecs).Bucket([]byte(id)).Bucket([]byte("records_" + autonomy.Space))
		var key []byte
		_ = b.ForEach(func(k, v []byte) error {
			if strings.HasPrefix(string(k), "audit/") && key == nil {
				key = append([]byte(nil), k...)
			}
			return nil
		})
		v := strings.Replace(string(b.Get(key)), sid, "sess_forged", 1)
		return b.Put(key, []byte(v))
	})
	if err != nil {
		t.Fatal(err)
	}
	f := check()
	if len(f) != 1 || f[0].SpecID != id || !strings.Contains(f[0].Problem, "audit ledger breaks at event 1") {
		t.Fatalf("tampered chain: %v", f)
	}
}
