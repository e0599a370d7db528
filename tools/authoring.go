package tools

import (
	"fmt"
	"maps"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

const authoringDescription = `Use this when you shape a spec: create it (spec-create, optionally from a template), edit its frontmatter, add phases (phase-add, or phase-add-bulk for a phase with all its tasks in one atomic call), remove/move/annotate phases, record assumptions, constraints, risks, open questions, success criteria and revision notes, find-and-replace text, or roll back to an earlier version. ` +
	`Use task instead to add, move or work on individual tasks, and spec to read, validate or fix a spec. ` +
	`Typical composition: authoring spec-create → authoring phase-add-bulk (per phase) → spec validate → lifecycle activate → task next. Every mutation takes dry_run and expected_version.`

func authoringTool(d *Deps) *mcptool.Tool {
	write := func(name, summary string, required, optional []string, destructive bool, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: required, Optional: append(optional, mutationArgs...),
			SideEffects: mcptool.EffectWrite, Destructive: destructive, Latency: mcptool.LatencyFast, Answer: answer, Typed: h}
	}
	read := func(name, summary string, answer any, h mcptool.TypedHandler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, Required: []string{"spec_id"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Answer: answer, Typed: h}
	}
	return &mcptool.Tool{
		Name:        "authoring",
		Title:       "specd authoring",
		Description: authoringDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion,
			{Name: "name", Type: mcptool.String, MaxLength: 200, Description: "Spec name: its title and the slug of its id."},
			{Name: "mission", Type: mcptool.String, Description: "One-paragraph mission of the spec."},
			{Name: "description", Type: mcptool.String, Description: "Description (of the spec, a phase, or a risk for risk-add)."},
			{Name: "category", Type: mcptool.String, MaxLength: 100, Description: "Default task category of the spec."},
			{Name: "template", Type: mcptool.String, Enum: templateNames(), Description: "Template: empty, feature, bugfix or refactor."},
			{Name: "template_action", Type: mcptool.String, Enum: []string{"list", "show", "apply"}, Description: "list the templates, show one, or apply one to spec_id (default list)."},
			{Name: "plan_path", Type: mcptool.String, MaxLength: 1000, Description: "Workspace-relative path of the plan the spec came from."},
			{Name: "plan_review_path", Type: mcptool.String, MaxLength: 1000, Description: "Workspace-relative path of the plan's review."},
			{Name: "key", Type: mcptool.String, MaxLength: 100, Description: "Frontmatter key (title, description, mission, category, plan_path, plan_review_path, estimated_hours, actual_hours, objectives or a free-form key)."},
			{Name: "value", Type: mcptool.String, Description: "Frontmatter value; numbers for *_hours, a JSON array for objectives."},
			{Name: "title", Type: mcptool.String, MaxLength: 500, Description: "Phase title."},
			{Name: "purpose", Type: mcptool.String, Description: "Why the phase exists."},
			{Name: "position", Type: mcptool.Integer, Min: f64(0), Description: "0-based, among the phases (default: last)."},
			{Name: "link_previous", Type: mcptool.Boolean, Description: "Chain the phase to the phase before it where it lands (default true)."},
			idParam("phase_id", "Phase identifier, e.g. phase-2."),
			{Name: "force", Type: mcptool.Boolean, Description: "phase-remove: remove even when the phase holds started or finished work."},
			{Name: "phase", Type: mcptool.Object, Description: "phase-add-bulk: {title, description, purpose, estimated_hours, metadata_defaults}."},
			{Name: "tasks", Type: mcptool.Array, Items: mcptool.Object, MaxItems: 200, Description: "phase-add-bulk: [{type task|subtask|verify|research, title, description (or details), task_category (or category), file_path, acceptance_criteria[], complexity, estimated_hours, verification_type, command, expected}]."},
			{Name: "metadata_defaults", Type: mcptool.Object, Description: "phase-add-bulk: defaults for every task (phase.metadata_defaults wins)."},
			{Name: "verify_scaffold", Type: mcptool.Boolean, Description: "phase-add-bulk: also add the verify scaffold (default false, as in foundry-mcp)."},
			{Name: "estimated_hours", Type: mcptool.Number, Min: f64(0), Max: f64(100000), Description: "phase-add, phase-update-metadata: the phase's estimated hours."},
			{Name: "metadata", Type: mcptool.Object, Description: "phase-update-metadata: keys to set (null deletes)."},
			{Name: "text", Type: mcptool.String, Description: "The assumption, constraint, question or success criterion."},
			{Name: "assumption_type", Type: mcptool.String, MaxLength: 50, Description: "Optional kind of assumption (kept as a prefix tag)."},
			{Name: "likelihood", Type: mcptool.String, Enum: specs.RiskLevels, Synonyms: specs.LevelSynonyms, Description: "Risk likelihood."},
			{Name: "impact", Type: mcptool.String, Enum: specs.RiskLevels, Synonyms: specs.LevelSynonyms, Description: "Risk impact."},
			{Name: "mitigation", Type: mcptool.String, Description: "How the risk is mitigated."},
			{Name: "changelog", Type: mcptool.String, Description: "revision-add: what changed in this revision."},
			{Name: "author", Type: mcptool.String, MaxLength: 200, Description: "revision-add: who made the revision (default: the client); assumption-add: echoed."},
			{Name: "changes", Type: mcptool.String, Description: "revision-add: foundry-mcp's name of changelog."},
			{Name: "template_name", Type: mcptool.String, Description: "spec-template: foundry-mcp's name of template (checked like it)."},
			{Name: "case_sensitive", Type: mcptool.Boolean, Description: "spec-find-replace: match case (default true)."},
			{Name: "find", Type: mcptool.String, MaxLength: 256, MinLength: 1, Description: "Text (or RE2 regular expression with use_regex) to find, at most 256 characters."},
			{Name: "replace", Type: mcptool.String, Description: "Replacement text ($1 expands groups with use_regex)."},
			{Name: "use_regex", Type: mcptool.Boolean, Description: "Treat find as a regular expression."},
			{Name: "scope", Type: mcptool.String, Enum: []string{"all", "titles", "descriptions"}, Description: "Which fields find-replace touches (default all)."},
			{Name: "version", Type: mcptool.IntOrString, Min: f64(1), MaxLength: 64, Description: "spec-rollback: a version, or a timestamp (the version current then)."},
		},
		Actions: []mcptool.Action{
			{
				Name: "spec-create", Summary: "Creates a spec (id = slug-YYYY-MM-DD-NNN; the same name twice on one day gets -002) with an optional template.",
				Required: []string{"name"}, Optional: []string{"mission", "description", "category", "template", "plan_path", "plan_review_path", "dry_run"},
				SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(specCreateArgs{Name: "Contract test spec", Template: "feature"}),
				Answer: SpecCreateAnswer{}, Typed: mcptool.Typed(d.specCreate),
			},
			{
				Name: "spec-template", Summary: "Lists the shipped templates (empty, feature, bugfix, refactor), shows one, or applies one to an existing spec.",
				Optional:    []string{"template_action", "template", "template_name", "spec_id", "dry_run", "expected_version"},
				SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(specTemplateArgs{TemplateAction: "list"}),
				Answer: SpecTemplateAnswer{}, Typed: mcptool.Typed(d.specTemplate),
			},
			write("spec-update-frontmatter", "Sets one top-level field (title, description, mission, category, plan paths, hours, objectives or a free-form metadata key); list-typed fields have their own actions.",
				[]string{"spec_id", "key"}, []string{"value"}, false, FrontmatterAnswer{}, mcptool.Typed(d.specUpdateFrontmatter)),
			write("phase-add", "Adds a phase with its verify scaffold (Run tests → Review against the spec), blocked by the previous phase unless link_previous is false.",
				[]string{"spec_id", "title"}, []string{"description", "purpose", "estimated_hours", "position", "link_previous"}, false, PhaseAnswer{}, mcptool.Typed(d.phaseAdd)),
			write("phase-add-bulk", "Adds a phase and all its tasks in one atomic call (the verify scaffold only with verify_scaffold, and not when the tasks contain verify nodes); any invalid task rejects the whole call.",
				[]string{"spec_id", "phase", "tasks"}, []string{"metadata_defaults", "verify_scaffold", "position", "link_previous"}, false, PhaseAnswer{}, mcptool.Typed(d.phaseAddBulk)),
			write("phase-remove", "Removes a phase and its subtree, re-linking dependencies through it (A→phase→C becomes A→C); force is needed when it holds started or finished work.",
				[]string{"spec_id", "phase_id"}, []string{"force"}, true, PhaseRemoveAnswer{}, mcptool.Typed(d.phaseRemove)),
			write("phase-move", "Moves a phase to a 0-based position among the phases (0 is first); with link_previous (default true) the phases' blocked-by chain follows it.",
				[]string{"spec_id", "phase_id", "position"}, []string{"link_previous"}, false, PhaseMoveAnswer{}, mcptool.Typed(d.phaseMove)),
			write("phase-update-metadata", "Sets phase metadata keys (title, description, purpose, estimated_hours or free-form; null deletes), given in metadata or as top-level description, purpose, estimated_hours.",
				[]string{"spec_id", "phase_id"}, []string{"metadata", "description", "purpose", "estimated_hours"}, false, PhaseMetadataAnswer{}, mcptool.Typed(d.phaseUpdateMetadata)),
			write("assumption-add", "Records an assumption.", []string{"spec_id", "text"}, []string{"assumption_type", "author"}, false, AssumptionAddAnswer{}, mcptool.Typed(d.assumptionAdd)),
			{
				Name: "assumption-list", Summary: "Lists the assumptions (those tagged assumption_type when given).",
				Required: []string{"spec_id"}, Optional: []string{"assumption_type"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Answer: AssumptionListAnswer{}, Typed: mcptool.Typed(d.assumptionList),
			},
			write("constraint-add", "Records a constraint.", []string{"spec_id", "text"}, nil, false, ItemAddAnswer{}, d.itemAdd(specs.AddConstraint, func(a *ItemAddAnswer, t string) { a.Constraint = t })),
			read("constraint-list", "Lists the constraints.", ConstraintListAnswer{}, mcptool.Typed(d.constraintList)),
			write("risk-add", "Records a risk with likelihood, impact (low|medium|high) and mitigation.",
				[]string{"spec_id", "description"}, []string{"likelihood", "impact", "mitigation"}, false, RiskAddAnswer{}, mcptool.Typed(d.riskAdd)),
			read("risk-list", "Lists the risks.", RiskListAnswer{}, mcptool.Typed(d.riskList)),
			write("question-add", "Records an open question.", []string{"spec_id", "text"}, nil, false, ItemAddAnswer{}, d.itemAdd(specs.AddQuestion, func(a *ItemAddAnswer, t string) { a.Question = t })),
			read("question-list", "Lists the open questions.", QuestionListAnswer{}, mcptool.Typed(d.questionList)),
			write("success-criterion-add", "Records a success criterion.", []string{"spec_id", "text"}, nil, false, ItemAddAnswer{}, d.itemAdd(specs.AddSuccessCriterion, func(a *ItemAddAnswer, t string) { a.SuccessCriterion = t })),
			read("success-criteria-list", "Lists the success criteria.", SuccessCriteriaListAnswer{}, mcptool.Typed(d.successCriteriaList)),
			write("revision-add", "Records a human revision note (changelog or changes; version default the spec's version, today's date) in metadata.revision_history.",
				[]string{"spec_id"}, []string{"changelog", "changes", "version", "author"}, false, RevisionAddAnswer{}, mcptool.Typed(d.revisionAdd)),
			write("spec-find-replace", "Finds and replaces text (literal, or a regular expression of at most 256 characters; case_sensitive false matches any case) in titles and/or descriptions; at most 1,000 replacements, with samples.",
				[]string{"spec_id", "find"}, []string{"replace", "use_regex", "scope", "case_sensitive"}, false, FindReplaceAnswer{}, mcptool.Typed(d.specFindReplace)),
			{
				Name: "spec-rollback", Summary: "Restores the spec to an earlier version (spec history lists them) as a new version; the journal is untouched.",
				Required: []string{"spec_id", "version"}, Optional: mutationArgs,
				SideEffects: mcptool.EffectWrite, Destructive: true, Latency: mcptool.LatencyFast,
				Answer: RollbackAnswer{}, Typed: mcptool.Typed(d.specRollback),
			},
		},
	}
}

// templateNames are the built-in templates' names.
func templateNames() []string { return specs.TemplateNames() }

func missingOrUnknownTemplate(name string) *core.Error {
	if name == "" {
		return core.FieldError(errcode.MissingRequired, "This template_action needs template.",
			core.FieldDetail{Field: "template", Allowed: templateNames()})
	}
	return core.FieldError(errcode.InvalidFormat, fmt.Sprintf("No template %q.", name),
		core.FieldDetail{Field: "template", Received: name, Allowed: templateNames()}).
		WithNext(toAuthoringSpecTemplate.Call(specTemplateArgs{TemplateAction: "list"}), fuzzy.Rank(name, templateNames(), 5))
}

// phaseFields are the keys of phase-add-bulk's phase object.
var phaseFields = []string{"title", "description", "purpose", "estimated_hours", "metadata", "metadata_defaults"}

// phaseObject binds phase-add-bulk's phase object strictly (objectArg)
// over in (the call's other arguments); its title is required. defaults are
// the call's top-level metadata_defaults.
func phaseObject(m map[string]any, in specs.PhaseInput, defaults map[string]any) (specs.PhaseInput, error) {
	o := mcptool.BindObject(m, "phase", "authoring", phaseFields)
	for _, f := range []struct {
		key string
		dst *string
	}{{"description", &in.Description}, {"purpose", &in.Purpose}, {"title", &in.Title}} {
		if o.Has(f.key) {
			*f.dst = o.Str(f.key)
		}
	}
	in.Metadata, in.EstimatedHours = o.Object("metadata"), o.Hours("estimated_hours")
	// foundry-mcp: top-level metadata_defaults under phase.metadata_defaults.
	in.MetadataDefaults = maps.Clone(defaults)
	if d := o.Object("metadata_defaults"); d != nil {
		if in.MetadataDefaults == nil {
			in.MetadataDefaults = map[string]any{}
		}
		maps.Copy(in.MetadataDefaults, d)
	}
	if o.Err == nil && strings.TrimSpace(in.Title) == "" {
		return in, core.FieldError(errcode.MissingRequired, "phase.title is required.", core.FieldDetail{Field: "phase.title"})
	}
	return in, errOrNil(o.Err)
}

// taskFields are the keys of one phase-add-bulk task.
var taskFields = []string{"type", "title", "description", "details", "task_category", "category", "file_path", "acceptance_criteria", "complexity",
	"estimated_hours", "verification_type", "command", "expected", "blocking_mode", "research_type", "query"}

// taskInputs binds phase-add-bulk's tasks strictly (objectArg): unknown
// fields and wrong types are errors naming tasks[i].field.
func taskInputs(list []any) ([]specs.TaskInput, error) {
	out := make([]specs.TaskInput, 0, len(list))
	for i, raw := range list {
		m, _ := raw.(map[string]any)
		o := mcptool.BindObject(m, fmt.Sprintf("tasks[%d]", i), "authoring", taskFields)
		t := specs.TaskInput{Type: specs.NodeType(o.Str("type")), Title: o.Str("title"), Description: o.Str("description"),
			TaskCategory: o.Str("task_category"), FilePath: o.Str("file_path"), Complexity: o.Str("complexity"),
			VerificationType: o.Str("verification_type"), Command: o.Str("command"), Expected: o.Str("expected"),
			BlockingMode: o.Str("blocking_mode"), ResearchType: o.Str("research_type"), Query: o.Str("query"),
			EstimatedHours: o.Hours("estimated_hours")}
		if a, ok := m["acceptance_criteria"].(string); ok {
			t.AcceptanceCriteria = []string{a} // foundry-mcp: text or a list of texts
		} else {
			t.AcceptanceCriteria = o.Strs("acceptance_criteria")
		}
		if t.TaskCategory == "" {
			t.TaskCategory = o.Str("category") // foundry-mcp's name
		}
		if d, ok := m["details"].(string); ok {
			t.Details = []string{d} // foundry-mcp: text or a list of texts
		} else {
			t.Details = o.Strs("details")
		}
		if o.Err != nil {
			return nil, o.Err
		}
		out = append(out, t)
	}
	return out, nil
}

// errOrNil is e as an error, nil when e is nil.
func errOrNil(e *core.Error) error {
	if e == nil {
		return nil
	}
	return e
}
