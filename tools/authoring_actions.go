package tools

import (
	"context"
	"maps"
	"strconv"

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

func (d *Deps) specCreate(ctx context.Context, r *mcptool.Request) mcptool.Result {
	o := d.writeOptions(r, "spec-create")
	in := specs.NewSpecInput{
		Name: r.Args.String("name"), Mission: r.Args.String("mission"), Description: r.Args.String("description"),
		Category: r.Args.String("category"), Template: r.Args.String("template"),
		PlanPath: r.Args.String("plan_path"), PlanReviewPath: r.Args.String("plan_review_path"), TestCommand: d.TestCommand,
	}
	h, err := d.Specs.CreateSpec(ctx, o, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		return specs.CreateSpec(in, d.clock(), exists, author(r))
	})
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, ""))
	}
	a := SpecCreateAnswer{Mutation: Mutation{SpecID: h.SpecID, Version: h.Version}, Title: h.Title, Lifecycle: h.Lifecycle, Template: r.Args.String("template")}
	if o.DryRun {
		a.DryRun, a.Changes = true, []specs.RepoChange{{Op: "add", Target: "spec", Detail: h.SpecID}}
	} else if a.Template == "" {
		a.NextCalls = []core.NextCall{callFirstPhase.on(h.SpecID, "")}
	}
	return mcptool.OK(a)
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

func (d *Deps) specTemplate(ctx context.Context, r *mcptool.Request) mcptool.Result {
	if !r.Args.Has("template") && r.Args.Has("template_name") {
		r.Args["template"] = r.Args["template_name"] // foundry-mcp's name
	}
	switch r.Args.String("template_action") {
	case "", "list":
		return mcptool.OK(SpecTemplateAnswer{Templates: specs.TemplateCatalogue()})
	case "show":
		t, ok := specs.TemplateByName(r.Args.String("template"))
		if !ok {
			return mcptool.Fail(missingOrUnknownTemplate(r.Args.String("template")))
		}
		return mcptool.OK(SpecTemplateAnswer{Template: &t})
	}
	if !r.Args.Has("spec_id") {
		return mcptool.Fail(core.NewError(errcode.MissingRequired, "template_action=apply needs spec_id.", map[string]any{"field": "spec_id", "action": "spec-template"}))
	}
	if _, ok := specs.TemplateByName(r.Args.String("template")); !ok {
		return mcptool.Fail(missingOrUnknownTemplate(r.Args.String("template")))
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (SpecTemplateAnswer, error) {
		res, err := specs.ApplyTemplate(sp, r.Args.String("template"), d.TestCommand)
		return SpecTemplateAnswer{Phases: res}, err
	})
}

// FrontmatterAnswer is authoring spec-update-frontmatter's answer.
type FrontmatterAnswer struct {
	Mutation
	specs.Frontmatter
}

func (d *Deps) specUpdateFrontmatter(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (FrontmatterAnswer, error) {
		v, err := specs.SetFrontmatter(sp, r.Args.String("key"), r.Args.String("value"), r.Args.Has("value"))
		return FrontmatterAnswer{Frontmatter: v}, err
	})
}

// PhaseAnswer is authoring phase-add's and phase-add-bulk's answer.
type PhaseAnswer struct {
	Mutation
	specs.PhaseResult
}

func (d *Deps) phaseAdd(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseAnswer, error) {
		res, err := specs.AddPhase(sp, phaseInput(r.Args, d.TestCommand))
		return PhaseAnswer{PhaseResult: res}, err
	})
}

func (d *Deps) phaseAddBulk(ctx context.Context, r *mcptool.Request) mcptool.Result {
	tasks, err := taskInputs(r.Args.List("tasks"))
	if err != nil {
		return mcptool.Fail(err)
	}
	in, err := phaseObject(r.Args.Object("phase"), r.Args, d.TestCommand)
	if err != nil {
		return mcptool.Fail(err)
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseAnswer, error) {
		res, err := specs.AddPhaseBulk(sp, in, tasks)
		return PhaseAnswer{PhaseResult: res}, err
	})
}

// PhaseRemoveAnswer is authoring phase-remove's answer.
type PhaseRemoveAnswer struct {
	Mutation
	specs.RemovePhaseResult
}

func (d *Deps) phaseRemove(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseRemoveAnswer, error) {
		res, err := specs.RemovePhase(sp, r.Args.String("phase_id"), r.Args.Bool("force"))
		return PhaseRemoveAnswer{RemovePhaseResult: res}, err
	})
}

// PhaseMoveAnswer is authoring phase-move's answer: the phase, its new
// position, the phases in their new order and the chain links changed.
type PhaseMoveAnswer struct {
	Mutation
	specs.PhaseMove
}

func (d *Deps) phaseMove(ctx context.Context, r *mcptool.Request) mcptool.Result {
	pos, _ := r.Args.Int("position")
	link := !r.Args.Has("link_previous") || r.Args.Bool("link_previous")
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseMoveAnswer, error) {
		v, err := specs.MovePhaseLinked(sp, r.Args.String("phase_id"), pos, link)
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

func (d *Deps) phaseUpdateMetadata(ctx context.Context, r *mcptool.Request) mcptool.Result {
	id := r.Args.String("phase_id")
	updates := maps.Clone(r.Args.Object("metadata"))
	for _, k := range []string{"description", "purpose", "estimated_hours"} { // foundry-mcp's top-level keys
		if r.Args.Has(k) {
			if updates == nil {
				updates = map[string]any{}
			}
			updates[k] = r.Args[k]
		}
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (PhaseMetadataAnswer, error) {
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

func (d *Deps) assumptionAdd(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (AssumptionAddAnswer, error) {
		v, err := specs.AddTaggedAssumption(sp, r.Args.String("assumption_type"), r.Args.String("text"))
		return AssumptionAddAnswer{AddedAssumption: v, Author: r.Args.String("author")}, err
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
func (d *Deps) itemAdd(add func(*specs.Spec, string) (int, error), name func(*ItemAddAnswer, string)) mcptool.Handler {
	return func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (ItemAddAnswer, error) {
			text := r.Args.String("text")
			n, err := add(sp, text)
			a := ItemAddAnswer{Index: n, Count: n}
			name(&a, text)
			return a, err
		})
	}
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

// readStrings reads one of the spec's string lists (never nil).
func (d *Deps) readStrings(ctx context.Context, r *mcptool.Request, get func(*specs.Spec) []string, answer func(specID string, items []string) any) mcptool.Result {
	return readTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (any, error) {
		items := get(sp)
		if items == nil {
			items = []string{}
		}
		return answer(r.Args.String("spec_id"), items), nil
	})
}

func (d *Deps) assumptionList(ctx context.Context, r *mcptool.Request) mcptool.Result {
	kind := r.Args.String("assumption_type")
	ofType := func(sp *specs.Spec) []string { return specs.AssumptionsOfType(sp, kind) }
	return d.readStrings(ctx, r, ofType, func(id string, l []string) any { return AssumptionListAnswer{id, l, len(l)} })
}

func (d *Deps) constraintList(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return d.readStrings(ctx, r, specs.Constraints, func(id string, l []string) any { return ConstraintListAnswer{id, l, len(l)} })
}

func (d *Deps) questionList(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return d.readStrings(ctx, r, specs.Questions, func(id string, l []string) any { return QuestionListAnswer{id, l, len(l)} })
}

func (d *Deps) successCriteriaList(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return d.readStrings(ctx, r, specs.SuccessCriteria, func(id string, l []string) any { return SuccessCriteriaListAnswer{id, l, len(l)} })
}

// RiskAddAnswer is authoring risk-add's answer.
type RiskAddAnswer struct {
	Mutation
	Risk  specs.Risk `json:"risk"`
	Count int        `json:"count"`
}

func (d *Deps) riskAdd(ctx context.Context, r *mcptool.Request) mcptool.Result {
	risk := specs.Risk{Description: r.Args.String("description"), Likelihood: r.Args.String("likelihood"),
		Impact: r.Args.String("impact"), Mitigation: r.Args.String("mitigation")}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (RiskAddAnswer, error) {
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

func (d *Deps) riskList(ctx context.Context, r *mcptool.Request) mcptool.Result {
	return readTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalReader) (RiskListAnswer, error) {
		risks := specs.Risks(sp)
		if risks == nil {
			risks = []specs.Risk{}
		}
		return RiskListAnswer{SpecID: r.Args.String("spec_id"), Risks: risks, Count: len(risks)}, nil
	})
}

// RevisionAddAnswer is authoring revision-add's answer.
type RevisionAddAnswer struct {
	Mutation
	Revision specs.Revision `json:"revision"`
}

func (d *Deps) revisionAdd(ctx context.Context, r *mcptool.Request) mcptool.Result {
	who := r.Args.String("author")
	if who == "" {
		who = author(r)
	}
	rev := specs.Revision{Changelog: r.Args.String("changelog"), Author: who, Version: r.Args.String("version")}
	if rev.Changelog == "" {
		rev.Changelog = r.Args.String("changes") // foundry-mcp's name
	}
	if v, ok := r.Args.Int("version"); ok && rev.Version == "" {
		rev.Version = strconv.Itoa(v)
	}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (RevisionAddAnswer, error) {
		rev, err := specs.AddRevision(sp, rev)
		return RevisionAddAnswer{Revision: rev}, err
	})
}

// FindReplaceAnswer is authoring spec-find-replace's answer.
type FindReplaceAnswer struct {
	Mutation
	specs.FindReplaceResult
}

func (d *Deps) specFindReplace(ctx context.Context, r *mcptool.Request) mcptool.Result {
	in := specs.FindReplaceInput{Find: r.Args.String("find"), Replace: r.Args.String("replace"),
		Regex: r.Args.Bool("use_regex"), Scope: r.Args.String("scope"), IgnoreCase: r.Args.Has("case_sensitive") && !r.Args.Bool("case_sensitive")}
	return mutateTo(ctx, d, r, func(sp *specs.Spec, _ specs.JournalWriter) (FindReplaceAnswer, error) {
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
func (d *Deps) specRollback(ctx context.Context, r *mcptool.Request) mcptool.Result {
	specID := r.Args.String("spec_id")
	v, res, err := specs.Rollback(ctx, d.Specs, specID, versionRef(r.Args, "version"), d.writeOptions(r, "spec-rollback"), func() string { return specs.FormatTime(d.clock()()) })
	if err != nil {
		return mcptool.Fail(withSpecNextCall(err, specID))
	}
	return mcptool.OK(RollbackAnswer{Mutation: mutationOf(specID, res), RestoredVersion: v, NodesRestored: len(res.Changes)})
}
