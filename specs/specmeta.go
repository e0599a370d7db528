package specs

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// NewSpecInput describes a spec for NewSpec.
type NewSpecInput struct {
	Name           string // required; the title, and the slug of the id
	Mission        string
	Description    string
	Category       string
	Template       string // empty, feature, bugfix, refactor ("" = empty)
	PlanPath       string
	PlanReviewPath string
	TestCommand    string // for the template phases' verify scaffold
}

// NewSpec creates a spec with a root node and the template's phases, over an
// empty source (every node is a pending change: the store writes them all).
// The id is GenerateSpecID(Name, now, exists). The header starts at version
// 1, lifecycle pending, with the list-typed metadata present and empty.
//
// Errors: MISSING_REQUIRED (name), INVALID_FORMAT (unknown template;
// details.allowed).
func NewSpec(in NewSpecInput, clock core.Clock, exists func(id string) bool) (*Spec, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return nil, newErr(errcode.MissingRequired, "name", "a spec needs a name")
	}
	tmplName := in.Template
	if tmplName == "" {
		tmplName = "empty"
	}
	tmpl, ok := TemplateByName(tmplName)
	if !ok {
		return nil, unknownTemplate(in.Template)
	}
	now := clock.Now()
	ts := FormatTime(now)
	meta := map[string]any{
		"description": in.Description, "mission": in.Mission, "objectives": []any{}, "assumptions": []any{},
		"constraints": []any{}, "open_questions": []any{}, "success_criteria": []any{}, "risks": []any{},
		"revision_history": []any{},
	}
	for k, v := range map[string]string{"category": in.Category, "plan_path": in.PlanPath, "plan_review_path": in.PlanReviewPath, "template": tmpl.Name} {
		if v != "" {
			meta[k] = v
		}
	}
	h := Header{SpecID: GenerateSpecID(name, now, exists), Title: name, Generated: ts, LastUpdated: ts,
		Lifecycle: LifecyclePending, Metadata: meta, Status: StatusPending}
	s := NewSpecView(h, nil)
	s.Clock = clock
	s.Put(&Node{ID: RootID, Type: TypeSpec, Title: name, Status: StatusPending, Children: ChildListOf([]string{}),
		Metadata: map[string]any{}, Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}})
	if _, err := applyTemplate(s, tmpl, in.TestCommand); err != nil {
		return nil, err
	}
	RecomputeAll(s)
	s.touch()
	return s, nil
}

func unknownTemplate(name string) *core.Error {
	var names []string
	for _, t := range Templates() {
		names = append(names, t.Name)
	}
	e := newErr(errcode.InvalidFormat, "template", "unknown template %q", truncateForDetails(name)).
		WithDetail("received", truncateForDetails(name)).WithDetail("allowed", names)
	withMatches(e, names)
	return e
}

// Template is a named set of phases with their tasks.
type Template struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Phases      []TemplatePhase `json:"phases"`
}

// TemplatePhase is one phase of a template.
type TemplatePhase struct {
	Title   string      `json:"title"`
	Purpose string      `json:"purpose"`
	Tasks   []TaskInput `json:"tasks"`
}

func tasks(titles ...string) []TaskInput {
	out := make([]TaskInput, 0, len(titles))
	for _, t := range titles {
		cat := "implementation"
		if i := strings.Index(t, "|"); i >= 0 {
			cat, t = t[:i], t[i+1:]
		}
		out = append(out, TaskInput{Type: TypeTask, Title: t, TaskCategory: cat})
	}
	return out
}

// Templates returns the built-in templates: empty, feature, bugfix, refactor.
func Templates() []Template {
	return []Template{
		{Name: "empty", Description: "No phases: add them with phase-add or phase-add-bulk."},
		{Name: "feature", Description: "A new feature: design, implementation, tests and docs.", Phases: []TemplatePhase{
			{Title: "Design", Purpose: "Decide the approach and the interfaces", Tasks: tasks(
				"investigation|Study the existing code and constraints", "decision|Write down the design and its trade-offs")},
			{Title: "Implementation", Purpose: "Build the feature", Tasks: tasks(
				"Implement the core behaviour", "Wire the feature into its callers")},
			{Title: "Tests and documentation", Purpose: "Prove it works and explain it", Tasks: tasks(
				"Add unit and integration tests", "Document the feature")},
		}},
		{Name: "bugfix", Description: "A bug fix: reproduce, fix, guard against regressions.", Phases: []TemplatePhase{
			{Title: "Reproduce", Purpose: "Understand the failure", Tasks: tasks(
				"investigation|Reproduce the bug with a failing test", "investigation|Find the root cause")},
			{Title: "Fix", Purpose: "Correct the behaviour", Tasks: tasks(
				"Fix the root cause", "Add regression tests for related cases")},
		}},
		{Name: "refactor", Description: "A refactoring: map the code, change it safely, verify nothing moved.", Phases: []TemplatePhase{
			{Title: "Analysis", Purpose: "Map what changes and what must not", Tasks: tasks(
				"investigation|Map the affected code and its callers", "Add characterisation tests where coverage is thin")},
			{Title: "Refactor", Purpose: "Change the structure, not the behaviour", Tasks: tasks(
				"refactoring|Restructure the code in small steps", "refactoring|Remove the dead code")},
		}},
	}
}

// TemplateByName returns the built-in template with this name.
func TemplateByName(name string) (Template, bool) {
	for _, t := range Templates() {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}

// ApplyTemplate appends the template's phases (each with the verify
// scaffold) to the spec and returns what was added.
//
// Errors: INVALID_FORMAT (unknown template), and those of AddPhaseBulk.
func ApplyTemplate(s *Spec, name, testCommand string) (res []PhaseResult, err error) {
	defer s.mutate(&err)()
	tmpl, ok := TemplateByName(name)
	if !ok {
		return nil, unknownTemplate(name)
	}
	return applyTemplate(s, tmpl, testCommand)
}

func applyTemplate(s *Spec, tmpl Template, testCommand string) ([]PhaseResult, error) {
	var out []PhaseResult
	for _, p := range tmpl.Phases {
		r, err := AddPhaseBulk(s, PhaseInput{Title: p.Title, Purpose: p.Purpose, TestCommand: testCommand, VerifyScaffold: true}, p.Tasks)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ---- spec-level lists ----

func specList(s *Spec, key string) []any {
	list, _ := s.Header.Metadata[key].([]any)
	return list
}

func addSpecString(s *Spec, key, field, text string) (n int, err error) {
	defer s.mutate(&err)()
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, newErr(errcode.MissingRequired, field, "%s must not be blank", field)
	}
	if len([]rune(text)) > 10000 {
		return 0, newErr(errcode.InvalidFormat, field, "%s must be at most 10000 characters", field)
	}
	list := specList(s, key)
	for _, it := range list {
		if str, ok := it.(string); ok && strings.EqualFold(strings.TrimSpace(str), text) {
			return 0, newErr(errcode.DuplicateEntry, field, "this %s is already recorded", field).WithDetail("received", truncateForDetails(text))
		}
	}
	list = append(cloneValue(list).([]any), text)
	s.headerMeta()[key] = list
	s.touch()
	return len(list), nil
}

func specStrings(s *Spec, key string) []string { return toStrings(s.Header.Metadata[key]) }

// AddAssumption appends to metadata.assumptions and returns the new count.
// Errors: MISSING_REQUIRED, INVALID_FORMAT (too long), DUPLICATE_ENTRY.
func AddAssumption(s *Spec, text string) (int, error) {
	return addSpecString(s, "assumptions", "text", text)
}

// AddConstraint appends to metadata.constraints and returns the new count.
// Errors: MISSING_REQUIRED, INVALID_FORMAT (too long), DUPLICATE_ENTRY.
func AddConstraint(s *Spec, text string) (int, error) {
	return addSpecString(s, "constraints", "text", text)
}

// AddQuestion appends to metadata.open_questions and returns the new count.
// Errors: MISSING_REQUIRED, INVALID_FORMAT (too long), DUPLICATE_ENTRY.
func AddQuestion(s *Spec, text string) (int, error) {
	return addSpecString(s, "open_questions", "question", text)
}

// AddSuccessCriterion appends to metadata.success_criteria and returns the
// new count. Errors: MISSING_REQUIRED, INVALID_FORMAT (too long),
// DUPLICATE_ENTRY.
func AddSuccessCriterion(s *Spec, text string) (int, error) {
	return addSpecString(s, "success_criteria", "criterion", text)
}

// Assumptions returns metadata.assumptions.
func Assumptions(s *Spec) []string { return specStrings(s, "assumptions") }

// Constraints returns metadata.constraints.
func Constraints(s *Spec) []string { return specStrings(s, "constraints") }

// Questions returns metadata.open_questions.
func Questions(s *Spec) []string { return specStrings(s, "open_questions") }

// SuccessCriteria returns metadata.success_criteria.
func SuccessCriteria(s *Spec) []string { return specStrings(s, "success_criteria") }

// AddRisk appends a risk (likelihood and impact default to medium) and
// returns the new count.
//
// Errors: MISSING_REQUIRED (description), INVALID_FORMAT (likelihood or
// impact not low|medium|high), DUPLICATE_ENTRY (same description).
func AddRisk(s *Spec, r Risk) (n int, err error) {
	defer s.mutate(&err)()
	r.Description = strings.TrimSpace(r.Description)
	if r.Description == "" {
		return 0, newErr(errcode.MissingRequired, "description", "a risk needs a description")
	}
	if r.Likelihood == "" {
		r.Likelihood = "medium"
	}
	if r.Impact == "" {
		r.Impact = "medium"
	}
	var vs []fieldViolation
	checkEnum(&vs, "likelihood", r.Likelihood, RiskLevels)
	checkEnum(&vs, "impact", r.Impact, RiskLevels)
	if len(vs) > 0 {
		return 0, violationsErr(vs)
	}
	for _, old := range Risks(s) {
		if strings.EqualFold(old.Description, r.Description) {
			return 0, newErr(errcode.DuplicateEntry, "description", "this risk is already recorded")
		}
	}
	list := append(cloneValue(specList(s, "risks")).([]any), normalizeJSON(r))
	s.headerMeta()["risks"] = list
	s.touch()
	return len(list), nil
}

// Risks returns metadata.risks (malformed items are skipped).
func Risks(s *Spec) []Risk {
	var out []Risk
	for _, it := range specList(s, "risks") {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		var r Risk
		r.Description, _ = m["description"].(string)
		r.Likelihood, _ = m["likelihood"].(string)
		r.Impact, _ = m["impact"].(string)
		r.Mitigation, _ = m["mitigation"].(string)
		out = append(out, r)
	}
	return out
}

// AddRevision appends a revision note to metadata.revision_history.
// Version defaults to the spec's version after this mutation, Date to now,
// Author to "specd". It returns the stored revision.
//
// Errors: MISSING_REQUIRED (changelog).
func AddRevision(s *Spec, r Revision) (out Revision, err error) {
	defer s.mutate(&err)()
	r.Changelog = strings.TrimSpace(r.Changelog)
	if r.Changelog == "" {
		return r, newErr(errcode.MissingRequired, "changelog", "a revision needs a changelog")
	}
	s.touch()
	if r.Version == "" {
		r.Version = strconv.FormatInt(s.Header.Version, 10)
	}
	if r.Date == "" {
		r.Date = s.nowString()
	}
	if r.Author == "" {
		r.Author = "specd"
	}
	list := append(cloneValue(specList(s, "revision_history")).([]any), normalizeJSON(r))
	s.headerMeta()["revision_history"] = list
	return r, nil
}

// Revisions returns metadata.revision_history.
func Revisions(s *Spec) []Revision {
	var out []Revision
	for _, it := range specList(s, "revision_history") {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		var r Revision
		r.Version = fmt.Sprint(firstNonNil(m["version"], ""))
		r.Date, _ = m["date"].(string)
		r.Changelog, _ = m["changelog"].(string)
		r.Author, _ = m["author"].(string)
		out = append(out, r)
	}
	return out
}

func firstNonNil(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

// listKeyActions maps list-typed frontmatter keys to the action that edits them.
var listKeyActions = map[string]string{
	"assumptions": "assumption-add", "constraints": "constraint-add", "risks": "risk-add",
	"open_questions": "question-add", "success_criteria": "success-criterion-add", "revision_history": "revision-add",
}

var reservedFrontmatter = map[string]string{
	"spec_id": "the spec id cannot change", "generated": "set at creation", "last_updated": "set by every mutation",
	"version": "set by every mutation", "status": "computed", "progress_percentage": "computed",
	"current_phase": "computed", "hierarchy": "edit nodes with the task and authoring actions",
	"journal": "use journal add", "lifecycle": "use the lifecycle tool",
}

// frontmatterShape is the value a typed metadata key takes: valid accepts
// it, want names it in the refusal.
type frontmatterShape struct {
	want  string
	valid func(any) bool
}

// frontmatterShapes are the typed metadata keys of UpdateFrontmatter (nil,
// a deletion, is always accepted).
var frontmatterShapes = map[string]frontmatterShape{
	"description":      {"a string", isString},
	"mission":          {"a string", isString},
	"category":         {"a string", isString},
	"plan_path":        {"a string", isString},
	"plan_review_path": {"a string", isString},
	"estimated_hours":  {"a non-negative number", isNonNegativeNumber},
	"actual_hours":     {"a non-negative number", isNonNegativeNumber},
	"objectives":       {"a list of strings", isStringList},
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// isNonNegativeNumber reports whether v is a number (not a numeric
// string) at or above 0.
func isNonNegativeNumber(v any) bool {
	f, ok := toFloat(v)
	return ok && !isString(v) && f >= 0
}

// setTitle sets the spec's title to value, trimmed, and the root's title
// with it when the two were the same. Errors: MISSING_REQUIRED when value
// is not a non-blank string.
func setTitle(s *Spec, value any) error {
	str, ok := value.(string)
	if !ok || strings.TrimSpace(str) == "" {
		return newErr(errcode.MissingRequired, "value", "title must be a non-blank string")
	}
	str = strings.TrimSpace(str)
	if r := s.Root(); r != nil && r.Title == s.Header.Title {
		s.Edit(RootID).Title = str
	}
	s.Header.Title = str
	s.touch()
	return nil
}

// UpdateFrontmatter sets one top-level key: "title", a metadata key
// (description, mission, category, plan_path, plan_review_path: strings;
// estimated_hours, actual_hours: non-negative numbers; objectives: a list of
// strings) or a free-form metadata key. A nil value deletes a metadata key.
// List-typed keys with their own action are refused with a pointer to it
// (details.use_action), and so are computed or reserved keys.
//
// Errors: MISSING_REQUIRED (key; title value), VALIDATION_ERROR (list-typed
// or reserved key), INVALID_FORMAT (wrong value type).
func UpdateFrontmatter(s *Spec, key string, value any) (err error) {
	defer s.mutate(&err)()
	key = strings.TrimSpace(key)
	if key == "" {
		return newErr(errcode.MissingRequired, "key", "key is required")
	}
	if action, ok := listKeyActions[key]; ok {
		return newErr(errcode.Validation, "key", "%s is a list: use authoring %s", key, action).WithDetail("use_action", action).WithDetail("received", key)
	}
	if why, ok := reservedFrontmatter[key]; ok {
		return newErr(errcode.Validation, "key", "%s cannot be set here (%s)", key, why).WithDetail("received", key)
	}
	meta := s.headerMeta()
	if key == "title" {
		return setTitle(s, value)
	}
	if shape, ok := frontmatterShapes[key]; ok && value != nil && !shape.valid(value) {
		return newErr(errcode.InvalidFormat, "value", "%s must be %s", key, shape.want).WithDetail("received", truncateForDetails(fmt.Sprint(value)))
	}
	if value == nil {
		delete(meta, key)
	} else {
		meta[key] = normalizeJSON(value)
	}
	s.touch()
	return nil
}
