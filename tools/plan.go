package tools

import (
	"context"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

func planTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name: "plan", Title: "specd plan",
		Description: "Use this when you draft a plan before a spec. Use authoring instead for specs. plan create → plan review.",
		Params: []mcptool.Param{
			{Name: "name", Type: mcptool.String, MaxLength: 200, MinLength: 1, Description: "create: the plan's title."},
			{Name: "template", Type: mcptool.String, Enum: specs.PlanTemplateNames, Synonyms: specs.PlanTemplateSynonyms, Description: "create: default detailed."},
			{Name: "plan", Type: mcptool.String, MaxLength: 200, Description: "review: the plan's slug."},
		},
		Actions: []mcptool.Action{
			{Name: "create", Summary: "Writes specs/.plans/<slug>.md from a template (simple or detailed); DUPLICATE_ENTRY when it exists.",
				Required: []string{"name"}, Optional: []string{"template"}, SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast,
				Example: mcptool.ArgsOf(planCreateArgs{Name: "Contract plan"}), Answer: PlanCreateAnswer{}, Typed: mcptool.Typed(d.planCreate)},
			{Name: "list", Summary: "The plans in specs/.plans, by slug.", SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Example: mcptool.ArgsOf(noArgs{}), Answer: PlanListAnswer{}, Typed: mcptool.Typed(d.planList)},
			{Name: "review", Summary: "Checks a plan's sections against its template: missing, empty, placeholders left; ready when none.",
				Required: []string{"plan"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Answer: PlanReviewAnswer{}, Typed: mcptool.Typed(d.planReview)},
		},
	}
}

// PlanCreateAnswer is plan create's answer.
type PlanCreateAnswer struct {
	Plan     string `json:"plan"`
	Path     string `json:"path"` // workspace-relative
	Template string `json:"template"`
}

// PlanListAnswer is plan list's answer.
type PlanListAnswer struct {
	Plans []string `json:"plans"`
	Count int      `json:"count"`
}

// PlanReviewAnswer is plan review's answer.
type PlanReviewAnswer struct {
	Plan string `json:"plan"`
	Path string `json:"path"`
	specs.PlanReview
}

// planError is err as an envelope error whose recovery is the plan call
// that helps: plan review of a plan that exists, plan list for a malformed
// or unknown slug.
func planError(err error, slug string) error {
	e := core.AsError(withSpecNextCall(err, ""))
	switch {
	case e.Code == errcode.DuplicateEntry:
		e.WithNext(toPlanReview.Call(planReviewArgs{Plan: slug}), nil)
	case e.Code == errcode.NotFound, e.Code == errcode.InvalidFormat && e.Details["field"] == "plan":
		e.WithNext(toPlanList.Call(noArgs{}), nil)
	}
	return e
}

func (d *Deps) planCreate(ctx context.Context, _ *mcptool.Request, a planCreateArgs) mcptool.Result {
	name := a.Name
	p, err := withWorkspace(d, func(ws *workspacefs.Dir) (specs.CreatedPlan, error) {
		return specs.CreatePlanFile(ctx, ws, name, a.Template)
	})
	if err != nil {
		return mcptool.Fail(planError(err, specs.PlanSlug(strings.TrimSpace(name))))
	}
	return mcptool.OK(PlanCreateAnswer{Plan: p.Slug, Path: p.Path, Template: p.Template})
}

func (d *Deps) planList(ctx context.Context, _ *mcptool.Request, _ noArgs) mcptool.Result {
	plans, err := withWorkspace(d, func(ws *workspacefs.Dir) ([]string, error) { return specs.ListPlanFiles(ctx, ws) })
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(PlanListAnswer{Plans: plans, Count: len(plans)})
}

func (d *Deps) planReview(ctx context.Context, _ *mcptool.Request, a planReviewArgs) mcptool.Result {
	slug := a.Plan
	rev, err := withWorkspace(d, func(ws *workspacefs.Dir) (specs.PlanReview, error) { return specs.ReviewPlanFile(ctx, ws, slug) })
	if err != nil {
		return mcptool.Fail(planError(err, slug))
	}
	return mcptool.OK(PlanReviewAnswer{Plan: slug, Path: specs.PlanPath(slug), PlanReview: rev})
}

// The plan tool's typed arguments (mcptool.Typed).
type (
	planCreateArgs struct {
		Name     string `arg:"name,required"`
		Template string `arg:"template"`
	}
	planReviewArgs struct {
		Plan string `arg:"plan,required"`
	}
)
