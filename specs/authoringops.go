package specs

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Authoring operations as answers: a new spec with its first journal
// entry, the templates' catalogue, frontmatter values, phase moves and
// tagged assumptions.

// CreateSpec builds a new spec (NewSpec) and its "Spec created" journal
// entry, authored by author at clock's now. Errors are NewSpec's.
func CreateSpec(in NewSpecInput, clock core.Clock, exists func(id string) bool, author string) (*Spec, []JournalEntry, error) {
	sp, err := NewSpec(in, clock, exists)
	if err != nil {
		return nil, nil, err
	}
	entry := JournalEntry{Timestamp: FormatTime(clock.Now()), EntryType: "note", Title: "Spec created",
		Content: "Created " + sp.Header.Title + ".", Author: author}
	return sp, []JournalEntry{entry}, nil
}

// TemplateInfo is one template of the catalogue.
type TemplateInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Phases      int    `json:"phases"`
}

// TemplateCatalogue lists the built-in templates with their phase counts.
func TemplateCatalogue() []TemplateInfo {
	var out []TemplateInfo
	for _, t := range Templates() {
		out = append(out, TemplateInfo{Name: t.Name, Description: t.Description, Phases: len(t.Phases)})
	}
	return out
}

// TemplateNames are the built-in templates' names.
func TemplateNames() []string {
	var out []string
	for _, t := range Templates() {
		out = append(out, t.Name)
	}
	return out
}

// Frontmatter is a top-level field after an update.
type Frontmatter struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// SetFrontmatter converts value to the type key expects (FrontmatterValue)
// and sets it (UpdateFrontmatter); without a value (has false) the key is
// set to nil.
func SetFrontmatter(s *Spec, key, value string, has bool) (Frontmatter, error) {
	var v any
	var err error
	if has {
		v, err = FrontmatterValue(key, value)
	}
	if err == nil {
		err = UpdateFrontmatter(s, key, v)
	}
	return Frontmatter{Key: key, Value: v}, err
}

// FrontmatterValue converts a frontmatter value given as text to the type
// key expects: a number of hours for estimated_hours and actual_hours, a
// JSON array for objectives, the text itself otherwise. Errors:
// INVALID_FORMAT (field value).
func FrontmatterValue(key, s string) (any, error) {
	switch key {
	case "estimated_hours", "actual_hours":
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, core.NewError(errcode.InvalidFormat, key+" must be a number of hours.", map[string]any{"field": "value", "received": s, "constraint": "number ≥ 0"})
		}
		return f, nil
	case "objectives":
		var list []any
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, core.NewError(errcode.InvalidFormat, "objectives must be a JSON array of strings.", map[string]any{"field": "value", "received": s, "constraint": "JSON array of strings"})
		}
		return list, nil
	}
	return s, nil
}

// MovedPhase is a phase after a move, with the phases in their new order.
type MovedPhase struct {
	PhaseID  string   `json:"phase_id"`
	Position int      `json:"position"`
	Phases   []string `json:"phases"`
}

// MovePhaseView moves phase id to position (MovePhase).
func MovePhaseView(s *Spec, id string, position int) (MovedPhase, error) {
	err := MovePhase(s, id, position)
	phases := []string{}
	if root := s.Root(); root != nil {
		phases = append(phases, root.Children.Slice()...)
	}
	return MovedPhase{PhaseID: id, Position: position, Phases: phases}, err
}

// AddedAssumption is an assumption as stored, with how many there are now.
type AddedAssumption struct {
	Assumption string `json:"assumption"`
	Count      int    `json:"count"`
}

// AddTaggedAssumption records text, prefixed with "[kind] " when kind is
// set (AddAssumption).
func AddTaggedAssumption(s *Spec, kind, text string) (AddedAssumption, error) {
	if kind != "" {
		text = "[" + kind + "] " + text
	}
	n, err := AddAssumption(s, text)
	return AddedAssumption{Assumption: text, Count: n}, err
}
