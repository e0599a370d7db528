package specs

import "sort"

// PhaseTemplate is a reusable phase (authoring phase-template): a title,
// purpose and tasks shaped as authoring phase-add-bulk takes them, so
// applying one is passing Phase and Tasks to phase-add-bulk.
type PhaseTemplate struct {
	Name  string           `json:"name"`
	Phase map[string]any   `json:"phase"`
	Tasks []map[string]any `json:"tasks"`
}

func phaseTask(title, category, description string) map[string]any {
	return map[string]any{"title": title, "task_category": category, "description": description}
}

// phaseTemplates are the shipped phase templates, by name (foundry's
// planning, implementation, testing, security and documentation phases).
var phaseTemplates = map[string]PhaseTemplate{
	"planning": {Phase: map[string]any{"title": "Planning", "purpose": "Agree on scope and approach before building."},
		Tasks: []map[string]any{
			phaseTask("Review requirements", "investigation", "Read the request and list open questions."),
			phaseTask("Choose the approach", "decision", "Record the chosen design and the alternatives rejected."),
		}},
	"implementation": {Phase: map[string]any{"title": "Implementation", "purpose": "Build the change."},
		Tasks: []map[string]any{
			phaseTask("Implement the core change", "implementation", "Make the change the spec describes."),
			phaseTask("Handle errors and edge cases", "implementation", "Cover invalid input and failure paths."),
		}},
	"testing": {Phase: map[string]any{"title": "Testing", "purpose": "Show the change works and keeps working."},
		Tasks: []map[string]any{
			phaseTask("Write unit tests", "implementation", "Table tests for the new behaviour, including failures."),
			phaseTask("Run the whole suite", "investigation", "Run every test and fix what fails."),
		}},
	"security": {Phase: map[string]any{"title": "Security review", "purpose": "Check the change cannot be misused."},
		Tasks: []map[string]any{
			phaseTask("Review input handling", "investigation", "Check every input is validated and bounded."),
			phaseTask("Review secrets and permissions", "investigation", "Check no secret or path leaks and access is least privilege."),
		}},
	"documentation": {Phase: map[string]any{"title": "Documentation", "purpose": "Tell users and maintainers what changed."},
		Tasks: []map[string]any{
			phaseTask("Update the user documentation", "implementation", "Describe the new behaviour where users look for it."),
			phaseTask("Write the changelog entry", "implementation", "Summarise the change and any migration."),
		}},
}

// PhaseTemplateNames lists the shipped phase templates, sorted.
func PhaseTemplateNames() []string {
	out := make([]string, 0, len(phaseTemplates))
	for n := range phaseTemplates {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// PhaseTemplateByName returns the template name (a copy) and whether it
// exists.
func PhaseTemplateByName(name string) (PhaseTemplate, bool) {
	t, ok := phaseTemplates[name]
	if !ok {
		return PhaseTemplate{}, false
	}
	t.Name = name
	t.Phase = cloneMap(t.Phase)
	tasks := make([]map[string]any, len(t.Tasks))
	for i, tk := range t.Tasks {
		tasks[i] = cloneMap(tk)
	}
	t.Tasks = tasks
	return t, true
}
