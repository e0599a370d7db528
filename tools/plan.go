package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/workspacefs"
	"github.com/specd/specd/specs"
)

// maxPlanBytes bounds a plan file plan review reads.
const maxPlanBytes = 1 << 20

func planTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name: "plan", Title: "specd plan",
		Description: "Use this when you draft a plan before a spec. Use authoring instead for specs. plan create → plan review.",
		Params: []mcptool.Param{
			{Name: "name", Type: mcptool.String, MaxLength: 200, MinLength: 1, Description: "create: the plan's title."},
			{Name: "template", Type: mcptool.String, Enum: specs.PlanTemplateNames, Description: "create: default detailed."},
			{Name: "plan", Type: mcptool.String, MaxLength: 200, Description: "review: the plan's slug."},
		},
		Actions: []mcptool.Action{
			{Name: "create", Summary: "Writes specs/.plans/<slug>.md from a template (simple or detailed); DUPLICATE_ENTRY when it exists.",
				Required: []string{"name"}, Optional: []string{"template"}, SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast,
				Example: map[string]any{"name": "Contract plan"}, Answer: PlanCreateAnswer{}, Handler: d.planCreate},
			{Name: "list", Summary: "The plans in specs/.plans, by slug.", SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
				Example: map[string]any{}, Answer: PlanListAnswer{}, Handler: d.planList},
			{Name: "review", Summary: "Checks a plan's sections against its template: missing, empty, placeholders left; ready when none.",
				Required: []string{"plan"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast, Answer: PlanReviewAnswer{}, Handler: d.planReview},
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

func planPath(slug string) string { return path.Join(specs.PlansFolder, slug+".md") }

func (d *Deps) planCreate(ctx context.Context, r *mcptool.Request) mcptool.Result {
	name, tmpl := strings.TrimSpace(r.Args.String("name")), r.Args.String("template")
	if tmpl == "" {
		tmpl = "detailed"
	}
	slug := specs.PlanSlug(name)
	if slug == "" {
		return mcptool.Fail(core.NewError(errcode.InvalidFormat, "The plan name has no letters or digits to make a file name from.", map[string]any{"field": "name"}))
	}
	ws, err := workspacefs.Open(d.Workspace)
	if err != nil {
		return mcptool.Fail(err)
	}
	defer func() { _ = ws.Close() }()
	p := planPath(slug)
	if _, err := ws.Stat(p); err == nil {
		return mcptool.Fail(core.NewError(errcode.DuplicateEntry, "A plan "+slug+" exists already.", map[string]any{"plan": slug, "path": p}).
			WithRecovery("plan", map[string]any{"action": "review", "plan": slug}, nil))
	}
	if err := ws.MkdirAll(specs.PlansFolder); err != nil {
		return mcptool.Fail(err)
	}
	if err := ws.WriteFileAtomic(ctx, p, []byte(specs.PlanMarkdown(name, tmpl))); err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(PlanCreateAnswer{Plan: slug, Path: p, Template: tmpl})
}

func (d *Deps) planList(ctx context.Context, _ *mcptool.Request) mcptool.Result {
	ws, err := workspacefs.Open(d.Workspace)
	if err != nil {
		return mcptool.Fail(err)
	}
	defer func() { _ = ws.Close() }()
	out := PlanListAnswer{Plans: []string{}}
	if _, err := ws.Stat(specs.PlansFolder); err != nil {
		return mcptool.OK(out)
	}
	err = ws.Walk(ctx, specs.PlansFolder, func(e workspacefs.Entry) error {
		if e.Type.IsDir() {
			return fs.SkipDir
		}
		if n := path.Base(workspacefs.Show(e.Name)); e.Type.IsRegular() && strings.HasSuffix(n, ".md") {
			out.Plans = append(out.Plans, strings.TrimSuffix(n, ".md"))
		}
		return nil
	})
	out.Count = len(out.Plans)
	return answer(out, err)
}

func (d *Deps) planReview(ctx context.Context, r *mcptool.Request) mcptool.Result {
	slug := r.Args.String("plan")
	if slug == "" || specs.PlanSlug(slug) != slug {
		return mcptool.Fail(core.NewError(errcode.InvalidFormat, "plan is a slug from plan list (lower-case letters, digits and dashes).", map[string]any{"field": "plan", "received": slug}).
			WithRecovery("plan", map[string]any{"action": "list"}, nil))
	}
	ws, err := workspacefs.Open(d.Workspace)
	if err != nil {
		return mcptool.Fail(err)
	}
	defer func() { _ = ws.Close() }()
	p := planPath(slug)
	b, err := ws.ReadFile(ctx, p, maxPlanBytes)
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Code == errcode.NotFound {
			ce.WithRecovery("plan", map[string]any{"action": "list"}, nil)
		}
		return mcptool.Fail(err)
	}
	return mcptool.OK(PlanReviewAnswer{Plan: slug, Path: p, PlanReview: specs.ReviewPlan(string(b))})
}
