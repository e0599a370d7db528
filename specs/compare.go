package specs

import (
	"context"
	"sort"
	"strconv"
)

// Comparison is a node-level diff between two sides, each pinned to its
// spec and version, with the nodes each side had, so that a caller can
// archive both sides of a modified node.
type Comparison struct {
	Target     string // the other spec compared with; empty for versions
	Diff       SpecDiff
	OldSpec    string
	OldVersion int64
	OldNodes   map[string]*Node
	NewSpec    string
	NewVersion int64
	NewNodes   map[string]*Node
}

// FieldError is err about the argument Field, reading spec SpecID (for
// example diff's target spec): the tools layer reports it under Field.
type FieldError struct {
	Field  string
	SpecID string
	Err    error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the error about the field.
func (e *FieldError) Unwrap() error { return e.Err }

// CompareSpec diffs spec specID. target is a version number or another
// spec id; without target, version is the stored version to compare the
// current spec with (0: the version before the current one). A version
// below 1 compares with version 1.
// Errors: SPEC_NOT_FOUND (a *FieldError with Field "target" for the other
// spec), VERSION_NOT_FOUND.
func CompareSpec(ctx context.Context, repo Repo, specID, target string, version int64) (Comparison, error) {
	given := version > 0
	if n, err := strconv.ParseInt(target, 10, 64); err == nil && target != "" {
		version, target, given = n, "", true
	}
	if target != "" {
		return compareSpecs(ctx, repo, specID, target)
	}
	if !given {
		err := repo.ReadSpec(ctx, specID, func(sp *Spec, _ JournalReader) error {
			version = sp.Header.Version - 1
			return nil
		})
		if err != nil {
			return Comparison{}, err
		}
	}
	version = max(version, 1)
	var c Comparison
	err := repo.ReadVersion(ctx, specID, version, func(v VersionView) error {
		oldNodes, newNodes := map[string]*Node{}, map[string]*Node{}
		for _, id := range v.ChangedSince() {
			oldNodes[id] = v.NodeAt(id)
			newNodes[id] = v.CurrentNode(id)
		}
		diff := Diff(oldNodes, newNodes)
		diff.Header = DiffHeader(v.VersionHeader(), v.CurrentHeader())
		c = Comparison{Diff: diff, OldSpec: specID, OldVersion: version, OldNodes: oldNodes,
			NewSpec: specID, NewVersion: v.CurrentHeader().Version, NewNodes: newNodes}
		return nil
	})
	return c, err
}

// compareSpecs diffs the current documents of two specs.
func compareSpecs(ctx context.Context, repo Repo, specID, target string) (Comparison, error) {
	var a, b Document
	if err := repo.ReadSpec(ctx, specID, func(sp *Spec, _ JournalReader) error { a = sp.Document(); return nil }); err != nil {
		return Comparison{}, err
	}
	if err := repo.ReadSpec(ctx, target, func(sp *Spec, _ JournalReader) error { b = sp.Document(); return nil }); err != nil {
		return Comparison{}, &FieldError{Field: "target", SpecID: target, Err: err}
	}
	return Comparison{Target: target, Diff: DiffDocuments(a, b), OldSpec: specID, OldVersion: a.Version, OldNodes: a.Hierarchy,
		NewSpec: target, NewVersion: b.Version, NewNodes: b.Hierarchy}, nil
}

// Analyzed names the spec and version an analysis read.
type Analyzed struct {
	SpecID  string `json:"spec_id"`
	Version int64  `json:"version"`
}

func analyzed(s *Spec) Analyzed { return Analyzed{SpecID: s.Header.SpecID, Version: s.Header.Version} }

// StatsResult is spec stats' answer.
type StatsResult struct {
	SpecStats
	Version int64 `json:"version"`
}

// StatsOf is the spec's statistics at its version.
func StatsOf(s *Spec) StatsResult { return StatsResult{SpecStats: Stats(s), Version: s.Header.Version} }

// DepsResult is spec analyze-deps' answer.
type DepsResult struct {
	Analyzed
	DepsAnalysis
}

// DepsAnalysisOf is AnalyzeDeps of the spec, with the spec and version read.
func DepsAnalysisOf(s *Spec, bottleneckThreshold int) DepsResult {
	return DepsResult{Analyzed: analyzed(s), DepsAnalysis: AnalyzeDeps(s, bottleneckThreshold)}
}

// CompletenessResult is spec completeness-check's answer.
type CompletenessResult struct {
	Analyzed
	CompletenessReport
}

// CompletenessOf is Completeness of the spec, with the spec and version
// read.
func CompletenessOf(s *Spec) CompletenessResult {
	return CompletenessResult{Analyzed: analyzed(s), CompletenessReport: Completeness(s)}
}

// DuplicatesResult is spec duplicate-detection's answer.
type DuplicatesResult struct {
	Analyzed
	DuplicateReport
}

// DuplicatesOf is DuplicateDetection over the spec, with the spec and
// version read.
func DuplicatesOf(s *Spec, o DuplicateOptions) DuplicatesResult {
	return DuplicatesResult{Analyzed: analyzed(s), DuplicateReport: DuplicateDetection(s, o)}
}

// ModifiedPage is one page of c's modified nodes, which are in node order
// (CompareIDs): those after the node id after ("" from the first), at most
// limit of them (0: all); more says whether modified nodes follow the page.
func (c Comparison) ModifiedPage(after string, limit int) (page []NodeDiff, more bool) {
	page = c.Diff.Modified
	if after != "" {
		i := sort.Search(len(page), func(i int) bool { return CompareIDs(page[i].ID, after) > 0 })
		page = page[i:]
	}
	if limit > 0 && len(page) > limit {
		return page[:limit], true
	}
	return page, false
}
