package tools

import (
	"context"

	"github.com/specd/specd/core/gitdiff"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// prJournal and prFiles bound pr get-context's journal entries and files.
const (
	prJournal = 20
	prFiles   = 200
)

func prTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name: "pr", Title: "specd pr",
		Description: "Use this when you write a pull request. Use spec instead for the whole spec. get-context → write.",
		Params:      []mcptool.Param{pSpecID},
		Actions: []mcptool.Action{
			{Name: "get-context", Summary: "The spec's progress, its 20 newest journal entries and the uncommitted diff summary (git diff --numstat HEAD).",
				Required: []string{"spec_id"}, SideEffects: mcptool.EffectRead, Idempotent: true, OpenWorld: true, Latency: mcptool.LatencyModerate,
				Example: mcptool.ArgsOf(specOf("$spec_id")), Answer: PRContextAnswer{}, Typed: mcptool.Typed(d.prContext)},
		},
	}
}

// PRContextAnswer is pr get-context's answer.
type PRContextAnswer struct {
	SpecID         string               `json:"spec_id"`
	Title          string               `json:"title"`
	Version        int64                `json:"version"`
	Status         specs.Status         `json:"status"`
	TotalTasks     int                  `json:"total_tasks"`
	CompletedTasks int                  `json:"completed_tasks"`
	Progress       int                  `json:"progress_percentage"`
	Journal        []specs.JournalEntry `json:"journal"`
	Diff           gitdiff.Summary      `json:"diff"`
}

func (d *Deps) prContext(ctx context.Context, _ *mcptool.Request, args specArgs) mcptool.Result {
	res := readTo(ctx, d, args.SpecID, func(sp *specs.Spec, j specs.JournalReader) (PRContextAnswer, error) {
		h := sp.Header
		entries, _, err := j.Entries(0, prJournal, func(*specs.JournalEntry) bool { return true })
		if entries == nil {
			entries = []specs.JournalEntry{}
		}
		return PRContextAnswer{SpecID: h.SpecID, Title: h.Title, Version: h.Version, Status: h.Status, TotalTasks: h.TotalTasks,
			CompletedTasks: h.CompletedTasks, Progress: h.ProgressPercentage, Journal: entries}, err
	})
	if res.Err != nil {
		return res
	}
	a := res.Data.(PRContextAnswer)
	a.Diff = gitdiff.Summary{Files: []gitdiff.File{}, Reason: "no workspace"}
	if dir, err := d.workspaceDir(); err == nil {
		a.Diff = gitdiff.Diff(ctx, dir, prFiles)
	}
	res.Data = a
	return res
}
