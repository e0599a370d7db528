package specs

import (
	"regexp"
	"strings"

	"github.com/specd/specd/core/errcode"
)

// Find-and-replace limits.
const (
	MaxPatternLength = 256
	MaxReplacements  = 1000
	maxSamples       = 10
)

// FindReplaceInput describes a spec-wide find and replace.
type FindReplaceInput struct {
	Find    string
	Replace string // with Regex, $1 / ${name} expand groups
	Regex   bool
	Scope   string // all (default): titles and descriptions | titles | descriptions
	// IgnoreCase matches Find in any letter case (foundry-mcp's
	// case_sensitive: false); a literal Replace is then inserted as is.
	IgnoreCase bool
}

// FindReplaceSample shows one changed field.
type FindReplaceSample struct {
	NodeID string `json:"node_id"` // "" for the spec's own title/description
	Field  string `json:"field"`   // title | description
	Before string `json:"before"`
	After  string `json:"after"`
}

// FindReplaceResult reports a find and replace.
type FindReplaceResult struct {
	Replacements  int                 `json:"replacements"`
	FieldsChanged int                 `json:"fields_changed"`
	NodesChanged  []string            `json:"nodes_changed"`
	Samples       []FindReplaceSample `json:"samples"`
}

type frTarget struct {
	nodeID, field, value string
}

// FindReplace replaces Find (a literal, or a Go RE2 regular expression of at
// most 256 characters) in the spec's and every node's title and/or
// metadata.description, as Scope says; with IgnoreCase in any letter case
// (case-sensitive by default, as in foundry-mcp). It is all-or-nothing: when the
// replacements would exceed 1000 or blank a title, nothing changes. It reads
// every node and edits only the nodes that change. Samples holds up to 10
// changed fields.
//
// Errors: MISSING_REQUIRED (find), INVALID_FORMAT (scope),
// INVALID_REGEX_PATTERN (too long or does not compile), VALIDATION_ERROR
// (more than 1000 replacements: details.replacements; a title would become
// blank).
func FindReplace(s *Spec, in FindReplaceInput) (res FindReplaceResult, err error) {
	defer s.mutate(&err)()
	res.NodesChanged, res.Samples = []string{}, []FindReplaceSample{}
	scope, err := findReplaceScope(in)
	if err != nil {
		return res, err
	}
	m, err := newFindMatcher(in)
	if err != nil {
		return res, err
	}
	changes, n, err := planFindReplace(findReplaceTargets(s, scope), m)
	if err != nil {
		return res, err
	}
	res.Replacements = n
	applyFindReplace(s, changes, &res)
	return res, nil
}

// findReplaceScope checks the input before anything is read, in this order:
// Find is not empty (MISSING_REQUIRED), Scope is all, titles or descriptions
// ("" means all; INVALID_FORMAT with received and allowed), and Find is at
// most MaxPatternLength runes (INVALID_REGEX_PATTERN with Regex, else
// INVALID_FORMAT; details.max_length). It returns the scope to use.
func findReplaceScope(in FindReplaceInput) (string, error) {
	if in.Find == "" {
		return "", newErr(errcode.MissingRequired, "find", "find must not be empty")
	}
	scope := in.Scope
	if scope == "" {
		scope = "all"
	}
	if scope != "all" && scope != "titles" && scope != "descriptions" {
		return "", newErr(errcode.InvalidFormat, "scope", "scope must be all, titles or descriptions").
			WithDetail("received", truncateForDetails(scope)).WithDetail("allowed", []string{"all", "titles", "descriptions"})
	}
	if len([]rune(in.Find)) > MaxPatternLength {
		code := errcode.InvalidFormat
		if in.Regex {
			code = errcode.InvalidRegex
		}
		return "", newErr(code, "find", "the pattern must be at most %d characters", MaxPatternLength).WithDetail("max_length", MaxPatternLength)
	}
	return scope, nil
}

// findMatcher counts and replaces Find in one value: a plain substring, or a
// compiled expression (Regex, or IgnoreCase over the literal text). Only with
// Regex does Replace expand $1 / ${name}; otherwise it is inserted as is.
type findMatcher struct {
	in FindReplaceInput
	re *regexp.Regexp // nil: plain substring
}

// newFindMatcher compiles Find when Regex or IgnoreCase asks for it; a
// pattern that does not compile is INVALID_REGEX_PATTERN (details.received).
func newFindMatcher(in FindReplaceInput) (findMatcher, error) {
	m := findMatcher{in: in}
	if in.Regex || in.IgnoreCase {
		re, err := compileFind(in)
		if err != nil {
			return m, newErr(errcode.InvalidRegex, "find", "the pattern does not compile: %s", err.Error()).
				WithDetail("received", truncateForDetails(in.Find))
		}
		m.re = re
	}
	return m, nil
}

// count is the number of non-overlapping matches in v.
func (m findMatcher) count(v string) int {
	if m.re != nil {
		return len(m.re.FindAllStringIndex(v, -1))
	}
	return strings.Count(v, m.in.Find)
}

// replace is v with every match replaced.
func (m findMatcher) replace(v string) string {
	if m.re != nil && !m.in.Regex {
		return m.re.ReplaceAllLiteralString(v, m.in.Replace)
	}
	if m.re != nil {
		return m.re.ReplaceAllString(v, m.in.Replace)
	}
	return strings.ReplaceAll(v, m.in.Find, m.in.Replace)
}

// findReplaceTargets lists the fields the scope covers, in answer order: the
// spec's title, then its string metadata.description, then per node (in
// s.IDs() order) its title and its string metadata.description. Titles are
// left out for scope descriptions, descriptions for scope titles.
func findReplaceTargets(s *Spec, scope string) []frTarget {
	titles, descs := scope != "descriptions", scope != "titles"
	var targets []frTarget
	if titles {
		targets = append(targets, frTarget{"", "title", s.Header.Title})
	}
	if descs {
		if d, ok := s.Header.Metadata["description"].(string); ok {
			targets = append(targets, frTarget{"", "description", d})
		}
	}
	for _, id := range s.IDs() {
		n := s.Node(id)
		if titles {
			targets = append(targets, frTarget{id, "title", n.Title})
		}
		if descs {
			if d, ok := n.Metadata["description"].(string); ok {
				targets = append(targets, frTarget{id, "description", d})
			}
		}
	}
	return targets
}

// frChange is one field whose value the replacement changes.
type frChange struct {
	frTarget
	after string
}

// planFindReplace computes every change without applying any. It returns
// the changed fields and the total number of matches (matches whose
// replacement leaves the value as it was count but change nothing). It
// refuses, with VALIDATION_ERROR, the first title the replacement would
// leave blank, and then more than MaxReplacements matches
// (details.replacements and max).
func planFindReplace(targets []frTarget, m findMatcher) ([]frChange, int, error) {
	var changes []frChange
	total := 0
	for _, t := range targets {
		c := m.count(t.value)
		if c == 0 {
			continue
		}
		after := m.replace(t.value)
		total += c
		if after == t.value {
			continue
		}
		if t.field == "title" && strings.TrimSpace(after) == "" {
			return nil, 0, newErr(errcode.Validation, "replace", "the replacement would leave %s without a title", orSpec(t.nodeID))
		}
		changes = append(changes, frChange{t, after})
	}
	if total > MaxReplacements {
		return nil, 0, newErr(errcode.Validation, "find", "%d replacements exceed the maximum of %d; narrow the pattern or the scope", total, MaxReplacements).
			WithDetail("replacements", total).WithDetail("max", MaxReplacements)
	}
	return changes, total, nil
}

// applyFindReplace writes the planned changes in order and records them in
// res: FieldsChanged per field, each changed node once in NodesChanged (the
// spec's own fields are not a node), and the first maxSamples fields as
// samples. The spec is touched only when something changed.
func applyFindReplace(s *Spec, changes []frChange, res *FindReplaceResult) {
	seen := map[string]bool{}
	for _, c := range changes {
		if c.nodeID == "" {
			if c.field == "title" {
				s.Header.Title = c.after
			} else {
				s.headerMeta()["description"] = c.after
			}
		} else {
			e := s.Edit(c.nodeID)
			if c.field == "title" {
				e.Title = c.after
			} else {
				e.SetMeta("description", c.after)
			}
			if !seen[c.nodeID] {
				seen[c.nodeID] = true
				res.NodesChanged = append(res.NodesChanged, c.nodeID)
			}
		}
		res.FieldsChanged++
		if len(res.Samples) < maxSamples {
			res.Samples = append(res.Samples, FindReplaceSample{c.nodeID, c.field, truncateForDetails(c.value), truncateForDetails(c.after)})
		}
	}
	if len(changes) > 0 {
		s.touch()
	}
}

// compileFind compiles Find: a regular expression, or (IgnoreCase without
// Regex) the literal text; IgnoreCase adds the (?i) flag.
func compileFind(in FindReplaceInput) (*regexp.Regexp, error) {
	expr := in.Find
	if !in.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	return regexp.Compile(expr)
}

func orSpec(id string) string {
	if id == "" {
		return "the spec"
	}
	return id
}
