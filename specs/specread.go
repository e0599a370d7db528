package specs

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/specd/specd/core"
)

// This file holds the whole-spec services behind spec find, get, history,
// validate and fix: reads over the Repo port and the document-level fix.

// MaxFindMatches bounds FindSpecs' matches (a longer query narrows them).
const MaxFindMatches = 100

// FindSpecs lists the specs whose id or title contains query (compared in
// lower case), in id order, at most MaxFindMatches, reading the listing
// pageSize rows at a time.
func FindSpecs(ctx context.Context, repo Repo, query string, pageSize int) ([]RepoSummary, error) {
	q := strings.ToLower(query)
	matches := []RepoSummary{}
	after := ""
	for {
		rows, next, err := repo.ListSpecs(ctx, "all", after, pageSize)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if summaryMatches(row, q) {
				matches = append(matches, row)
			}
		}
		if next == "" || len(matches) >= MaxFindMatches {
			break
		}
		after = next
	}
	if len(matches) > MaxFindMatches {
		matches = matches[:MaxFindMatches]
	}
	return matches, nil
}

// summaryMatches reports whether row's id or title contains q, a lower-case
// query, in lower case.
func summaryMatches(row RepoSummary, q string) bool {
	return strings.Contains(strings.ToLower(row.SpecID), q) || strings.Contains(strings.ToLower(row.Title), q)
}

// ReadDocument reads spec specID as a document — the stored version
// version, or the current spec when version is 0 — with the newest
// journalMax journal entries of the current spec, oldest first.
// SPEC_NOT_FOUND, VERSION_NOT_FOUND.
func ReadDocument(ctx context.Context, repo Repo, specID string, version int64, journalMax int) (Document, error) {
	var doc Document
	if version > 0 {
		if err := repo.ReadVersion(ctx, specID, version, func(vv VersionView) error { doc = vv.Document(); return nil }); err != nil {
			return doc, err
		}
	}
	err := repo.ReadSpec(ctx, specID, func(sp *Spec, j JournalReader) error {
		if version <= 0 {
			doc = sp.Document()
		}
		entries, _, err := j.Entries(0, journalMax, nil)
		doc.Journal = entries
		return err
	})
	sort.Slice(doc.Journal, func(i, j int) bool { return doc.Journal[i].Seq < doc.Journal[j].Seq })
	return doc, err
}

// HistoryPage is one page of a spec's stored versions, newest first, with
// the spec's revision notes.
type HistoryPage struct {
	Versions  []RepoVersion
	Revisions []Revision // never nil
	More      bool       // older versions follow
	Total     int        // every version the history lists (Repo.HistoryCount)
}

// ReadHistory pages spec specID's versions below before (0: from the
// newest), limit at a time. SPEC_NOT_FOUND.
func ReadHistory(ctx context.Context, repo Repo, specID string, before int64, limit int) (HistoryPage, error) {
	versions, more, err := repo.History(ctx, specID, before, limit)
	if err != nil {
		return HistoryPage{}, err
	}
	total, err := repo.HistoryCount(ctx, specID)
	if err != nil {
		return HistoryPage{}, err
	}
	p := HistoryPage{Versions: versions, More: more, Total: total, Revisions: []Revision{}}
	_ = repo.ReadSpec(ctx, specID, func(sp *Spec, _ JournalReader) error {
		if r := Revisions(sp); r != nil {
			p.Revisions = r
		}
		return nil
	})
	return p, nil
}

// ValidateSpec validates the spec's document.
func ValidateSpec(sp *Spec) ValidationReport {
	doc := sp.Document()
	return Validate(&doc)
}

// ValidateSpecContext is ValidateSpec under ctx (ValidateContext): it
// stops with ctx's error once ctx is done.
func ValidateSpecContext(ctx context.Context, sp *Spec) (ValidationReport, error) {
	doc := sp.Document()
	if err := ctx.Err(); err != nil {
		return ValidationReport{}, err
	}
	return ValidateContext(ctx, &doc)
}

// FixSpec applies every auto-fix (Fix) to the spec's document and, when
// any applied, makes the spec equal to the fixed document.
func FixSpec(sp *Spec, clock core.Clock) FixResult { return FixSpecWith(sp, FixOptions{Clock: clock}) }

// FixSpecWith is FixSpec with options (o.Only limits the fixes applied,
// e.g. VerificationTypeFixes).
func FixSpecWith(sp *Spec, o FixOptions) FixResult {
	doc := sp.Document()
	res := Fix(&doc, o)
	if len(res.Applied) > 0 {
		ApplyDocument(sp, res.Document)
	}
	return res
}

// ApplyDocument makes the view equal to doc, editing only the nodes that
// differ, and recomputes the rollups. The view keeps copies of what it
// takes from doc: editing doc afterwards does not change the view.
func ApplyDocument(sp *Spec, doc *Document) {
	want := map[string]bool{}
	for id, n := range doc.Hierarchy {
		if n == nil {
			continue
		}
		want[id] = true
		old := sp.Node(id)
		if old == nil || !sameJSON(old, n) {
			c := n.Clone()
			c.ID = id
			sp.Put(c)
		}
	}
	for _, id := range sp.IDs() {
		if !want[id] {
			sp.Delete(id)
		}
	}
	h := sp.Header
	// The view owns a copy of the metadata: the caller may go on editing
	// doc (FixResult.Document), and the header may be shared (ShareHeader).
	h.Title, h.Metadata, h.Status, h.ProgressPercentage, h.CurrentPhase = doc.Title, cloneMap(doc.Metadata), doc.Status, doc.ProgressPercentage, doc.CurrentPhase
	h.Generated, h.LastUpdated = doc.Generated, doc.LastUpdated
	sp.Header = h
	// Rebuild the store's rollup summaries of the nodes just replaced.
	RecomputeAll(sp)
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
