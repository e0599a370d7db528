package specs

import (
	"regexp"
	"strings"
)

// Markdown plans (the plan tool): a plan is a markdown file under
// PlansFolder in the workspace, written from a template and then edited by
// the agent; plan review checks its sections deterministically.

// PlansFolder is where plans live, relative to the workspace (foundry's
// specs/.plans).
const PlansFolder = "specs/.plans"

// PlanTemplates are the plan templates, by name: the sections each must
// have, in order.
var PlanTemplates = map[string][]string{
	"simple":   {"Objective", "Scope", "Tasks", "Success Criteria"},
	"detailed": {"Objective", "Scope", "Phases", "Risks and Mitigations", "Success Criteria"},
}

// PlanTemplateNames are the names of PlanTemplates.
var PlanTemplateNames = []string{"simple", "detailed"}

// PlanTemplateSynonyms are the words for PlanTemplateNames (see the
// synonym tables in model.go).
var PlanTemplateSynonyms = map[string]string{
	"basic": "simple", "minimal": "simple", "short": "simple", "quick": "simple",
	"full": "detailed", "complete": "detailed", "long": "detailed", "thorough": "detailed",
}

// PlanMarkdown is a new plan named name from template: a title and each
// section with a bracketed placeholder to replace.
func PlanMarkdown(name, template string) string {
	var b strings.Builder
	b.WriteString("# " + name + "\n")
	for _, s := range PlanTemplates[template] {
		b.WriteString("\n## " + s + "\n\n[" + "Write the " + strings.ToLower(s) + " here]\n")
	}
	return b.String()
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// PlanSlug is the file name stem of a plan named name: lower case, runs of
// other characters as one dash ("" when nothing is left).
func PlanSlug(name string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// PlanReview is plan review's deterministic check.
type PlanReview struct {
	Title        string   `json:"title"`
	Template     string   `json:"template"` // the template whose sections it matches best
	Sections     []string `json:"sections"`
	Missing      []string `json:"missing_sections"`
	Empty        []string `json:"empty_sections"`
	Placeholders int      `json:"placeholders"` // bracketed template text still there
	Ready        bool     `json:"ready"`        // nothing missing, empty or left as placeholder
}

var placeholder = regexp.MustCompile(`\[[^\]\n]{3,}\]`)

// ReviewPlan checks markdown: its "## " sections against the template it
// matches best (fewest missing), sections with no text, and template
// placeholders left in.
func ReviewPlan(markdown string) PlanReview {
	r := PlanReview{Sections: []string{}, Missing: []string{}, Empty: []string{}}
	body := r.readSections(markdown)
	r.Template, r.Missing = bestTemplate(body)
	for _, sec := range r.Sections {
		if strings.TrimSpace(body[strings.ToLower(sec)]) == "" {
			r.Empty = append(r.Empty, sec)
		}
	}
	r.Placeholders = len(placeholder.FindAllString(markdown, -1))
	r.Ready = r.isReady()
	return r
}

// readSections sets r's title (the first "# " line) and sections (the
// "## " headings, in order) and returns each section's text by lower-case
// heading: its lines trimmed and joined without separator.
func (r *PlanReview) readSections(markdown string) map[string]string {
	body := map[string]string{}
	cur := ""
	for _, line := range strings.Split(markdown, "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && r.Title == "":
			r.Title = strings.TrimSpace(line[2:])
		case strings.HasPrefix(line, "## "):
			cur = strings.TrimSpace(line[3:])
			r.Sections = append(r.Sections, cur)
			body[strings.ToLower(cur)] = ""
		case cur != "":
			body[strings.ToLower(cur)] += strings.TrimSpace(line)
		}
	}
	return body
}

// bestTemplate is the template whose sections body misses fewest (the
// first of PlanTemplateNames on a tie) and the sections it misses (never
// nil).
func bestTemplate(body map[string]string) (name string, missing []string) {
	best := -1
	for _, n := range PlanTemplateNames {
		m := missingSections(PlanTemplates[n], body)
		if best < 0 || len(m) < best {
			best, name, missing = len(m), n, append([]string{}, m...)
		}
	}
	return name, missing
}

// missingSections are the sections of want that body has no heading for.
func missingSections(want []string, body map[string]string) []string {
	var missing []string
	for _, sec := range want {
		if _, ok := body[strings.ToLower(sec)]; !ok {
			missing = append(missing, sec)
		}
	}
	return missing
}

// isReady reports whether the plan has a title and nothing missing, empty
// or left as placeholder.
func (r PlanReview) isReady() bool {
	return len(r.Missing) == 0 && len(r.Empty) == 0 && r.Placeholders == 0 && r.Title != ""
}
