package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"sync"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/jcs"
	"github.com/specd/specd/specs"
)

// tokensOf is the token estimate of contract §6: bytes of compact JSON / 4.
func tokensOf(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return (len(b) + 3) / 4
}

// ArchiveID names a stored spec item pinned to a version, so that
// research(action="archive-get") can serve it from the store (contract §6).
func ArchiveID(specID string, version int64, item string) string {
	return "spec:" + specID + "@" + strconv.FormatInt(version, 10) + "/" + item
}

// ContentHash is "sha256:<hex>" of v's RFC 8785 canonical JSON.
func ContentHash(v any) (string, error) {
	b, err := jcs.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// budgeted is a spec document degraded to fit a token budget.
type budgeted struct {
	Data     map[string]any
	Fidelity string
	Dropped  []string
	Archive  map[string]string
	Total    int // items considered for dropping
	Tokens   int
}

// Archive items of a spec answer (the part of an archive id after the "/"):
//
//	node:<id>        one node's full JSON
//	subtree:<id>     {id: node} for the node and every descendant
//	journal:<a>-<b>  the journal entries with seq a..b (inclusive), oldest first
//	journal:<seq>    one journal entry (dropped from journal list)
//
// Each is hashed over its RFC 8785 canonical JSON, and research
// archive-get serves it from the store at the pinned version.

// minNodeBytes is a lower bound of one node's encoding in a full document
// (type, title, status, parent, children, counts, metadata, dependencies).
const minNodeBytes = 150

// maxDroppedNodes bounds how many nodes the partial level may drop one by
// one before the summary level (which drops whole phases) takes over, so
// the metadata listing dropped items stays small.
const maxDroppedNodes = 50

// budgetDocument fits doc (with its journal) into budget tokens, degrading
// in the fixed order of contract §6:
//
//  1. partial: drop the oldest journal entries (one journal range item),
//     then the metadata of completed nodes, oldest completion first (one
//     node item each, at most maxDroppedNodes);
//  2. summary: every node shrinks to {type, title, status, parent, children};
//     each phase's subtree and the remaining journal are the dropped items;
//  3. reference_only: phases with their counts only, plus the calls that
//     page through the rest (same dropped items as summary).
func budgetDocument(doc specs.Document, budget int, memo *hashMemo) (budgeted, error) {
	version, specID := doc.Version, doc.SpecID
	out := budgeted{Fidelity: core.FidelityFull, Archive: map[string]string{}}
	full := map[string]any{"spec": doc}
	// Every node costs at least minNodeBytes in the full and partial forms;
	// when even that cannot fit, skip encoding the whole document.
	tooBig := len(doc.Hierarchy)*minNodeBytes/4 > budget
	var fullBytes []byte
	if !tooBig {
		var err error
		if fullBytes, err = json.Marshal(full); err != nil {
			return out, err
		}
		if t := (len(fullBytes) + 3) / 4; t <= budget {
			out.Data, out.Tokens = full, t
			return out, nil
		}
	}
	// Sizes below are tracked by subtraction from the one full encoding
	// (each dropped item's own encoding), and measured exactly once per level.
	nodeIDs := make([]string, 0, len(doc.Hierarchy))
	for id := range doc.Hierarchy {
		nodeIDs = append(nodeIDs, id)
	}
	specs.SortIDs(nodeIDs)
	out.Total = len(doc.Journal) + len(nodeIDs)
	var dropped []string
	archive := map[string]string{}
	drop := func(item string, v any) error {
		id := ArchiveID(specID, version, item)
		h, ok := memo.get(id)
		if !ok {
			var err error
			if h, err = ContentHash(v); err != nil {
				return err
			}
			memo.put(id, h)
		}
		dropped = append(dropped, item)
		archive[id] = h
		return nil
	}
	journal := append([]specs.JournalEntry(nil), doc.Journal...)
	sort.Slice(journal, func(i, j int) bool { return journal[i].Seq < journal[j].Seq })
	dropJournal := func(entries []specs.JournalEntry) error {
		if len(entries) == 0 {
			return nil
		}
		return drop(fmt.Sprintf("journal:%d-%d", entries[0].Seq, entries[len(entries)-1].Seq), entries)
	}

	// 1. partial.
	work := doc
	work.Hierarchy = make(map[string]*specs.Node, len(doc.Hierarchy))
	for k, v := range doc.Hierarchy {
		work.Hierarchy[k] = v
	}
	size := (len(fullBytes) + 3) / 4
	if tooBig {
		size = budget + 1 // straight to summary
	}
	cut := 0
	for !tooBig && cut < len(journal) && size > budget {
		size -= tokensOf(journal[cut])
		cut++
	}
	work.Journal = journal[cut:]
	if !tooBig && size > budget {
		var done []*specs.Node
		for _, id := range nodeIDs {
			if n := doc.Hierarchy[id]; n.Status == specs.StatusCompleted && len(n.Metadata) > 0 {
				done = append(done, n)
			}
		}
		sort.SliceStable(done, func(i, j int) bool { return done[i].MetaString("completed_at") < done[j].MetaString("completed_at") })
		var meta []*specs.Node
		for i := 0; i < len(done) && i < maxDroppedNodes && size > budget; i++ {
			size -= tokensOf(done[i].Metadata)
			meta = append(meta, done[i])
		}
		if size <= budget { // worth doing only if it is enough
			for _, n := range meta {
				c := n.Clone()
				c.Metadata = map[string]any{}
				work.Hierarchy[n.ID] = c
			}
		}
	}
	if size <= budget {
		// Exact check, correcting the estimate (separators) by dropping a
		// few more journal entries if needed.
		for {
			exact := tokensOf(map[string]any{"spec": work})
			if exact <= budget || cut >= len(journal) {
				size = exact
				break
			}
			step := max(1, (len(journal)-cut)/20)
			cut = min(len(journal), cut+step)
			work.Journal = journal[cut:]
		}
		if size <= budget {
			if err := dropJournal(journal[:cut]); err != nil {
				return out, err
			}
			for id, n := range work.Hierarchy {
				if n != doc.Hierarchy[id] {
					if err := drop("node:"+id, doc.Hierarchy[id]); err != nil {
						return out, err
					}
				}
			}
			sort.Strings(dropped)
			out.Data, out.Fidelity, out.Tokens, out.Dropped, out.Archive = map[string]any{"spec": work}, core.FidelityPartial, size, dropped, archive
			return out, nil
		}
	}

	// 2. summary: whole phases and the journal are the dropped items.
	dropped, archive = nil, map[string]string{}
	if err := dropJournal(journal); err != nil {
		return out, err
	}
	root := doc.Hierarchy[specs.RootID]
	var phaseIDs []string
	if root != nil {
		phaseIDs = root.Children
	}
	for _, pid := range phaseIDs {
		if err := drop("subtree:"+pid, subtree(doc.Hierarchy, pid)); err != nil {
			return out, err
		}
	}
	out.Dropped, out.Archive = dropped, archive
	// A summary node is about 90 bytes plus its title and ids; skip building
	// it when even that cannot fit.
	estimate := 0
	for _, id := range nodeIDs {
		n := doc.Hierarchy[id]
		estimate += (90 + 2*len(id) + len(n.Title) + len(n.Parent) + 12*len(n.Children)) / 4
	}
	if estimate <= budget*5/4 {
		hier := make(map[string]any, len(nodeIDs))
		for _, id := range nodeIDs {
			n := doc.Hierarchy[id]
			var parent any
			if n.Parent != "" {
				parent = n.Parent
			}
			hier[id] = map[string]any{"type": n.Type, "title": n.Title, "status": n.Status, "parent": parent, "children": nonNilStrings(n.Children)}
		}
		summary := map[string]any{"spec": map[string]any{
			"spec_id": doc.SpecID, "title": doc.Title, "version": doc.Version, "lifecycle": doc.Lifecycle, "status": doc.Status,
			"progress_percentage": doc.ProgressPercentage, "current_phase": doc.CurrentPhase, "hierarchy": hier,
		}}
		if size = tokensOf(summary); size <= budget {
			out.Data, out.Fidelity, out.Tokens = summary, core.FidelitySummary, size
			return out, nil
		}
	}

	// 3. reference_only.
	phases := []map[string]any{}
	for _, id := range phaseIDs {
		if p := doc.Hierarchy[id]; p != nil {
			phases = append(phases, map[string]any{"id": id, "title": p.Title, "status": p.Status,
				"total_tasks": p.TotalTasks, "completed_tasks": p.CompletedTasks})
		}
	}
	ref := map[string]any{
		"spec": map[string]any{
			"spec_id": doc.SpecID, "title": doc.Title, "version": doc.Version, "lifecycle": doc.Lifecycle, "status": doc.Status,
			"progress_percentage": doc.ProgressPercentage, "current_phase": doc.CurrentPhase, "phases": phases,
		},
		"next_calls": []map[string]any{
			{"tool": "task", "args": map[string]any{"action": "hierarchy", "spec_id": doc.SpecID, "max_depth": 2}},
			{"tool": "task", "args": map[string]any{"action": "list", "spec_id": doc.SpecID}},
		},
	}
	out.Data, out.Fidelity, out.Tokens = ref, core.FidelityReferenceOnly, tokensOf(ref)
	return out, nil
}

// subtree collects id and its descendants as {id: node}.
func subtree(h map[string]*specs.Node, id string) map[string]*specs.Node {
	out := map[string]*specs.Node{}
	var walk func(string)
	walk = func(id string) {
		n := h[id]
		if n == nil || out[id] != nil {
			return
		}
		out[id] = n
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(id)
	return out
}

// fidelityMeta reports a degraded answer: content_fidelity, the dropped ids,
// their archive hashes and a CONTENT_TRUNCATED warning.
func fidelityMeta(b budgeted, budget int) []core.MetaOption {
	if b.Fidelity == core.FidelityFull {
		return nil
	}
	msg := fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out (fetch them with research archive-get).", b.Fidelity, budget, len(b.Dropped))
	ctx := map[string]any{"dropped_count": len(b.Dropped), "total_count": b.Total, "reason": "token_budget", "budget_tokens": budget}
	if len(b.Archive) == 0 && len(b.Dropped) > 0 {
		msg = fmt.Sprintf("The answer was reduced to %s fidelity to fit %d tokens; %d items were left out, and their archive ids did not fit either: page through them with the calls in data.next_calls, or read again with a larger max_tokens.", b.Fidelity, budget, len(b.Dropped))
		ctx["archive_ids_omitted"] = true
	}
	return []core.MetaOption{
		core.WithFidelity(b.Fidelity, b.Dropped, b.Archive),
		core.WithWarning(core.WarnContentTruncated, core.SeverityWarning, msg, ctx),
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// hashMemo remembers archive hashes by archive id. An archive id pins a spec
// version, whose content never changes, so an entry never goes stale; the
// memo only saves re-hashing a big spec on every read. Safe for concurrent
// use; a nil memo remembers nothing.
type hashMemo struct {
	mu sync.Mutex
	m  map[string]string
}

// maxMemoHashes bounds the memo; past it, it starts over.
const maxMemoHashes = 20_000

func (h *hashMemo) get(id string) (string, bool) {
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[id]
	return v, ok
}

func (h *hashMemo) put(id, hash string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil || len(h.m) >= maxMemoHashes {
		h.m = map[string]string{}
	}
	h.m[id] = hash
}

// docDegrader is spec get's Degrader: budgetDocument fits the document's
// data into a data budget; when the whole envelope (meta included: dropped
// ids, archive hashes, the warning) is still over the answer budget, it
// runs again with the data budget lowered by the overshoot, until the
// answer fits or reference_only, the smallest level, does not.
type docDegrader struct {
	doc        specs.Document
	memo       *hashMemo
	dataBudget int
	// bare answers with the document itself rather than {spec, version}
	// (the spec resource).
	bare bool
}

// maxDocFitRounds bounds the re-runs of budgetDocument.
const maxDocFitRounds = 8

func (g *docDegrader) Degrade(f Fit) (any, []core.MetaOption, bool, error) {
	budget := min(g.dataBudget, f.Budget)
	for range maxDocFitRounds {
		b, err := budgetDocument(g.doc, budget, g.memo)
		if err != nil {
			return nil, nil, false, err
		}
		var data any = b.Data
		if g.bare {
			m, ok := b.Data["spec"].(map[string]any)
			if ok {
				m = maps.Clone(m)
			} else {
				m = structMap(b.Data["spec"])
			}
			if nc, ok := b.Data["next_calls"]; ok {
				m["next_calls"] = nc
			}
			data = m
		} else {
			b.Data["version"] = g.doc.Version
		}
		meta := fidelityMeta(b, f.Budget)
		t := f.Measure(data, meta)
		if t <= f.Budget {
			return data, meta, true, nil
		}
		if b.Fidelity == core.FidelityReferenceOnly || budget <= 1 {
			// The smallest level does not fit with its archive hashes:
			// name the dropped items without them (the data's next_calls
			// still page through the rest).
			b.Archive = nil
			meta = fidelityMeta(b, f.Budget)
			if f.Measure(data, meta) <= f.Budget {
				return data, meta, true, nil
			}
			return nil, nil, false, nil
		}
		budget = max(1, budget-(t-f.Budget)-f.Budget/100-8)
	}
	return nil, nil, false, nil
}
