package specs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// childVersion is a list and the plain slice it must equal.
type childVersion struct {
	list ChildList
	want []string
}

// checkChildList fails unless l reads as want through every accessor.
func checkChildList(t *testing.T, step int, l ChildList, want []string) {
	t.Helper()
	if l.Len() != len(want) {
		t.Fatalf("step %d: Len %d, want %d", step, l.Len(), len(want))
	}
	if got := l.Slice(); !slices.Equal(got, want) {
		t.Fatalf("step %d: Slice differs from index %d", step, firstDiff(got, want))
	}
	var all []string
	for i, id := range l.All() {
		if i != len(all) || l.At(i) != id {
			t.Fatalf("step %d: All yields %d %q, At says %q", step, i, id, l.At(i))
		}
		all = append(all, id)
	}
	if !slices.Equal(all, want) {
		t.Fatalf("step %d: All differs from index %d", step, firstDiff(all, want))
	}
	if got, w := string(l.appendJSON(nil)), string(AppendJSONStrings(nil, want)); got != w {
		t.Fatalf("step %d: the JSON differs", step)
	}
	if len(want) > 0 {
		from := step % len(want)
		to := from + (len(want)-from)/2
		if got := l.Range(from, to); !slices.Equal(got, want[from:to]) {
			t.Fatalf("step %d: Range(%d, %d) differs from index %d", step, from, to, firstDiff(got, want[from:to]))
		}
		id := want[len(want)-1-step%len(want)]
		if l.Index(id) != slices.Index(want, id) {
			t.Fatalf("step %d: Index(%s) %d, want %d", step, id, l.Index(id), slices.Index(want, id))
		}
	}
}

// TestChildListDifferential: random sequences of edits of a children list
// (adds near the end as task adds make them, adds anywhere, appends,
// removals, moves, and forks: an edit of an older version, as a failed or
// concurrent mutation makes from the same cached node) give, through
// every accessor, what the same edits of a plain slice give; every earlier
// version still reads as it was (no edit writes into a list another one
// uses); and CommonPrefix and prefixEqual between any two versions agree
// with a plain comparison.
func TestChildListDifferential(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cur := childVersion{list: ChildListOf([]string{}), want: []string{}}
		var kept []childVersion
		next := 0
		for step := range 1500 {
			next++
			id := fmt.Sprint("task-1-", next)
			n := len(cur.want)
			op := rng.IntN(100)
			if seed%2 == 1 && op >= 75 && op < 93 {
				op -= 20 // half the seeds only add: the head arrays fill in place
			}
			switch {
			case op < 60: // a task add: before the trailing verify nodes
				i := max(0, n-rng.IntN(3))
				cur = childVersion{cur.list.Inserted(i, id), slices.Insert(slices.Clone(cur.want), i, id)}
			case op < 75:
				cur = childVersion{cur.list.Inserted(n, id), append(slices.Clone(cur.want), id)}
			case op < 82:
				i := rng.IntN(n + 1)
				cur = childVersion{cur.list.Inserted(i, id), slices.Insert(slices.Clone(cur.want), i, id)}
			case op < 88 && n > 0: // a removal
				x := cur.want[rng.IntN(n)]
				cur = childVersion{cur.list.Removed(x), removeString(cur.want, x)}
			case op < 93 && n > 0: // a move
				x := cur.want[rng.IntN(n)]
				rest := removeString(cur.want, x)
				i := rng.IntN(len(rest) + 1)
				cur = childVersion{cur.list.Removed(x).Inserted(i, x), slices.Insert(slices.Clone(rest), i, x)}
			case op < 97 && len(kept) > 0: // a fork: go on from an older version
				cur = kept[rng.IntN(len(kept))]
			default:
				kept = append(kept, cur)
			}
			checkChildList(t, step, cur.list, cur.want)
			if step%50 == 0 {
				kept = append(kept, cur)
				for _, v := range kept {
					checkChildList(t, step, v.list, v.want)
					checkPrefix(t, step, v, cur)
				}
			}
		}
	}
}

// checkPrefix fails unless CommonPrefix and prefixEqual of a and b agree
// with a plain comparison.
func checkPrefix(t *testing.T, step int, a, b childVersion) {
	t.Helper()
	p := 0
	for p < len(a.want) && p < len(b.want) && a.want[p] == b.want[p] {
		p++
	}
	if got := a.list.CommonPrefix(b.list); got != p {
		t.Fatalf("step %d: CommonPrefix %d, want %d", step, got, p)
	}
	if k := min(len(a.want), len(b.want)); !a.list.prefixEqual(b.list, min(p, k)) || (p < k && a.list.prefixEqual(b.list, p+1)) {
		t.Fatalf("step %d: prefixEqual disagrees with a common prefix of %d", step, p)
	}
	if a.list.Equal(b.list) != slices.Equal(a.want, b.want) {
		t.Fatalf("step %d: Equal disagrees", step)
	}
}

// TestChildListConcurrentAdds: goroutines that each go on adding ids to
// the same long list (the cached phase that concurrent writers start
// from) each get their own list, and the shared one stays as it was;
// under -race, a slot of the shared array written by one and read by
// another is reported.
func TestChildListConcurrentAdds(t *testing.T) {
	base := make([]string, 0, 300)
	for i := range 300 {
		base = append(base, fmt.Sprint("task-1-", i))
	}
	shared := ChildListOf(slices.Clone(base))
	for i := range 100 { // make the head array one with room to claim
		shared = shared.Inserted(shared.Len(), fmt.Sprint("seed-", i))
	}
	want := shared.Slice()
	want = slices.Clone(want)
	var wg sync.WaitGroup
	results := make([]childVersion, 8)
	for g := range results {
		wg.Go(func() {
			l, w := shared, slices.Clone(want)
			for i := range 200 {
				id := fmt.Sprintf("g%d-%d", g, i)
				at := max(0, l.Len()-2)
				l, w = l.Inserted(at, id), slices.Insert(w, at, id)
				_ = l.At(l.Len() / 2)
			}
			results[g] = childVersion{l, w}
		})
	}
	wg.Wait()
	checkChildList(t, 0, shared, want)
	for g, r := range results {
		checkChildList(t, g, r.list, r.want)
	}
}

// firstDiff is the first index where a and b differ (the shorter length
// when one is a prefix of the other).
func firstDiff(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
