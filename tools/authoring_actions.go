package tools

import (
	"context"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// The authoring tool's handlers: each binds its arguments, calls one
// domain function inside one store transaction (mutateTo, readTo) and
// answers a typed result.

// SpecCreateAnswer is authoring spec-create's answer.
type SpecCreateAnswer struct {
	Mutation
	Title     string          `json:"title"`
	Lifecycle specs.Lifecycle `json:"lifecycle"`
	Template  string          `json:"template"`
	// NextCalls, for a spec made without a template, adds its first phase.
	NextCalls []core.NextCall `json:"next_calls,omitempty"`
}

func (d *Deps) specCreate(ctx context.Context, r *mcptool.Request, a specCreateArgs) mcptool.Result {
	o := d.writeOptionsOf(r, writeArgs{DryRun: a.DryRun}, "spec-create")
	in := specs.NewSpecInput{
		Name: a.Name, Mission: a.Mission, Description: a.Description, Category: a.Category, Template: a.Template,
		PlanPath: a.PlanPath, PlanReviewPath: a.PlanReviewPath, TestCommand: d.TestCommand,
	}
	h, err := d.Specs.CreateSpec(ctx, o, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		return specs.CreateSpec(in, d.clock(), exists, author(r))
	})
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, ""))
	}
	ans := SpecCreateAnswer{Mutation: Mutation{SpecID: h.SpecID, Version: h.Version}, Title: h.Title, Lifecycle: h.Lifecycle, Template: a.Template}
	if o.DryRun {
		ans.DryRun, ans.Changes = true, []specs.RepoChange{{Op: "add", Target: "spec", Detail: h.SpecID}}
	} else if a.Template == "" {
		ans.NextCalls = []core.NextCall{callFirstPhase.on(h.SpecID, "")}
	}
	return mcptool.OK(ans)
}

// SpecTemplateAnswer is authoring spec-template's answer: templates (list),
// template (show), or phases with the Mutation (apply).
type SpecTemplateAnswer struct {
	Templates []specs.TemplateInfo `json:"templates,omitempty"`
	Template  *specs.Template      `json:"template,omitempty"`
	Phases    []specs.PhaseResult  `json:"phases,omitempty"`
	// apply only: the Mutation's fields.
	SpecID  string             `json:"spec_id,omitempty"`
	Version int64              `json:"version,omitempty"`
	DryRun  bool               `json:"dry_run,omitempty"`
	Changes []specs.RepoChange `json:"changes,omitzero"`
}

func (a *SpecTemplateAnswer) mutated(m Mutation) {
	a.SpecID, a.Version, a.DryRun, a.Changes = m.SpecID, m.Version, m.DryRun, m.Changes
}

func (d *Deps) specTemplate(ctx context.Context, r *mcptool.Request, a specTemplateArgs) mcptool.Result {
	name := a.template()
	switch a.TemplateAction {
	case "", "list":
		return mcptool.OK(SpecTemplateAnswer{Templates: specs.TemplateCatalogue()})
	case "show":
		t, ok := specs.TemplateByName(name)
		if !ok {
			return mcptool.Fail(missingOrUnknownTemplate(name))
		}
		return mcptool.OK(SpecTemplateAnswer{Template: &t})
	}
	if a.SpecID == "" {
		return mcptool.Fail(core.FieldError(errcode.MissingRequired, "template_action=apply needs spec_id.",
			core.FieldDetail{Field: "spec_id", Action: "spec-template"}))
	}
	if _, ok := specs.TemplateByName(name); !ok {
		return mcptool.Fail(missingOrUnknownTemplate(name))
	}
	return mutateTo(ctx, d, r, a.write(), func(sp *specs.Spec, _ specs.JournalWriter) (SpecTemplateAnswer, error) {
		res, err := specs.ApplyTemplate(sp, name, d.TestCommand)
		return SpecTemplateAnswer{Phases: res}, err
	})
}

// FrontmatterAnswer is authoring spec-update-frontmatter's answer.
type FrontmatterAnswer struct {
	Mutation
	specs.Frontmatter
}

func (d *Deps) specUpdateFrontmatter(ctx context.Context, r *mcptool.Request, a frontmatterArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (FrontmatterAnswer, error) {
		v, err := specs.SetFrontmatter(sp, a.Key, deref(a.Value), a.Value != nil)
		return FrontmatterAnswer{Frontmatter: v}, err
	})
}

// PhaseAnswer is authoring phase-add's and phase-add-bulk's answer.
type PhaseAnswer struct {
	Mutation
	specs.PhaseResult
}

func (d *Deps) phaseAdd(ctx context.Context, r *mcptool.Request, a phaseAddArgs) mcptool.Result {
	in := specs.PhaseInput{Title: a.Title, Description: a.Description, Purpose: a.Purpose, TestCommand: d.TestCommand,
		EstimatedHours: a.EstimatedHours, Position: a.Position, LinkPrevious: a.LinkPrevious}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseAnswer, error) {
		res, err := specs.AddPhase(sp, in)
		return PhaseAnswer{PhaseResult: res}, err
	})
}

func (d *Deps) phaseAddBulk(ctx context.Context, r *mcptool.Request, a phaseAddBulkArgs) mcptool.Result {
	tasks, err := taskInputs(a.Tasks)
	if err != nil {
		return mcptool.Fail(err)
	}
	base := specs.PhaseInput{TestCommand: d.TestCommand, VerifyScaffold: a.VerifyScaffold, Position: a.Position, LinkPrevious: a.LinkPrevious}
	in, err := phaseObject(a.Phase, base, a.MetadataDefaults)
	if err != nil {
		return mcptool.Fail(err)
	}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseAnswer, error) {
		res, err := specs.AddPhaseBulk(sp, in, tasks)
		return PhaseAnswer{PhaseResult: res}, err
	})
}

// PhaseRemoveAnswer is authoring phase-remove's answer.
type PhaseRemoveAnswer struct {
	Mutation
	specs.RemovePhaseResult
}

func (d *Deps) phaseRemove(ctx context.Context, r *mcptool.Request, a phaseRemoveArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseRemoveAnswer, error) {
		res, err := specs.RemovePhase(sp, a.PhaseID, a.Force)
		return PhaseRemoveAnswer{RemovePhaseResult: res}, err
	})
}

// PhaseMoveAnswer is authoring phase-move's answer: the phase, its new
// position, the phases in their new order and the chain links changed.
type PhaseMoveAnswer struct {
	Mutation
	specs.PhaseMove
}

func (d *Deps) phaseMove(ctx context.Context, r *mcptool.Request, a phaseMoveArgs) mcptool.Result {
	link := a.LinkPrevious == nil || *a.LinkPrevious
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseMoveAnswer, error) {
		v, err := specs.MovePhaseLinked(sp, a.PhaseID, a.Position, link)
		return PhaseMoveAnswer{PhaseMove: v}, err
	})
}

// PhaseMetadataAnswer is authoring phase-update-metadata's answer: the
// keys changed.
type PhaseMetadataAnswer struct {
	Mutation
	PhaseID string   `json:"phase_id"`
	Changed []string `json:"changed"`
}

func (d *Deps) phaseUpdateMetadata(ctx context.Context, r *mcptool.Request, a phaseMetadataArgs) mcptool.Result {
	id, updates := a.PhaseID, a.updates()
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseMetadataAnswer, error) {
		changed, err := specs.UpdatePhaseMetadata(sp, id, updates)
		return PhaseMetadataAnswer{PhaseID: id, Changed: changed}, err
	})
}

// AssumptionAddAnswer is authoring assumption-add's answer: the text
// stored (with its [type] tag) and how many there are now; author echoes
// the author given (foundry-mcp answers it, and stores it nowhere either).
type AssumptionAddAnswer struct {
	Mutation
	specs.AddedAssumption
	Author string `json:"author,omitempty"`
}

func (d *Deps) assumptionAdd(ctx context.Context, r *mcptool.Request, a assumptionAddArgs) mcptool.Result {
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (AssumptionAddAnswer, error) {
		v, err := specs.AddTaggedAssumption(sp, a.AssumptionType, a.Text)
		return AssumptionAddAnswer{AddedAssumption: v, Author: a.Author}, err
	})
}

// ItemAddAnswer is the answer of constraint-add, question-add and
// success-criterion-add: the text under the item's name, and how many
// there are now (index and count are the same number: the new item is
// last).
type ItemAddAnswer struct {
	Mutation
	Constraint       string `json:"constraint,omitempty"`
	Question         string `json:"question,omitempty"`
	SuccessCriterion string `json:"success_criterion,omitempty"`
	Index            int    `json:"index"`
	Count            int    `json:"count"`
}

// itemAdd is the handler of one list-item add: add stores the text, name
// puts it under the item's name.
func (d *Deps) itemAdd(add func(*specs.Spec, string) (int, error), name func(*ItemAddAnswer, string)) mcptool.TypedHandler {
	return mcptool.Typed(func(ctx context.Context, r *mcptool.Request, a specTextArgs) mcptool.Result {
		return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (ItemAddAnswer, error) {
			n, err := add(sp, a.Text)
			ans := ItemAddAnswer{Index: n, Count: n}
			name(&ans, a.Text)
			return ans, err
		})
	})
}

// AssumptionListAnswer is authoring assumption-list's answer.
type AssumptionListAnswer struct {
	SpecID      string   `json:"spec_id"`
	Assumptions []string `json:"assumptions"`
	Count       int      `json:"count"`
}

// ConstraintListAnswer is authoring constraint-list's answer.
type ConstraintListAnswer struct {
	SpecID      string   `json:"spec_id"`
	Constraints []string `json:"constraints"`
	Count       int      `json:"count"`
}

// QuestionListAnswer is authoring question-list's answer.
type QuestionListAnswer struct {
	SpecID    string   `json:"spec_id"`
	Questions []string `json:"questions"`
	Count     int      `json:"count"`
}

// SuccessCriteriaListAnswer is authoring success-criteria-list's answer.
type SuccessCriteriaListAnswer struct {
	SpecID          string   `json:"spec_id"`
	SuccessCriteria []string `json:"success_criteria"`
	Count           int      `json:"count"`
}

// readStrings reads one of spec specID's string lists (never nil).
func (d *Deps) readStrings(ctx context.Context, specID string, get func(*specs.Spec) []string, answer func(specID string, items []string) any) mcptool.Result {
	return readTo(ctx, d, specID, func(sp *specs.Spec, _ specs.JournalReader) (any, error) {
		items := get(sp)
		if items == nil {
			items = []string{}
		}
		return answer(specID, items), nil
	})
}

func (d *Deps) assumptionList(ctx context.Context, _ *mcptool.Request, a assumptionListArgs) mcptool.Result {
	ofType := func(sp *specs.Spec) []string { return specs.AssumptionsOfType(sp, a.AssumptionType) }
	return d.readStrings(ctx, a.SpecID, ofType, func(id string, l []string) any { return AssumptionListAnswer{id, l, len(l)} })
}

func (d *Deps) constraintList(ctx context.Context, _ *mcptool.Request, a specArgs) mcptool.Result {
	return d.readStrings(ctx, a.SpecID, specs.Constraints, func(id string, l []string) any { return ConstraintListAnswer{id, l, len(l)} })
}

func (d *Deps) questionList(ctx context.Context, _ *mcptool.Request, a specArgs) mcptool.Result {
	return d.readStrings(ctx, a.SpecID, specs.Questions, func(id string, l []string) any { return QuestionListAnswer{id, l, len(l)} })
}

func (d *Deps) successCriteriaList(ctx context.Context, _ *mcptool.Request, a specArgs) mcptool.Result {
	return d.readStrings(ctx, a.SpecID, specs.SuccessCriteria, func(id string, l []string) any { return SuccessCriteriaListAnswer{id, l, len(l)} })
}

// RiskAddAnswer is authoring risk-add's answer.
type RiskAddAnswer struct {
	Mutation
	Risk  specs.Risk `json:"risk"`
	Count int        `json:"count"`
}

func (d *Deps) riskAdd(ctx context.Context, r *mcptool.Request, a riskAddArgs) mcptool.Result {
	risk := specs.Risk{Description: a.Description, Likelihood: a.Likelihood, Impact: a.Impact, Mitigation: a.Mitigation}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (RiskAddAnswer, error) {
		n, err := specs.AddRisk(sp, risk)
		return RiskAddAnswer{Risk: risk, Count: n}, err
	})
}

// RiskListAnswer is authoring risk-list's answer.
type RiskListAnswer struct {
	SpecID string       `json:"spec_id"`
	Risks  []specs.Risk `json:"risks"`
	Count  int          `json:"count"`
}

func (d *Deps) riskList(ctx context.Context, _ *mcptool.Request, a specArgs) mcptool.Result {
	return readTo(ctx, d, a.SpecID, func(sp *specs.Spec, _ specs.JournalReader) (RiskListAnswer, error) {
		risks := specs.Risks(sp)
		if risks == nil {
			risks = []specs.Risk{}
		}
		return RiskListAnswer{SpecID: a.SpecID, Risks: risks, Count: len(risks)}, nil
	})
}

// RevisionAddAnswer is authoring revision-add's answer.
type RevisionAddAnswer struct {
	Mutation
	Revision specs.Revision `json:"revision"`
}

func (d *Deps) revisionAdd(ctx context.Context, r *mcptool.Request, a revisionAddArgs) mcptool.Result {
	// changes is foundry-mcp's name of changelog.
	rev := specs.Revision{Changelog: orElse(a.Changelog, a.Changes), Author: orElse(a.Author, author(r)), Version: versionText(a.Version)}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (RevisionAddAnswer, error) {
		rev, err := specs.AddRevision(sp, rev)
		return RevisionAddAnswer{Revision: rev}, err
	})
}

// FindReplaceAnswer is authoring spec-find-replace's answer.
type FindReplaceAnswer struct {
	Mutation
	specs.FindReplaceResult
}

func (d *Deps) specFindReplace(ctx context.Context, r *mcptool.Request, a findReplaceArgs) mcptool.Result {
	in := specs.FindReplaceInput{Find: a.Find, Replace: a.Replace, Regex: a.UseRegex, Scope: a.Scope,
		IgnoreCase: a.CaseSensitive != nil && !*a.CaseSensitive}
	return mutateTo(ctx, d, r, a.writeArgs, func(sp *specs.Spec, _ specs.JournalWriter) (FindReplaceAnswer, error) {
		res, err := specs.FindReplace(sp, in)
		return FindReplaceAnswer{FindReplaceResult: res}, err
	})
}

// RollbackAnswer is authoring spec-rollback's answer: the version
// restored, the new version it became and how many nodes changed back.
type RollbackAnswer struct {
	Mutation
	RestoredVersion int64 `json:"restored_version"`
	NodesRestored   int   `json:"nodes_restored"`
}

// specRollback restores the version given as a number or a timestamp
// (specs.Rollback).
func (d *Deps) specRollback(ctx context.Context, r *mcptool.Request, a rollbackArgs) mcptool.Result {
	specID := a.SpecID
	o := d.writeOptionsOf(r, a.writeArgs, "spec-rollback")
	o.Guard = func(j specs.JournalWriter) error { return d.checkWriteLock(r, j) }
	v, res, err := specs.Rollback(ctx, d.Specs, specID, versionText(a.Version), o, func() string { return specs.FormatTime(d.clock()()) })
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, specID))
	}
	return mcptool.OK(RollbackAnswer{Mutation: mutationOf(specID, res), RestoredVersion: v, NodesRestored: len(res.Changes)})
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
