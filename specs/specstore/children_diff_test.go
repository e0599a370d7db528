package specstore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/specd/specd/specs"
)

// diffChildrenPlain is diffChildren as it was over plain slices, id by
// id: the reference the list-aware one must match.
func diffChildrenPlain(before, after []string) childrenPatch {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	q := 0
	for q < len(before)-p && q < len(after)-p && before[len(before)-1-q] == after[len(after)-1-q] {
		q++
	}
	return childrenPatch{Head: p, Mid: before[p : len(before)-q], Tail: q}
}

// TestDiffChildrenDifferential: on random sequences of edits of a
// phase's children (task adds before the verify nodes, appends, adds
// anywhere, removals, moves, and edits of an older version, as a failed
// or concurrent mutation makes), the patch diffChildren gives between
// the lists before and after each edit (lists that share a head array,
// as the node cache and a view's edit do, and the same lists decoded
// afresh) is the plain id-by-id diff's, field for field: the history
// records it writes are the same bytes.
func TestDiffChildrenDifferential(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 11))
		list, want := specs.ChildListOf([]string{}), []string{}
		type version struct {
			list specs.ChildList
			want []string
		}
		var kept []version
		for step := range 1200 {
			id := fmt.Sprint("task-1-", step+1)
			n := len(want)
			next, nextWant := list, want
			switch op := rng.IntN(100); {
			case op < 70 || (seed%2 == 1 && op < 90):
				i := max(0, n-rng.IntN(3))
				next, nextWant = list.Inserted(i, id), slices.Insert(slices.Clone(want), i, id)
			case op < 80:
				i := rng.IntN(n + 1)
				next, nextWant = list.Inserted(i, id), slices.Insert(slices.Clone(want), i, id)
			case op < 88 && n > 0:
				x := want[rng.IntN(n)]
				next, nextWant = list.Removed(x), slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == x })
			case op < 94 && n > 1:
				x := want[rng.IntN(n)]
				rest := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == x })
				i := rng.IntN(len(rest) + 1)
				next, nextWant = list.Removed(x).Inserted(i, x), slices.Insert(rest, i, x)
			case op < 97 && len(kept) > 0:
				v := kept[rng.IntN(len(kept))]
				list, want = v.list, v.want
				continue
			default:
				kept = append(kept, version{list, want})
				continue
			}
			checkDiff(t, fmt.Sprint("seed ", seed, " step ", step), list, want, next, nextWant)
			if len(kept) > 0 { // an older version against this one
				v := kept[rng.IntN(len(kept))]
				checkDiff(t, fmt.Sprint("seed ", seed, " step ", step, " from a kept version"), v.list, v.want, next, nextWant)
			}
			list, want = next, nextWant
		}
	}
}

// checkDiff fails unless diffChildren of before and after (as they are,
// decoded afresh, and mixed) is diffChildrenPlain of their ids, and the
// patch rebuilds before.
func checkDiff(t *testing.T, at string, before specs.ChildList, want []string, after specs.ChildList, afterWant []string) {
	t.Helper()
	ref := diffChildrenPlain(want, afterWant)
	for _, pair := range [][2]specs.ChildList{
		{before, after},
		{specs.ChildListOf(slices.Clone(want)), specs.ChildListOf(slices.Clone(afterWant))},
		{before, specs.ChildListOf(slices.Clone(afterWant))},
	} {
		got := diffChildren(pair[0], pair[1])
		if got.Head != ref.Head || got.Tail != ref.Tail || !reflect.DeepEqual(got.Mid, ref.Mid) && len(got.Mid)+len(ref.Mid) > 0 {
			t.Fatalf("%s: patch %d %q %d, want %d %q %d", at, got.Head, got.Mid, got.Tail, ref.Head, ref.Mid, ref.Tail)
		}
		if string(got.appendJSON(nil)) != string(ref.appendJSON(nil)) {
			t.Fatalf("%s: the patch encodes differently", at)
		}
		back, err := got.apply(pair[1])
		if err != nil || !slices.Equal(back.Slice(), want) {
			t.Fatalf("%s: the patch does not rebuild the list before (%v)", at, err)
		}
	}
}
