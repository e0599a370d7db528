package specstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// countingBucket records the keys put into a bucket.
type countingBucket struct {
	inner
	puts []string
}

type inner = bucketstore.Bucket

func (b *countingBucket) Put(k, v []byte) error {
	b.puts = append(b.puts, string(k))
	return b.inner.Put(k, v)
}

// TestNodeWriteSkipsOnlyTheSameBytes: a node written with the value it
// already has is not put again (with children in chunks or without), and
// one whose value differs in any byte — a title of the same length, a
// child changed — is put and reads back as written.
func TestNodeWriteSkipsOnlyTheSameBytes(t *testing.T) {
	st := storetest.Open(t)
	kids := make([]string, 200)
	for i := range kids {
		kids[i] = fmt.Sprintf("task-1-%d", i+1)
	}
	phase := &specs.Node{ID: "phase-1", Type: specs.TypePhase, Title: "phase", Status: specs.StatusPending, Parent: specs.RootID, Children: specs.ChildListOf(kids)}
	leaf := &specs.Node{ID: "task-1-1", Type: specs.TypeTask, Title: "task", Status: specs.StatusPending, Parent: "phase-1"}
	err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
		spec, err := tx.Bucket(bucketSpecs).CreateBucket([]byte("s"))
		if err != nil {
			return err
		}
		nodes, err := spec.CreateBucket(bucketNodes)
		if err != nil {
			return err
		}
		w := newNodeWriter(spec)
		for _, n := range []*specs.Node{phase, leaf} {
			if _, err := w.put(n, nil, specs.ChildList{}); err != nil {
				return err
			}
		}
		cb := &countingBucket{inner: nodes}
		cw := &nodeWriter{nodes: cb}
		for _, c := range []struct {
			name string
			n    *specs.Node
			edit func(n *specs.Node)
			puts []string
		}{
			{"the phase as it is", phase, func(*specs.Node) {}, nil},
			{"the task as it is", leaf, func(*specs.Node) {}, nil},
			{"the phase renamed, same length", phase, func(n *specs.Node) { n.Title = "phasf" }, []string{"phase-1"}},
			{"the task renamed, same length", leaf, func(n *specs.Node) { n.Title = "tasl" }, []string{"task-1-1"}},
			{"a child renamed, same length", phase, func(n *specs.Node) { n.Children = renamed(n.Children, 150, "task-1-999") }, []string{"phase-1\x00\x00\x00\x00\x03", "phase-1"}},
		} {
			cb.puts = nil
			old := slices.Clone(nodes.Get([]byte(c.n.ID)))
			stored, err := decodeStored(c.n.ID, old, nodes)
			if err != nil {
				return err
			}
			n := stored.Clone()
			c.edit(n)
			val, err := cw.put(n, old, stored.Children)
			if err != nil {
				return err
			}
			if !slices.Equal(cb.puts, c.puts) {
				t.Errorf("%s: put %q, want %q", c.name, cb.puts, c.puts)
			}
			now := nodes.Get([]byte(c.n.ID))
			if !bytes.Equal(now, val) {
				t.Errorf("%s: stored %q, the write answered %q", c.name, now, val)
			}
			back, err := decodeStored(c.n.ID, now, nodes)
			if err != nil {
				return err
			}
			want, _ := specs.EncodeNode(n)
			got, _ := specs.EncodeNode(back)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: reads back\n%s\nwant\n%s", c.name, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// jsonStrings are strings whose JSON encodings differ in every way
// encoding/json has: plain, quotes and backslashes, control characters,
// HTML characters, DEL, non-ASCII, U+2028/U+2029, invalid UTF-8.
var jsonStrings = []string{"", "task-1-1", "a b", `q"uote`, `back\slash`, "tab\there", "nl\n", "\x00\x1f", "<b>", "a&b", ">", "\x7f",
	"é", "日本", "line\u2028sep", "para\u2029", "bad\xffutf8", "\xe2\x80", "emoji 🙂", "/slash"}

// TestIDsEncodeAsJSONMarshal: core.AppendJSONString and encodeIDs give
// json.Marshal's bytes, for every kind of string and random bytes.
func TestIDsEncodeAsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 2))
	strs := slices.Clone(jsonStrings)
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[i] = byte(' ' + rng.IntN(95))
			}
		}
		strs = append(strs, string(b))
	}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := core.AppendJSONString([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("core.AppendJSONString(%q) = %q, want %q", s, got[1:], want)
		}
	}
	for i := 0; i < len(strs); i += 1 + i%7 {
		list := strs[i:min(len(strs), i+i%9)]
		want, _ := json.Marshal(list)
		if got := encodeIDs(list); !bytes.Equal(got, want) {
			t.Errorf("encodeIDs(%q) = %s, want %s", list, got, want)
		}
	}
}

// TestRandomHistoryRecordsEncodeAsJSONMarshal: random records (ids of
// every kind, with and without action, author and patches, patches with
// and without mid, absent, compact and non-compact nodes) encode as
// json.Marshal of the record with its maps.
func TestRandomHistoryRecordsEncodeAsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	pick := func() string { return jsonStrings[rng.IntN(len(jsonStrings))] }
	records := []string{`{"type":"task","title":"a"}`, `{"title":"a <b>"}`, `{ "title" : "spaced" }`, "{\"t\":\"\u2028\"}", `{"children":[],"metadata":{"_rollup":{"first_open":0}}}`}
	headers := []string{`{"spec_id":"s","version":6}`, `{"spec_id":"s", "title":"a & b"}`, `{}`}
	for round := range 500 {
		rec := historyRecord{Version: rng.Int64N(1 << 40), Timestamp: pick(), HeaderBefore: json.RawMessage(headers[rng.IntN(len(headers))])}
		if rng.IntN(2) == 0 {
			rec.Action = pick()
		}
		if rng.IntN(2) == 0 {
			rec.Author = pick()
		}
		ids := map[string]bool{}
		for range rng.IntN(6) {
			ids[pick()+fmt.Sprint(rng.IntN(3))] = true
		}
		sorted := make([]string, 0, len(ids))
		for id := range ids {
			sorted = append(sorted, id)
		}
		slices.SortFunc(sorted, strings.Compare)
		want := rec
		want.NodesBefore = map[string]json.RawMessage{}
		var changes []nodeBefore
		for _, id := range sorted {
			c := nodeBefore{id: id}
			want.NodesBefore[id] = json.RawMessage("null")
			if rng.IntN(4) > 0 {
				c.record = []byte(records[rng.IntN(len(records))])
				want.NodesBefore[id] = c.record
			}
			if c.record != nil && rng.IntN(2) == 0 {
				c.hasPatch = true
				c.patch = childrenPatch{Head: rng.IntN(300), Tail: rng.IntN(300)}
				switch rng.IntN(3) {
				case 0:
					c.patch.Mid = []string{}
				case 1:
					for range rng.IntN(4) + 1 {
						c.patch.Mid = append(c.patch.Mid, pick())
					}
				}
				if want.ChildrenBefore == nil {
					want.ChildrenBefore = map[string]childrenPatch{}
				}
				want.ChildrenBefore[id] = c.patch
			}
			changes = append(changes, c)
		}
		got, err := encodeHistoryRecord(rec, changes)
		if err != nil {
			t.Fatal(err)
		}
		wantB, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantB) {
			t.Fatalf("record %d encoded\n%s\nwant (json.Marshal)\n%s", round, got, wantB)
		}
	}
}

// TestHeaderBeforeIsTheStoredHeaderEncoded: a header stored in another
// encoding than json.Marshal's (keys in another order, as another writer
// may have left it) is recorded in the history as json.Marshal of the
// header read, as it always was: only a header this process encoded
// itself is taken from the cache as it is.
func TestHeaderBeforeIsTheStoredHeaderEncoded(t *testing.T) {
	st := storetest.Open(t)
	r := New(st, nil)
	ctx := context.Background()
	h, err := r.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "headers", Mission: "m"}, nil, exists)
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	write := func(dry bool) int64 {
		t.Helper()
		res, err := r.MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{DryRun: dry}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			_, err := specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return res.Version
	}
	write(false) // the header is cached as this process encoded it
	if err := st.Update(ctx, func(tx bucketstore.Tx) error {
		b := tx.Bucket(bucketSpecs).Bucket([]byte(h.SpecID))
		var m map[string]any
		if err := json.Unmarshal(b.Get(keyHeader), &m); err != nil {
			return err
		}
		sorted, err := json.Marshal(m) // the same header, its keys sorted
		if err != nil {
			return err
		}
		if bytes.Equal(sorted, b.Get(keyHeader)) {
			t.Fatal("the test's other encoding is json.Marshal's")
		}
		return b.Put(keyHeader, sorted)
	}); err != nil {
		t.Fatal(err)
	}
	// The first write reads the header in the other encoding (cached by
	// a dry run before it), the second the one the first stored: each
	// records json.Marshal of the header.
	for i := range 2 {
		var want []byte
		if err := st.View(ctx, func(tx bucketstore.Tx) error {
			hd, err := readHeader(tx.Bucket(bucketSpecs).Bucket([]byte(h.SpecID)))
			if err == nil {
				want, err = json.Marshal(hd)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		write(true)
		v := write(false)
		if err := st.View(ctx, func(tx bucketstore.Tx) error {
			var rec historyRecord
			if err := json.Unmarshal(tx.Bucket(bucketSpecs).Bucket([]byte(h.SpecID)).Bucket(bucketHistory).Get(u64(uint64(v))), &rec); err != nil {
				return err
			}
			if !bytes.Equal(rec.HeaderBefore, want) {
				t.Errorf("write %d: header_before\n%s\nwant\n%s", i, rec.HeaderBefore, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexRowsEncodeAsJSONMarshal: a spec's index row is json.Marshal of
// its summary, for every kind of string and number in every field (each
// field set through reflection, so a field added to specs.RepoSummary
// and not to encodeSummary fails here).
func TestIndexRowsEncodeAsJSONMarshal(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 4))
	for range 500 {
		var r specs.RepoSummary
		v := reflect.ValueOf(&r).Elem()
		for i := range v.NumField() {
			switch f := v.Field(i); f.Kind() {
			case reflect.String:
				f.SetString(jsonStrings[rng.IntN(len(jsonStrings))])
			case reflect.Int, reflect.Int64:
				f.SetInt(rng.Int64N(1<<40) - 1<<39)
			default:
				t.Fatalf("specs.RepoSummary.%s is a %s: encodeSummary knows strings and ints", v.Type().Field(i).Name, f.Kind())
			}
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeSummary(r); !bytes.Equal(got, want) {
			t.Fatalf("encodeSummary\n%s\nwant (json.Marshal)\n%s", got, want)
		}
	}
}

// TestMutationChangesNameAddsUpdatesAndRemovals: a dry run's changes say
// which nodes it would add (absent before), update and remove, in the
// view's order; a stored write reports none (only dry runs read them) and
// stores what its dry run reported.
func TestMutationChangesNameAddsUpdatesAndRemovals(t *testing.T) {
	st := storetest.Open(t)
	r := New(st, nil)
	ctx := context.Background()
	h, err := r.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "changes", Mission: "m"}, nil, exists)
		if err == nil {
			_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
		}
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	ops := func(res specs.RepoWriteResult) string {
		var out []string
		for _, c := range res.Changes {
			out = append(out, c.Op+" "+c.Target)
		}
		return strings.Join(out, ", ")
	}
	var task string
	for _, dry := range []bool{true, false} {
		res, err := r.MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{DryRun: dry}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			task, err = specs.AddTask(sp, "phase-1", specs.TaskInput{Title: "t"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "update spec, update node:phase-1, update node:spec-root, add node:" + task
		if !dry {
			want = ""
		}
		if got := ops(res); got != want || (!dry && res.Changes != nil) {
			t.Errorf("dry run %v: a task add changes %q, want %q", dry, got, want)
		}
	}
	for _, dry := range []bool{true, false} {
		res, err := r.MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{DryRun: dry}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			_, err := specs.RemoveTask(sp, task, true)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "update spec, update node:phase-1, update node:spec-root, remove node:" + task
		if !dry {
			want = ""
		}
		if got := ops(res); got != want || (!dry && res.Changes != nil) {
			t.Errorf("dry run %v: a task removal changes %q, want %q", dry, got, want)
		}
	}
	if err := r.ReadSpec(ctx, h.SpecID, func(sp *specs.Spec, _ specs.JournalReader) error {
		if sp.Has(task) {
			t.Errorf("%s still stored after its removal", task)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// renamed is kids with the id at i replaced by id (a new list).
func renamed(kids specs.ChildList, i int, id string) specs.ChildList {
	ids := slices.Clone(kids.Slice())
	ids[i] = id
	return specs.ChildListOf(ids)
}
