package tools

import (
	"context"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// specFoundryActions are the spec actions foundry-mcp has that need no language
// model (README "foundry-mcp's actions that need no language model").
func specFoundryActions(d *Deps, readAction func(name, summary string, required, optional []string, latency string, answer any, h mcptool.TypedHandler) mcptool.Action) []mcptool.Action {
	hours := func(name, key string) mcptool.Action {
		return mcptool.Action{Name: name, Summary: "Sets each phase's " + key + " to the sum over its work leaves and the spec's to the sum over phases; dry_run shows the sums.",
			Required: []string{"spec_id"}, Optional: mutationArgs, SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyModerate,
			Example: mcptool.ArgsOf(writeArgs{specArgs: specOf("$spec_id")}), Answer: HoursAnswer{}, Typed: mcptool.Typed(d.recalculateHours(key))}
	}
	return []mcptool.Action{
		{Name: "validate-fix", Summary: "foundry's validate-fix: applies every auto-fixable diagnostic (as fix) and reports what remains; dry_run shows the fixes.",
			Required: []string{"spec_id"}, Optional: mutationArgs, SideEffects: mcptool.EffectWrite, Idempotent: true, Latency: mcptool.LatencyModerate,
			Example: mcptool.ArgsOf(writeArgs{specArgs: specOf("$spec_id")}), Answer: SpecFixAnswer{}, Typed: mcptool.Typed(d.validateFix)},
		withExample(readAction("analyze", "One read of stats, analyze-deps and completeness-check together.",
			[]string{"spec_id"}, nil, mcptool.LatencyModerate, SpecAnalyzeAnswer{}, analysis(d, func(sp *specs.Spec, _ specArgs) SpecAnalyzeAnswer {
				return SpecAnalyzeAnswer{Analyzed: specs.Analyzed{SpecID: sp.Header.SpecID, Version: sp.Header.Version}, Stats: specs.Stats(sp), Deps: specs.AnalyzeDeps(sp, 3), Completeness: specs.Completeness(sp)}
			})), mcptool.ArgsOf(specOf("$spec_id"))),
		hours("recalculate-hours", specs.EstimatedHoursKey),
		hours("recalculate-actual-hours", specs.ActualHoursKey),
	}
}

// SpecAnalyzeAnswer is spec analyze's answer: the three analyses of one
// version.
type SpecAnalyzeAnswer struct {
	specs.Analyzed
	Stats        specs.SpecStats          `json:"stats"`
	Deps         specs.DepsAnalysis       `json:"dependencies"`
	Completeness specs.CompletenessReport `json:"completeness"`
}

// HoursAnswer is recalculate-hours' and recalculate-actual-hours' answer.
type HoursAnswer struct {
	Mutation
	specs.HoursReport
}

func (d *Deps) recalculateHours(key string) func(context.Context, *mcptool.Request, writeArgs) mcptool.Result {
	return func(ctx context.Context, r *mcptool.Request, a writeArgs) mcptool.Result {
		return mutateTo(ctx, d, r, a, func(sp *specs.Spec, _ specs.JournalWriter) (HoursAnswer, error) {
			return HoursAnswer{HoursReport: specs.RecalculateHours(sp, key)}, nil
		})
	}
}

// withExample is a with its happy-path example set.
func withExample(a mcptool.Action, ex map[string]any) mcptool.Action {
	a.Example = ex
	return a
}
