package specs

import (
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
// the parent their id names (else to spec-root, as foundry's own fix does),
// moves misplaced nodes back under the parent their id names (a subtask
// foundry reset to spec-root) and nested phases under the root, adds
// missing fields (type task when the id names none), syncs reverse
// dependency edges, drops dangling and self references, maps status, type,
// verification-type, category and complexity synonyms (todo, done,
// inprogress, complete, sub-task, auto/test → run-tests, …), moves the
// legacy details field to description, and normalises timestamps. It never
// invents a file_path. Fixes run in rounds (a fix can reveal another issue)
// until nothing changes. Applied lists each fix once, by fix id; Skipped
// lists the diagnostics still present afterwards, with why.
func Fix(doc *Document, opts FixOptions) FixResult {
	var d *Document
	if doc == nil {
		d = &Document{absent: dSpecID | dTitle | dGenerated | dLastUpdated | dMetadata | dHierarchy}
	} else {
		d = doc.Clone()
	}
	res := FixResult{Document: d, Applied: []AppliedFix{}, Skipped: []SkippedFix{}}
	allowed := func(is issue) bool {
		if len(opts.Only) == 0 {
			return true
		}
		for _, o := range opts.Only {
			if o == is.FixID || o == is.Code {
				return true
			}
		}
		return false
	}
	done := map[string]bool{}
	for round := 0; round < maxFixRounds; round++ {
		c := &checker{d: d, clock: opts.Clock, flagged: map[string]bool{}}
		c.run()
		changed := false
		groups := map[string]bool{}
		for _, is := range c.issues {
			if is.fix == nil || !allowed(is) {
				continue
			}
			ran := false
			if is.group != "" && groups[is.group] {
				ran = true
			} else if is.fix(d) {
				ran = true
				changed = true
				if is.group != "" {
					groups[is.group] = true
				}
			}
			if ran && !done[is.FixID] {
				done[is.FixID] = true
				res.Applied = append(res.Applied, AppliedFix{FixID: is.FixID, Code: is.Code, Location: is.Location, NodeID: is.NodeID,
					Description: is.SuggestedFix})
			}
		}
		if !changed {
			break
		}
	}
	c := &checker{d: d, clock: opts.Clock, flagged: map[string]bool{}}
	c.run()
	res.Report = report(c.issues)
	for _, is := range c.issues {
		reason := "not auto-fixable: " + is.SuggestedFix
		switch {
		case is.fix != nil && !allowed(is):
			reason = "not selected by Only"
		case is.fix != nil:
			reason = "the fix did not resolve it"
		case is.SuggestedFix == "":
			reason = "not auto-fixable"
		}
		res.Skipped = append(res.Skipped, SkippedFix{FixID: is.FixID, Code: is.Code, Location: is.Location, NodeID: is.NodeID,
			Severity: is.Severity, Reason: strings.TrimSpace(reason)})
	}
	return res
}

// VerificationTypeFixes are the diagnostic codes task fix-verification-types
// applies (FixOptions.Only).
var VerificationTypeFixes = []string{"MISSING_VERIFICATION_TYPE", "INVALID_VERIFICATION_TYPE"}
