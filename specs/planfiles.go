package specs

import (
	"context"
	"io/fs"
	"path"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/workspacefs"
)

// MaxPlanBytes bounds the plan file ReviewPlanFile reads.
const MaxPlanBytes = 1 << 20

// PlanPath is the workspace-relative path of the plan slug.
func PlanPath(slug string) string { return path.Join(PlansFolder, slug+".md") }

// CreatedPlan is what CreatePlanFile wrote: the plan's slug, its
// workspace-relative path and the template it was written from.
type CreatedPlan struct {
	Slug, Path, Template string
}

// CreatePlanFile writes the plan named name (trimmed) from template
// ("": detailed) to PlanPath of its slug in ws, creating PlansFolder, in one
// atomic write. Errors: INVALID_FORMAT (field name) when the name has no
// letters or digits; DUPLICATE_ENTRY (details plan, path) when the plan
// exists; the workspace's errors.
func CreatePlanFile(ctx context.Context, ws *workspacefs.Dir, name, template string) (CreatedPlan, error) {
	name = strings.TrimSpace(name)
	if template == "" {
		template = "detailed"
	}
	slug := PlanSlug(name)
	if slug == "" {
		return CreatedPlan{}, newErr(errcode.InvalidFormat, "name", "The plan name has no letters or digits to make a file name from.")
	}
	p := PlanPath(slug)
	if _, err := ws.Stat(p); err == nil {
		return CreatedPlan{}, core.NewError(errcode.DuplicateEntry, "A plan "+slug+" exists already.", map[string]any{"plan": slug, "path": p})
	}
	if err := ws.MkdirAll(PlansFolder); err != nil {
		return CreatedPlan{}, err
	}
	if err := ws.WriteFileAtomic(ctx, p, []byte(PlanMarkdown(name, template))); err != nil {
		return CreatedPlan{}, err
	}
	return CreatedPlan{Slug: slug, Path: p, Template: template}, nil
}

// ListPlanFiles is the slugs of the plans in ws (the .md files directly
// under PlansFolder), in walk order; never nil, empty without the folder.
func ListPlanFiles(ctx context.Context, ws *workspacefs.Dir) ([]string, error) {
	plans := []string{}
	if _, err := ws.Stat(PlansFolder); err != nil {
		return plans, nil
	}
	err := ws.Walk(ctx, PlansFolder, func(e workspacefs.Entry) error {
		if e.Type.IsDir() {
			return fs.SkipDir
		}
		if n := path.Base(workspacefs.Show(e.Name)); e.Type.IsRegular() && strings.HasSuffix(n, ".md") {
			plans = append(plans, strings.TrimSuffix(n, ".md"))
		}
		return nil
	})
	return plans, err
}

// ReviewPlanFile reads the plan slug from ws (at most MaxPlanBytes) and
// reviews it (ReviewPlan). Errors: INVALID_FORMAT (field plan) when slug is
// not a slug PlanSlug makes; the workspace's NOT_FOUND when there is no
// such plan, and its other errors.
func ReviewPlanFile(ctx context.Context, ws *workspacefs.Dir, slug string) (PlanReview, error) {
	if slug == "" || PlanSlug(slug) != slug {
		return PlanReview{}, core.NewError(errcode.InvalidFormat, "plan is a slug from plan list (lower-case letters, digits and dashes).",
			map[string]any{"field": "plan", "received": slug})
	}
	b, err := ws.ReadFile(ctx, PlanPath(slug), MaxPlanBytes)
	if err != nil {
		return PlanReview{}, err
	}
	return ReviewPlan(string(b)), nil
}
