package specstore

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
)

// TestChunkEditsAtEveryBoundary starts from lists kept in chunks of
// several shapes (one full chunk, one over it, many) and applies, at every
// pair of positions around each chunk boundary, a removal of the run
// between them, its replacement by other ids, and an insertion: each
// stored node reads back as the list written, and the history's patch
// rebuilds the list before.
func TestChunkEditsAtEveryBoundary(t *testing.T) {
	st := storetest.Open(t)
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s-%d", prefix, i)
		}
		return out
	}
	// Each shape is a list and how it was written (each step a put).
	type shape struct {
		name  string
		steps [][]string
	}
	base := ids("t", 300)
	shapes := []shape{
		{"128 at once", [][]string{base[:128]}},
		{"127 then 128", [][]string{base[:127], base[:128]}},
		{"128 then 129", [][]string{base[:128], base[:129]}},
		{"256 at once", [][]string{base[:256]}},
		{"one by one to 140", func() [][]string {
			var out [][]string
			for n := 1; n <= 140; n++ {
				out = append(out, base[:n])
			}
			return out
		}()},
		{"257 then the first 64 removed", [][]string{base[:257], base[64:257]}},
	}
	edits := func(list []string, sizes []int) []struct {
		name string
		kids []string
	} {
		var cuts []int // positions around every chunk boundary
		at := 0
		for _, s := range sizes {
			for d := -2; d <= 2; d++ {
				if p := at + d; p >= 0 && p <= len(list) {
					cuts = append(cuts, p)
				}
			}
			at += s
		}
		for d := -2; d <= 0; d++ {
			if p := len(list) + d; p >= 0 {
				cuts = append(cuts, p)
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		var out []struct {
			name string
			kids []string
		}
		add := func(name string, kids []string) {
			out = append(out, struct {
				name string
				kids []string
			}{name, kids})
		}
		for _, a := range cuts {
			add(fmt.Sprintf("insert at %d", a), slices.Concat(list[:a], []string{"new-a", "new-b"}, list[a:]))
			for _, b := range cuts {
				if b <= a {
					continue
				}
				add(fmt.Sprintf("remove [%d,%d)", a, b), slices.Concat(list[:a], list[b:]))
				add(fmt.Sprintf("replace [%d,%d)", a, b), slices.Concat(list[:a], []string{"new-c"}, list[b:]))
			}
		}
		return out
	}
	ctx := context.Background()
	cases := 0
	for si, sh := range shapes {
		err := st.Update(ctx, func(tx bucketstore.Tx) error {
			spec, err := tx.Bucket(bucketSpecs).CreateBucketIfNotExists([]byte(fmt.Sprint("s", si)))
			if err != nil {
				return err
			}
			nodes, err := spec.CreateBucketIfNotExists(bucketNodes)
			if err != nil {
				return err
			}
			w := newNodeWriter(spec)
			write := func(id string, old []byte, oldKids, kids []string) []byte {
				n := &specs.Node{ID: id, Type: specs.TypePhase, Title: "p", Status: specs.StatusPending, Parent: specs.RootID, Children: specs.ChildListOf(kids)}
				val, err := w.put(n, old, specs.ChildListOf(oldKids))
				if err != nil {
					t.Fatalf("%s: %s: %v", sh.name, id, err)
				}
				return slices.Clone(val)
			}
			// The shape, once, to learn its chunk sizes.
			var val []byte
			var prev []string
			for _, s := range sh.steps {
				val, prev = write("probe", val, prev, s), s
			}
			sn, err := parseStored(val)
			if err != nil {
				return err
			}
			for k, e := range edits(prev, sn.sizes) {
				id := fmt.Sprint("n", k)
				var v []byte
				var before []string
				for _, s := range sh.steps {
					v, before = write(id, v, before, s), s
				}
				after := write(id, v, before, e.kids)
				got, err := decodeStored(id, after, nodes)
				if err != nil {
					t.Fatalf("%s (chunks %v), %s: %v", sh.name, sn.sizes, e.name, err)
				}
				if !got.Children.Equal(specs.ChildListOf(e.kids)) {
					t.Errorf("%s (chunks %v), %s: reads %d children, wrote %d", sh.name, sn.sizes, e.name, got.Children.Len(), len(e.kids))
				}
				back, err := diffChildren(specs.ChildListOf(before), specs.ChildListOf(e.kids)).apply(got.Children)
				if err != nil || !slices.Equal(back.Slice(), before) {
					t.Errorf("%s, %s: the patch does not rebuild the list before (%v)", sh.name, e.name, err)
				}
				cases++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d edits", cases)
}
