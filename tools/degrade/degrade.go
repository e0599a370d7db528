// Package degrade fits a spec document into a token budget (README "Big specs
// and big answers"): the application step between the tools, which measure
// whole answers, and the specs domain, which owns the document. It degrades in
// the fixed order full, partial, summary, reference_only — and names every item
// it leaves out so that research archive-get can serve it by hash.
//
// It imports no transport: the caller hashes dropped items (Hasher); the
// usual one is HashMemo.Hasher, which hashes with jcs.Hash and names items
// with the archive id format research owns (research.SpecArchiveID).
package degrade

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/specd/specd/core"
	"github.com/specd/specd/specs"
)

// Hasher names and hashes one dropped item. item is the part of an archive
// id after the "/":
//
//	node:<id>        one node's full JSON (content: *specs.Node)
//	subtree:<id>     {id: node} for the node and every descendant (specs.Subtree)
//	journal:<a>-<b>  the journal entries with seq a..b, oldest first
//
// It returns the item's archive id and the hash research archive-get
// checks it against.
type Hasher func(item string, content any) (archiveID, hash string, err error)

// Answer is the degraded document as an answer's data: Spec is a
// specs.Document (full and partial), a Summary or a Reference; NextCalls,
// at reference_only, are the calls that read what it left out.
type Answer struct {
	Spec      any             `json:"spec"`
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

// Summary is the summary level: every node shrunk to its place in the tree.
type Summary struct {
	Header
	Hierarchy map[string]SummaryNode `json:"hierarchy"`
}

// SummaryNode is one node at summary fidelity; Parent is null at the root.
type SummaryNode struct {
	Type     specs.NodeType `json:"type"`
	Title    string         `json:"title"`
	Status   specs.Status   `json:"status"`
	Parent   *string        `json:"parent"`
	Children []string       `json:"children"`
}

// Reference is the reference_only level: the phases with their counts.
type Reference struct {
	Header
	Phases []PhaseRef `json:"phases"`
}

// Header is the part of the document every level keeps.
type Header struct {
	SpecID             string          `json:"spec_id"`
	Title              string          `json:"title"`
	Version            int64           `json:"version"`
	Lifecycle          specs.Lifecycle `json:"lifecycle"`
	Status             specs.Status    `json:"status"`
	ProgressPercentage int             `json:"progress_percentage"`
	CurrentPhase       string          `json:"current_phase"`
}

// PhaseRef is one phase at reference_only fidelity.
type PhaseRef struct {
	ID             string       `json:"id"`
	Title          string       `json:"title"`
	Status         specs.Status `json:"status"`
	TotalTasks     int          `json:"total_tasks"`
	CompletedTasks int          `json:"completed_tasks"`
}

// Result is a document fitted to a budget.
type Result struct {
	Answer   Answer
	Fidelity string            // core.FidelityFull … core.FidelityReferenceOnly
	Dropped  []string          // items left out (Hasher's item names), sorted at partial
	Archive  map[string]string // archive id → hash of each dropped item
	Total    int               // items considered for dropping (journal entries + nodes)
	Tokens   int               // tokens of Answer
}

// minNodeBytes is a lower bound of one node's encoding in a full document
// (type, title, status, parent, children, counts, metadata, dependencies).
const minNodeBytes = 150

// MaxDroppedNodes bounds how many nodes the partial level may drop one by
// one before the summary level (which drops whole phases) takes over, so
// the metadata listing dropped items stays small.
const MaxDroppedNodes = 50

// Fit fits doc (with its journal) into budget tokens (compact JSON bytes / 4),
// degrading in this fixed order:
//
//  1. partial: drop the oldest journal entries (one journal range item),
//     then the metadata of completed nodes, oldest completion first (one
//     node item each, at most MaxDroppedNodes);
//  2. summary: every node shrinks to a SummaryNode; each phase's subtree
//     and the journal are the dropped items;
//  3. reference_only: phases with their counts only, plus the calls that
//     page through the rest (same dropped items as summary).
//
// reference_only is returned even when it is over the budget (the caller
// decides what then). The only errors are the Hasher's and encoding's.
func Fit(doc specs.Document, budget int, hash Hasher) (Result, error) {
	f := newFitter(doc, budget, hash)
	// Every node costs at least minNodeBytes in the full and partial forms;
	// when even that cannot fit, skip encoding the whole document.
	if len(doc.Hierarchy)*minNodeBytes/4 <= budget {
		full, err := json.Marshal(Answer{Spec: doc})
		if err != nil {
			return Result{}, err
		}
		size := tokens(len(full))
		if size <= budget {
			return Result{Answer: Answer{Spec: doc}, Fidelity: core.FidelityFull, Archive: map[string]string{}, Tokens: size}, nil
		}
		if r, ok, err := f.partial(size); ok || err != nil {
			return r, err
		}
	}
	return f.summaryOrReference()
}

// fitter holds one Fit's inputs and the items dropped so far.
type fitter struct {
	doc     specs.Document
	budget  int
	hash    Hasher
	nodeIDs []string             // natural id order
	journal []specs.JournalEntry // by seq
	dropped []string
	archive map[string]string
}

func newFitter(doc specs.Document, budget int, hash Hasher) *fitter {
	nodeIDs := make([]string, 0, len(doc.Hierarchy))
	for id := range doc.Hierarchy {
		nodeIDs = append(nodeIDs, id)
	}
	specs.SortIDs(nodeIDs)
	journal := append([]specs.JournalEntry(nil), doc.Journal...)
	sort.Slice(journal, func(i, j int) bool { return journal[i].Seq < journal[j].Seq })
	return &fitter{doc: doc, budget: budget, hash: hash, nodeIDs: nodeIDs, journal: journal, archive: map[string]string{}}
}

func (f *fitter) result(a Answer, fidelity string, size int) Result {
	return Result{Answer: a, Fidelity: fidelity, Dropped: f.dropped, Archive: f.archive, Total: len(f.doc.Journal) + len(f.nodeIDs), Tokens: size}
}

// drop records item as left out, with its archive id and hash.
func (f *fitter) drop(item string, content any) error {
	id, h, err := f.hash(item, content)
	if err != nil {
		return err
	}
	f.dropped = append(f.dropped, item)
	f.archive[id] = h
	return nil
}

// dropJournal records a journal range (nothing when empty).
func (f *fitter) dropJournal(entries []specs.JournalEntry) error {
	if len(entries) == 0 {
		return nil
	}
	return f.drop(fmt.Sprintf("journal:%d-%d", entries[0].Seq, entries[len(entries)-1].Seq), entries)
}

// partial tries level 1 from the full document's size (tokens). Sizes are
// tracked by subtraction (each dropped item's own encoding) and measured
// exactly once; ok is false when partial cannot fit.
func (f *fitter) partial(size int) (Result, bool, error) {
	work := f.doc
	work.Hierarchy = make(map[string]*specs.Node, len(f.doc.Hierarchy))
	for k, v := range f.doc.Hierarchy {
		work.Hierarchy[k] = v
	}
	cut, size := f.journalCut(size)
	work.Journal = f.journal[cut:]
	if size > f.budget {
		size = f.stripCompleted(work.Hierarchy, size)
	}
	if size > f.budget {
		return Result{}, false, nil
	}
	cut, size = f.exactFit(&work, cut)
	if size > f.budget {
		return Result{}, false, nil
	}
	if err := f.dropJournal(f.journal[:cut]); err != nil {
		return Result{}, false, err
	}
	for id, n := range work.Hierarchy {
		if n != f.doc.Hierarchy[id] {
			if err := f.drop("node:"+id, f.doc.Hierarchy[id]); err != nil {
				return Result{}, false, err
			}
		}
	}
	sort.Strings(f.dropped)
	return f.result(Answer{Spec: work}, core.FidelityPartial, size), true, nil
}

// journalCut drops the oldest journal entries while size is over the
// budget: how many, and the size left.
func (f *fitter) journalCut(size int) (int, int) {
	cut := 0
	for cut < len(f.journal) && size > f.budget {
		size -= tokensOf(f.journal[cut])
		cut++
	}
	return cut, size
}

// stripCompleted empties the metadata of completed nodes in hier, oldest
// completion first (at most MaxDroppedNodes), but only when that is enough
// to fit; it returns the size either way (estimated).
func (f *fitter) stripCompleted(hier map[string]*specs.Node, size int) int {
	var done []*specs.Node
	for _, id := range f.nodeIDs {
		if n := f.doc.Hierarchy[id]; n.Status == specs.StatusCompleted && len(n.Metadata) > 0 {
			done = append(done, n)
		}
	}
	sort.SliceStable(done, func(i, j int) bool { return done[i].MetaString("completed_at") < done[j].MetaString("completed_at") })
	var meta []*specs.Node
	for i := 0; i < len(done) && i < MaxDroppedNodes && size > f.budget; i++ {
		size -= tokensOf(done[i].Metadata)
		meta = append(meta, done[i])
	}
	if size <= f.budget { // worth doing only if it is enough
		for _, n := range meta {
			c := n.Clone()
			c.Metadata = map[string]any{}
			hier[n.ID] = c
		}
	}
	return size
}

// exactFit measures work exactly, correcting the estimate (separators) by
// dropping a few more journal entries if needed: the final cut and size.
func (f *fitter) exactFit(work *specs.Document, cut int) (int, int) {
	for {
		exact := tokensOf(Answer{Spec: *work})
		if exact <= f.budget || cut >= len(f.journal) {
			return cut, exact
		}
		step := max(1, (len(f.journal)-cut)/20)
		cut = min(len(f.journal), cut+step)
		work.Journal = f.journal[cut:]
	}
}

// summaryOrReference is levels 2 and 3: whole phases and the journal are
// the dropped items of both.
func (f *fitter) summaryOrReference() (Result, error) {
	f.dropped, f.archive = nil, map[string]string{}
	if err := f.dropJournal(f.journal); err != nil {
		return Result{}, err
	}
	phaseIDs := f.phaseIDs()
	for _, pid := range phaseIDs {
		if err := f.drop("subtree:"+pid, specs.Subtree(specs.NodeIn(f.doc.Hierarchy), pid)); err != nil {
			return Result{}, err
		}
	}
	if f.summaryEstimate() <= f.budget*5/4 {
		a := Answer{Spec: f.summary()}
		if size := tokensOf(a); size <= f.budget {
			return f.result(a, core.FidelitySummary, size), nil
		}
	}
	a := f.reference(phaseIDs)
	return f.result(a, core.FidelityReferenceOnly, tokensOf(a)), nil
}

func (f *fitter) phaseIDs() []string {
	if root := f.doc.Hierarchy[specs.RootID]; root != nil {
		return root.Children.Slice()
	}
	return nil
}

// summaryEstimate is a lower-bound guess of the summary's tokens (about 90
// bytes a node plus its title and ids), to skip building it when even that
// cannot fit.
func (f *fitter) summaryEstimate() int {
	estimate := 0
	for _, id := range f.nodeIDs {
		n := f.doc.Hierarchy[id]
		estimate += (90 + 2*len(id) + len(n.Title) + len(n.Parent) + 12*n.Children.Len()) / 4
	}
	return estimate
}

func (f *fitter) header() Header {
	d := f.doc
	return Header{SpecID: d.SpecID, Title: d.Title, Version: d.Version, Lifecycle: d.Lifecycle, Status: d.Status,
		ProgressPercentage: d.ProgressPercentage, CurrentPhase: d.CurrentPhase}
}

func (f *fitter) summary() Summary {
	hier := make(map[string]SummaryNode, len(f.nodeIDs))
	for _, id := range f.nodeIDs {
		n := f.doc.Hierarchy[id]
		var parent *string
		if n.Parent != "" {
			parent = &n.Parent
		}
		children := n.Children.Slice()
		if children == nil {
			children = []string{}
		}
		hier[id] = SummaryNode{Type: n.Type, Title: n.Title, Status: n.Status, Parent: parent, Children: children}
	}
	return Summary{Header: f.header(), Hierarchy: hier}
}

func (f *fitter) reference(phaseIDs []string) Answer {
	phases := []PhaseRef{}
	for _, id := range phaseIDs {
		if p := f.doc.Hierarchy[id]; p != nil {
			phases = append(phases, PhaseRef{ID: id, Title: p.Title, Status: p.Status, TotalTasks: p.TotalTasks, CompletedTasks: p.CompletedTasks})
		}
	}
	return Answer{
		Spec: Reference{Header: f.header(), Phases: phases},
		NextCalls: []core.NextCall{
			{Tool: "task", Args: map[string]any{"action": "hierarchy", "spec_id": f.doc.SpecID, "max_depth": 2}},
			{Tool: "task", Args: map[string]any{"action": "list", "spec_id": f.doc.SpecID}},
		},
	}
}

// tokensOf is the answer budget's token estimate: bytes of compact JSON / 4.
func tokensOf(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return tokens(len(b))
}

func tokens(n int) int { return (n + 3) / 4 }
