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
	if in.Find == "" {
		return res, newErr(errcode.MissingRequired, "find", "find must not be empty")
	}
	scope := in.Scope
	if scope == "" {
		scope = "all"
	}
	if scope != "all" && scope != "titles" && scope != "descriptions" {
		return res, newErr(errcode.InvalidFormat, "scope", "scope must be all, titles or descriptions").
			with("received", truncateForDetails(scope)).with("allowed", []string{"all", "titles", "descriptions"})
	}
	if len([]rune(in.Find)) > MaxPatternLength {
		code := errcode.InvalidFormat
		if in.Regex {
			code = errcode.InvalidRegex
		}
		return res, newErr(code, "find", "the pattern must be at most %d characters", MaxPatternLength).with("max_length", MaxPatternLength)
	}
	var re *regexp.Regexp
	if in.Regex || in.IgnoreCase {
		re, err = compileFind(in)
		if err != nil {
			return res, newErr(errcode.InvalidRegex, "find", "the pattern does not compile: %s", err.Error()).
				with("received", truncateForDetails(in.Find))
		}
	}
	count := func(v string) int {
		if re != nil {
			return len(re.FindAllStringIndex(v, -1))
		}
		return strings.Count(v, in.Find)
	}
	replace := func(v string) string {
		if re != nil && !in.Regex {
			return re.ReplaceAllLiteralString(v, in.Replace)
		}
		if re != nil {
			return re.ReplaceAllString(v, in.Replace)
		}
		return strings.ReplaceAll(v, in.Find, in.Replace)
	}
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
	type change struct {
		frTarget
		after string
	}
	var changes []change
	for _, t := range targets {
		c := count(t.value)
		if c == 0 {
			continue
		}
		after := replace(t.value)
		res.Replacements += c
		if after == t.value {
			continue
		}
		if t.field == "title" && strings.TrimSpace(after) == "" {
			return FindReplaceResult{NodesChanged: []string{}, Samples: []FindReplaceSample{}},
				newErr(errcode.Validation, "replace", "the replacement would leave %s without a title", orSpec(t.nodeID))
		}
		changes = append(changes, change{t, after})
	}
	if res.Replacements > MaxReplacements {
		return FindReplaceResult{NodesChanged: []string{}, Samples: []FindReplaceSample{}},
			newErr(errcode.Validation, "find", "%d replacements exceed the maximum of %d; narrow the pattern or the scope", res.Replacements, MaxReplacements).
				with("replacements", res.Replacements).with("max", MaxReplacements)
	}
	seen := map[string]bool{}
	for _, c := range changes {
		if c.nodeID == "" {
			if c.field == "title" {
				s.Header.Title = c.after
			} else {
				s.Header.Metadata["description"] = c.after
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
	return res, nil
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
