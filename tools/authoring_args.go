package tools

import "maps"

// The authoring tool's typed arguments, one struct per action
// (mcptool.Typed); Registry.Add checks each against the declaration in
// authoring.go and authoring_foundry.go.

// specTextArgs are the arguments of an add that stores one text
// (assumption, constraint, question, success criterion).
type specTextArgs struct {
	writeArgs
	Text string `arg:"text,required"`
}

type (
	specCreateArgs struct {
		Name           string `arg:"name,required"`
		Mission        string `arg:"mission"`
		Description    string `arg:"description"`
		Category       string `arg:"category"`
		Template       string `arg:"template"`
		PlanPath       string `arg:"plan_path"`
		PlanReviewPath string `arg:"plan_review_path"`
		DryRun         bool   `arg:"dry_run"`
	}
	specTemplateArgs struct {
		TemplateAction  string `arg:"template_action"`
		Template        string `arg:"template"`
		TemplateName    string `arg:"template_name"`
		SpecID          string `arg:"spec_id"`
		DryRun          bool   `arg:"dry_run"`
		ExpectedVersion *int   `arg:"expected_version"`
	}
	frontmatterArgs struct {
		writeArgs
		Key   string  `arg:"key,required"`
		Value *string `arg:"value"`
	}
	phaseAddArgs struct {
		writeArgs
		Title          string   `arg:"title,required"`
		Description    string   `arg:"description"`
		Purpose        string   `arg:"purpose"`
		EstimatedHours *float64 `arg:"estimated_hours"`
		Position       *int     `arg:"position"`
		LinkPrevious   *bool    `arg:"link_previous"`
	}
	phaseAddBulkArgs struct {
		writeArgs
		Phase            map[string]any `arg:"phase,required"`
		Tasks            []any          `arg:"tasks,required"`
		MetadataDefaults map[string]any `arg:"metadata_defaults"`
		VerifyScaffold   bool           `arg:"verify_scaffold"`
		Position         *int           `arg:"position"`
		LinkPrevious     *bool          `arg:"link_previous"`
	}
	phaseRemoveArgs struct {
		writeArgs
		PhaseID string `arg:"phase_id,required"`
		Force   bool   `arg:"force"`
	}
	phaseMoveArgs struct {
		writeArgs
		PhaseID      string `arg:"phase_id,required"`
		Position     int    `arg:"position,required"`
		LinkPrevious *bool  `arg:"link_previous"`
	}
	phaseMetadataArgs struct {
		writeArgs
		PhaseID        string         `arg:"phase_id,required"`
		Metadata       map[string]any `arg:"metadata"`
		Description    *string        `arg:"description"`
		Purpose        *string        `arg:"purpose"`
		EstimatedHours *float64       `arg:"estimated_hours"`
	}
	assumptionAddArgs struct {
		specTextArgs
		AssumptionType string `arg:"assumption_type"`
		Author         string `arg:"author"`
	}
	assumptionListArgs struct {
		specArgs
		AssumptionType string `arg:"assumption_type"`
	}
	riskAddArgs struct {
		writeArgs
		Description string `arg:"description,required"`
		Likelihood  string `arg:"likelihood"`
		Impact      string `arg:"impact"`
		Mitigation  string `arg:"mitigation"`
	}
	revisionAddArgs struct {
		writeArgs
		Changelog string `arg:"changelog"`
		Changes   string `arg:"changes"`
		Version   any    `arg:"version"`
		Author    string `arg:"author"`
	}
	findReplaceArgs struct {
		writeArgs
		Find          string `arg:"find,required"`
		Replace       string `arg:"replace"`
		UseRegex      bool   `arg:"use_regex"`
		Scope         string `arg:"scope"`
		CaseSensitive *bool  `arg:"case_sensitive"`
	}
	rollbackArgs struct {
		writeArgs
		Version any `arg:"version,required"`
	}
	phaseTemplateArgs struct {
		PhaseTemplate string `arg:"phase_template"`
	}
	intakeAddArgs struct {
		Title       string `arg:"title,required"`
		Description string `arg:"description"`
	}
	intakeListArgs struct {
		pageArgs
	}
	intakeDismissArgs struct {
		IntakeID string `arg:"intake_id,required"`
		Reason   string `arg:"reason"`
	}
)

// write is spec-template apply's write.
func (a specTemplateArgs) write() writeArgs {
	return writeArgs{specArgs: specArgs{SpecID: a.SpecID}, DryRun: a.DryRun, ExpectedVersion: a.ExpectedVersion}
}

// template is the template named: template, or foundry-mcp's template_name.
func (a specTemplateArgs) template() string { return orElse(a.Template, a.TemplateName) }

// updates are phase-update-metadata's keys: metadata's, then foundry-mcp's
// top-level description, purpose and estimated_hours; nil when none is
// given.
func (a phaseMetadataArgs) updates() map[string]any {
	u := maps.Clone(a.Metadata)
	if a.Description == nil && a.Purpose == nil && a.EstimatedHours == nil {
		return u
	}
	if u == nil {
		u = map[string]any{}
	}
	given(u, "description", a.Description)
	given(u, "purpose", a.Purpose)
	given(u, "estimated_hours", a.EstimatedHours)
	return u
}
