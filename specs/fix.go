package specs

import (
	"slices"
	"strings"

	"github.com/specd/specd/core"
)

// FixOptions tunes Fix.
type FixOptions struct {
	// Clock supplies "now" for missing timestamps and phase completion
	// (nil: time.Now).
	Clock core.Clock
	// Only restricts the fixes to these fix ids or codes (empty: all).
	Only []string
}

// AppliedFix is one fix Fix applied.
type AppliedFix struct {
	FixID       string `json:"fix_id"`
	Code        string `json:"code"`
	Location    string `json:"location"`
	NodeID      string `json:"node_id,omitempty"`
	Description string `json:"description"`
}

// SkippedFix is a diagnostic left after Fix, with the reason.
type SkippedFix struct {
	FixID    string   `json:"fix_id,omitempty"`
	Code     string   `json:"code"`
	Location string   `json:"location"`
	NodeID   string   `json:"node_id,omitempty"`
	Severity Severity `json:"severity"`
	Reason   string   `json:"reason"`
}

// FixResult is the outcome of Fix: the repaired copy, what was applied, what
// remains (skipped, with reasons) and the validation report of the copy.
type FixResult struct {
	Document *Document        `json:"-"`
	Applied  []AppliedFix     `json:"applied"`
	Skipped  []SkippedFix     `json:"skipped"`
	Report   ValidationReport `json:"report"`
}

// Fix applies every auto-fixable diagnostic of Validate to a deep copy of
// doc (doc itself is never modified, so a dry run is simply not storing the
// result): it recounts, aligns parents and children, attaches orphans to
// the parent their id names (else a phase to spec-root and any other node
// to the first pending or in-progress phase, made when none is open:
// foundry's own fix puts them under spec-root, where next never looks),
// moves misplaced nodes back under the parent their id names (a subtask
// foundry reset to spec-root; else, for a non-phase node under spec-root,
// into that phase) and nested phases under the root, adds
// missing fields (type task when the id names none), syncs reverse
// dependency edges, drops dangling and self references, maps status, type,
// verification-type, category and complexity synonyms (todo, done,
// inprogress, complete, sub-task, auto/test → run-tests, …), moves the
// legacy details field to description, and normalises timestamps. It never
// invents a file_path. Fixes run in rounds (a fix can reveal another issue)
// until nothing changes. Applied lists each fix once, by fix id; Skipped
// lists the diagnostics still present afterwards, with why.
func Fix(doc *Document, opts FixOptions) FixResult {
	d := fixCopy(doc)
	res := FixResult{Document: d, Applied: []AppliedFix{}, Skipped: []SkippedFix{}}
	f := fixRun{d: d, opts: opts, res: &res, done: map[string]bool{}}
	for round := 0; round < maxFixRounds; round++ {
		if !f.round() {
			break
		}
	}
	issues := checkIssues(d, opts.Clock)
	res.Report = report(issues)
	for _, is := range issues {
		res.Skipped = append(res.Skipped, SkippedFix{FixID: is.FixID, Code: is.Code, Location: is.Location, NodeID: is.NodeID,
			Severity: is.Severity, Reason: opts.skipReason(is)})
	}
	return res
}

// fixCopy is the document Fix repairs: a deep copy of doc, or for no
// document an empty one with every top-level field absent.
func fixCopy(doc *Document) *Document {
	if doc == nil {
		return &Document{absent: dSpecID | dTitle | dGenerated | dLastUpdated | dMetadata | dHierarchy}
	}
	return doc.Clone()
}

// checkIssues runs the checker over d and returns its issues.
func checkIssues(d *Document, clock core.Clock) []issue {
	c := &checker{d: d, clock: clock, flagged: map[string]bool{}}
	c.run()
	return c.issues
}

// fixRun is one Fix call's state: the document, which fix ids res.Applied
// lists already.
type fixRun struct {
	d    *Document
	opts FixOptions
	res  *FixResult
	done map[string]bool
}

// round applies every selected fix of one check of the document (a fix
// group once) and reports whether any changed it.
func (f *fixRun) round() bool {
	changed := false
	groups := map[string]bool{}
	for _, is := range checkIssues(f.d, f.opts.Clock) {
		if !f.opts.selects(is) {
			continue
		}
		ran, did := applyFix(f.d, is, groups)
		if did {
			changed = true
		}
		if ran {
			f.applied(is)
		}
	}
	return changed
}

// applyFix runs is's fix on d unless its group already ran this round:
// ran says whether it counts as applied (its group ran, or its fix changed
// d), changed whether it changed d now.
func applyFix(d *Document, is issue, groups map[string]bool) (ran, changed bool) {
	if groups[is.group] {
		return true, false
	}
	if !is.fix(d) {
		return false, false
	}
	if is.group != "" {
		groups[is.group] = true
	}
	return true, true
}

// applied lists is in res.Applied, once per fix id.
func (f *fixRun) applied(is issue) {
	if f.done[is.FixID] {
		return
	}
	f.done[is.FixID] = true
	f.res.Applied = append(f.res.Applied, AppliedFix{FixID: is.FixID, Code: is.Code, Location: is.Location, NodeID: is.NodeID,
		Description: is.SuggestedFix})
}

// selects reports whether Fix applies is: it has a fix, and Only is empty
// or names its fix id or code.
func (o FixOptions) selects(is issue) bool {
	return is.fix != nil && o.allows(is)
}

// allows reports whether Only is empty or names is's fix id or code.
func (o FixOptions) allows(is issue) bool {
	return len(o.Only) == 0 || slices.ContainsFunc(o.Only, func(id string) bool { return id == is.FixID || id == is.Code })
}

// skipReason says why is is still there after Fix.
func (o FixOptions) skipReason(is issue) string {
	switch {
	case is.fix != nil && !o.allows(is):
		return "not selected by Only"
	case is.fix != nil:
		return "the fix did not resolve it"
	case is.SuggestedFix == "":
		return "not auto-fixable"
	}
	return strings.TrimSpace("not auto-fixable: " + is.SuggestedFix)
}

// VerificationTypeFixes are the diagnostic codes task fix-verification-types
// applies (FixOptions.Only).
var VerificationTypeFixes = []string{"MISSING_VERIFICATION_TYPE", "INVALID_VERIFICATION_TYPE"}
