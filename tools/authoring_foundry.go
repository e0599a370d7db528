package tools

import (
	"context"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/errlog"
	"github.com/specd/specd/core/fuzzy"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// NotesStore is what the intake inbox and the error tool need of the
// store: the domain's inbox port and core's error log port
// (specs/specstore implements both, every method one transaction).
type NotesStore interface {
	specs.Inbox
	errlog.Store
}

// authoringFoundryParams are the authoring parameters only these actions
// take.
var authoringFoundryParams = []mcptool.Param{
	{Name: "phase_template", Type: mcptool.String, MaxLength: 50, Description: "phase-template: one template (default all)."},
	idParam("intake_id", "An intake item, e.g. intake-3."),
	{Name: "reason", Type: mcptool.String, MaxLength: 2000, Description: "intake-dismiss: why."},
	pCursor, pLimit(core.PageList),
}

// authoringFoundryActions are foundry-mcp's authoring actions that need no
// model: phase templates and the intake inbox.
func authoringFoundryActions(d *Deps) []mcptool.Action {
	return []mcptool.Action{
		{Name: "phase-template", Summary: "Shipped phase templates (planning, implementation, testing, security, documentation) as phase-add-bulk's phase and tasks.",
			Optional: []string{"phase_template"}, SideEffects: mcptool.EffectNone, Idempotent: true, Latency: mcptool.LatencyFast, Example: mcptool.ArgsOf(phaseTemplateArgs{}),
			Answer: PhaseTemplateAnswer{}, Typed: mcptool.Typed(phaseTemplate)},
		{Name: "intake-add", Summary: "Adds a note to the workspace's intake inbox (ideas and requests not yet in a spec).",
			Required: []string{"title"}, Optional: []string{"description"}, SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast,
			Example: mcptool.ArgsOf(intakeAddArgs{Title: "Idea"}), Answer: IntakeAnswer{}, Typed: mcptool.Typed(d.intakeAdd)},
		{Name: "intake-list", Summary: "Inbox items not dismissed, oldest first, paged.",
			Optional: []string{"cursor", "limit"}, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Example: mcptool.ArgsOf(intakeListArgs{}), Answer: IntakeListAnswer{}, Typed: mcptool.Typed(d.intakeList)},
		{Name: "intake-dismiss", Summary: "Marks an inbox item dismissed (kept, no longer listed).",
			Required: []string{"intake_id"}, Optional: []string{"reason"}, SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyFast,
			Answer: IntakeAnswer{}, Typed: mcptool.Typed(d.intakeDismiss)},
	}
}

// PhaseTemplateAnswer is authoring phase-template's answer.
type PhaseTemplateAnswer struct {
	Templates []specs.PhaseTemplate `json:"templates"`
	Count     int                   `json:"count"`
	Apply     string                `json:"apply"`
}

func phaseTemplate(_ context.Context, _ *mcptool.Request, args phaseTemplateArgs) mcptool.Result {
	names := specs.PhaseTemplateNames()
	if n := strings.ToLower(args.PhaseTemplate); n != "" {
		if _, ok := specs.PhaseTemplateByName(n); !ok {
			return mcptool.Fail(core.FieldError(errcode.NotFound, "No phase template "+n+".",
				core.FieldDetail{Field: "phase_template", Received: n, Allowed: names}).
				WithNext(toAuthoringPhaseTemplate.Call(phaseTemplateArgs{}), fuzzy.Rank(n, names, 5)))
		}
		names = []string{n}
	}
	a := PhaseTemplateAnswer{Templates: []specs.PhaseTemplate{}, Apply: "authoring(action=\"phase-add-bulk\", spec_id, phase, tasks) with a template's phase and tasks"}
	for _, n := range names {
		t, _ := specs.PhaseTemplateByName(n)
		a.Templates = append(a.Templates, t)
	}
	a.Count = len(a.Templates)
	return mcptool.OK(a)
}

// IntakeAnswer is intake-add's and intake-dismiss's answer.
type IntakeAnswer struct {
	Item    specs.IntakeItem `json:"item"`
	Already bool             `json:"already_dismissed,omitempty"`
}

// IntakeListAnswer is intake-list's answer: one page.
type IntakeListAnswer struct {
	Items []specs.IntakeItem `json:"items"`
	Count int                `json:"count"`
}

// notes is d.Notes, or UNAVAILABLE when the server has no store for them.
func (d *Deps) notes() (NotesStore, error) {
	if d.Notes == nil {
		return nil, core.NewError(errcode.Unavailable, "This server keeps no workspace notes (no store).", nil).
			WithNext(toHealthReadiness.Call(noArgs{}), nil)
	}
	return d.Notes, nil
}

func (d *Deps) intakeAdd(ctx context.Context, r *mcptool.Request, a intakeAddArgs) mcptool.Result {
	n, err := d.notes()
	if err != nil {
		return mcptool.Fail(err)
	}
	item, err := n.IntakeAdd(ctx, specs.IntakeItem{Title: strings.TrimSpace(a.Title), Description: a.Description,
		CreatedAt: specs.FormatTime(d.clock()()), CreatedBy: author(r)})
	return answer(IntakeAnswer{Item: item}, err)
}

func (d *Deps) intakeList(ctx context.Context, r *mcptool.Request, _ intakeListArgs) mcptool.Result {
	n, err := d.notes()
	if err != nil {
		return mcptool.Fail(err)
	}
	p, err := mcptool.OpenPage(r, "authoring", "intake-list", "", core.PageList, toAuthoringIntakeList.Args(intakeListArgs{}))
	if err != nil {
		return mcptool.Fail(err)
	}
	items, last, err := n.IntakeList(ctx, specs.IntakeNew, p.After, p.Limit)
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(IntakeListAnswer{Items: items, Count: len(items)}, p.Meta(p.Cursor(last, last != "")))
}

func (d *Deps) intakeDismiss(ctx context.Context, _ *mcptool.Request, a intakeDismissArgs) mcptool.Result {
	n, err := d.notes()
	if err != nil {
		return mcptool.Fail(err)
	}
	item, already, err := n.IntakeDismiss(ctx, a.IntakeID, a.Reason, specs.FormatTime(d.clock()()))
	return answer(IntakeAnswer{Item: item, Already: already}, err)
}

// extend adds params and actions to t (foundry's actions kept out of the
// tool's own declaration file).
func extend(t *mcptool.Tool, params []mcptool.Param, actions []mcptool.Action) *mcptool.Tool {
	t.Params = append(t.Params, params...)
	t.Actions = append(t.Actions, actions...)
	return t
}
