package mcptool

import (
	"fmt"
	"maps"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/jcs"
)

// ListAnswer is the Degrader of an answer built around one list (fidelity
// partial): Data[Key] holds Items in order of importance, most
// important first. Over the budget it keeps the longest prefix that fits —
// at least one item — and reports the rest: content_fidelity partial,
// dropped_content_ids, content_archive_hashes for the dropped items the
// store can serve (research archive-get; the warning says so only when
// Fit.ArchiveServed), a CONTENT_TRUNCATED warning with
// {dropped_count, total_count, reason, budget_tokens, next_call}, and a
// pagination cursor that continues right after the last item kept.
//
// total_count counts the items of this answer (one page), not the whole
// listing. dropped_content_ids and the archive hashes name the first
// dropped items — at most maxListedDrops, and at most a fifth of the
// budget — and the warning's listed_dropped says how many when not all;
// the cursor reaches all of them.
type ListAnswer[T any] struct {
	Data     map[string]any
	Key      string
	Items    []T
	CountKey string // when set, Data[CountKey] becomes the number kept
	// ID is the dropped_content_ids entry of Items[i]: "journal:<seq>",
	// "node:<id>", "item:<id>".
	ID func(i int) string
	// Archive, when set, returns the archive ids under which research
	// archive-get serves Items[i] from the store, each with the value it
	// serves (hashed here as RFC 8785 JSON, as archive-get hashes it).
	Archive func(i int) []ArchiveRef
	// Next returns the cursor that continues after the first kept items.
	Next     func(kept int) string
	PageSize int
	// Continue is the call that continues from cursor (reported in the
	// warning as next_call).
	Continue func(cursor string) (tool string, args map[string]any)
	// Answer, when set, builds the (typed) answer holding the first kept
	// items, in place of Data with Key and CountKey replaced.
	Answer func(kept int) any
}

// ArchiveRef names one archived value: its archive id and the value
// research archive-get serves under it.
type ArchiveRef struct {
	ID      string
	Content any
}

// maxListedDrops bounds how many dropped items a list answer names in
// dropped_content_ids and content_archive_hashes, so that the report of
// what was left out cannot itself crowd out the answer.
const maxListedDrops = 50

// maxReportShare: the names and archive hashes of the dropped items take
// at most 1/maxReportShare of the budget (at least one item is named).
const maxReportShare = 5

// Degrade finds the longest prefix of Items that fits (binary search over
// the prefix length, measuring the whole answer each time).
func (l *ListAnswer[T]) Degrade(f Fit) (any, []core.MetaOption, bool, error) {
	lf := listFit[T]{l: l, f: f, hashes: map[int]map[string]string{}}
	// Largest k in [1, n-1] whose answer fits; lo fits (or is 0), hi does not.
	lo, hi := 0, len(l.Items)
	var bestData any
	var bestMeta []core.MetaOption
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		data, meta, err := lf.build(mid)
		if err != nil {
			return nil, nil, false, err
		}
		if f.Measure(data, meta) <= f.Budget {
			lo, bestData, bestMeta = mid, data, meta
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return nil, nil, false, nil
	}
	return bestData, bestMeta, true, nil
}

// listFit is one Degrade of a ListAnswer under one Fit; it hashes each
// item's archived values once however many prefixes it tries.
type listFit[T any] struct {
	l      *ListAnswer[T]
	f      Fit
	hashes map[int]map[string]string // item index → archive id → hash
}

// build is the answer keeping the first k items and its meta: content
// fidelity partial with the dropped items named (dropped), and the
// CONTENT_TRUNCATED warning, plus the pagination cursor after item k when
// the list has one.
func (lf *listFit[T]) build(k int) (any, []core.MetaOption, error) {
	l, n := lf.l, len(lf.l.Items)
	data := l.answer(k)
	dropped, archive, err := lf.dropped(k)
	if err != nil {
		return nil, nil, err
	}
	ctx := map[string]any{"dropped_count": n - k, "total_count": n, "reason": "token_budget", "budget_tokens": lf.f.Budget}
	if len(dropped) < n-k {
		ctx["listed_dropped"] = len(dropped)
	}
	meta := []core.MetaOption{core.WithFidelity(core.FidelityPartial, dropped, archive)}
	msg := fmt.Sprintf("%d of %d items were left out to fit %d tokens", n-k, n, lf.f.Budget)
	if l.Next != nil {
		cursor := l.Next(k)
		meta = append(meta, core.WithPagination(cursor, l.PageSize, nil))
		if cursor != "" && l.Continue != nil {
			tool, args := l.Continue(cursor)
			ctx["next_call"] = map[string]any{"tool": tool, "args": args}
			msg += fmt.Sprintf("; call %s with the cursor in meta.pagination for the rest", tool)
		}
	}
	if len(archive) > 0 && lf.f.ArchiveServed {
		msg += "; research archive-get serves them by the ids in meta.content_archive_hashes"
	}
	meta = append(meta, core.WithWarning(core.WarnContentTruncated, core.SeverityWarning, msg+".", ctx))
	return data, meta, nil
}

// dropped names the first items dropped when k are kept — at most
// maxListedDrops, and no more than a fifth of the budget, but always one —
// with the archive hashes of those it names.
func (lf *listFit[T]) dropped(k int) (ids []string, archive map[string]string, err error) {
	archive = map[string]string{}
	report := 0 // bytes of the report so far
	for i := k; i < len(lf.l.Items) && i < k+maxListedDrops; i++ {
		id := lf.l.ID(i)
		h, err := lf.archiveHashes(i)
		if err != nil {
			return nil, nil, err
		}
		size := len(id) + 3
		for aid, sum := range h {
			size += len(aid) + len(sum) + 6
		}
		if len(ids) > 0 && report+size > lf.f.Budget*4/maxReportShare {
			break
		}
		report += size
		ids = append(ids, id)
		maps.Copy(archive, h)
	}
	return ids, archive, nil
}

// archiveHashes maps the archive ids of item i to the RFC 8785 hash of the
// value each serves (nil when the list has no Archive); computed once per
// item.
func (lf *listFit[T]) archiveHashes(i int) (map[string]string, error) {
	if lf.l.Archive == nil {
		return nil, nil
	}
	if h, ok := lf.hashes[i]; ok {
		return h, nil
	}
	h := map[string]string{}
	for _, ref := range lf.l.Archive(i) {
		sum, err := jcs.Hash(ref.Content)
		if err != nil {
			return nil, err
		}
		h[ref.ID] = sum
	}
	lf.hashes[i] = h
	return h, nil
}

// answer is the answer with the first k items.
func (l *ListAnswer[T]) answer(k int) any {
	if l.Answer != nil {
		return l.Answer(k)
	}
	data := maps.Clone(l.Data)
	data[l.Key] = l.Items[:k]
	if l.CountKey != "" {
		data[l.CountKey] = k
	}
	return data
}
