package specstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestChildrenChunksFollowEveryEdit writes a node whose children list goes
// through random edits (appends, inserts, removals, runs replaced, moves,
// emptied) and after each one reads it back as stored: the children are
// the list, the node has exactly its chunks (none left over), no chunk is
// over chunkMax, the stored value changed whenever the children did, and
// the history's patch rebuilds the list before from the list after.
func TestChildrenChunksFollowEveryEdit(t *testing.T) {
	st := storetest.Open(t)
	rng := rand.New(rand.NewPCG(7, 22))
	next := 0
	fresh := func() string { next++; return fmt.Sprintf("task-1-%d", next) }
	var list []string
	var old []byte
	for step := range 600 {
		before := append([]string(nil), list...)
		switch op := rng.IntN(10); {
		case op < 4: // append a few
			for range rng.IntN(40) + 1 {
				list = append(list, fresh())
			}
		case op < 6 && len(list) > 0: // insert in the middle
			i := rng.IntN(len(list) + 1)
			list = append(list[:i], append([]string{fresh(), fresh()}, list[i:]...)...)
		case op < 8 && len(list) > 0: // remove a run
			i := rng.IntN(len(list))
			j := min(len(list), i+rng.IntN(150)+1)
			list = append(list[:i:i], list[j:]...)
		case op < 9 && len(list) > 1: // move one to the front
			i := rng.IntN(len(list))
			id := list[i]
			list = append([]string{id}, append(list[:i:i], list[i+1:]...)...)
		case rng.IntN(8) == 0:
			list = nil
		default: // touch the node, not its children
		}
		n := &specs.Node{ID: "phase-1", Type: specs.TypePhase, Title: "phase", Status: specs.StatusPending, Parent: specs.RootID, Children: specs.ChildListOf(append([]string(nil), list...))}
		err := st.Update(context.Background(), func(tx bucketstore.Tx) error {
			spec, err := tx.Bucket(bucketSpecs).CreateBucketIfNotExists([]byte("s"))
			if err != nil {
				return err
			}
			nodes, err := spec.CreateBucketIfNotExists(bucketNodes)
			if err != nil {
				return err
			}
			val, err := newNodeWriter(spec).put(n, old, specs.ChildListOf(before))
			if err != nil {
				return err
			}
			if len(list) > 0 && !reflect.DeepEqual(before, list) && bytes.Equal(val, old) {
				t.Errorf("step %d: the children changed and the stored value did not", step)
			}
			old = bytes.Clone(val)
			got, err := decodeStored("phase-1", val, nodes)
			if err != nil {
				return err
			}
			if !got.Children.Equal(n.Children) {
				t.Fatalf("step %d: read %d children, wrote %d", step, got.Children.Len(), n.Children.Len())
			}
			sn, err := parseStored(val)
			if err != nil {
				return err
			}
			chunks := 0
			c := nodes.Cursor()
			for k, v := c.Seek([]byte("phase-1\x00")); k != nil && bytes.HasPrefix(k, []byte("phase-1\x00")); k, v = c.Next() {
				chunks++
				if bytes.Count(v, []byte(",")) >= chunkMax {
					t.Errorf("step %d: a chunk over %d ids", step, chunkMax)
				}
			}
			if chunks != len(sn.sizes) {
				t.Fatalf("step %d: %d chunk keys for %d chunks", step, chunks, len(sn.sizes))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		p := diffChildren(specs.ChildListOf(before), specs.ChildListOf(list))
		back, err := p.apply(specs.ChildListOf(list))
		if err != nil || !slices.Equal(back.Slice(), before) {
			t.Fatalf("step %d: the patch %+v rebuilds %d ids, want %d (%v)", step, p, back.Len(), len(before), err)
		}
	}
}

// TestWriteCachesFollowAnotherWriter: two repositories over one store (two
// processes' caches); each write's header and nodes are read as the other
// left them, never as this one's caches last saw them: the versions
// follow each other, and each add lands after the other's. Over
// storetest.Rerun some writes first run in a transaction that is rolled
// back (an etcd write that lost a race), after writing their header and
// nodes through to the caches: what they cached is never read as stored.
func TestWriteCachesFollowAnotherWriter(t *testing.T) {
	t.Run("plain", func(t *testing.T) {
		st := storetest.Open(t)
		writeCachesFollow(t, New(st, nil), New(st, nil))
	})
	t.Run("rerun", func(t *testing.T) {
		st := storetest.Open(t)
		writeCachesFollow(t, New(&storetest.Rerun{Store: st, Every: 2}, nil), New(&storetest.Rerun{Store: st, Every: 3}, nil))
	})
}

func writeCachesFollow(t *testing.T, a, b *Repo) {
	ctx := context.Background()
	h, err := a.CreateSpec(ctx, specs.RepoWriteOptions{}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "two writers", Mission: "m"}, nil, exists)
		if err == nil {
			_, err = specs.AddPhase(sp, specs.PhaseInput{Title: "p"})
		}
		return sp, nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	version := h.Version
	var want []string
	for i := range 300 {
		r := a
		if i%3 == 0 {
			r = b
		}
		v := version
		var id string
		res, err := r.MutateSpec(ctx, h.SpecID, specs.RepoWriteOptions{ExpectedVersion: &v}, func(sp *specs.Spec, _ specs.JournalWriter) error {
			var err error
			id, err = specs.AddTask(sp, "phase-1", specs.TaskInput{Title: fmt.Sprint("t", i)})
			return err
		})
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		want = append(want, id)
		version = res.Version
	}
	for _, r := range []*Repo{a, b} {
		if err := r.ReadSpec(ctx, h.SpecID, func(sp *specs.Spec, _ specs.JournalReader) error {
			var got []string // the tasks, without the phase's verify nodes
			for _, id := range sp.Node("phase-1").Children.All() {
				if sp.Node(id).Type == specs.TypeTask {
					got = append(got, id)
				}
			}
			if !reflect.DeepEqual(got, want) || sp.Header.Version != version {
				t.Errorf("read: version %d (want %d), %d children (want %d)", sp.Header.Version, version, len(got), len(want))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}
