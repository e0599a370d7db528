package tools

import (
	"fmt"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

const reviewDescription = `Use this in an autonomy session's run_fidelity_gate step: fidelity-gate computes the phase gate's verdict from evidence (tasks done, verification receipts exit 0 for each verify command, results passed), no language model.`

// reviewTool is the review tool: foundry's fidelity gate, deterministic.
// Its model-backed actions answer NOT_SUPPORTED (reviewRefusal).
func reviewTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name:        "review",
		Title:       "specd review",
		Description: reviewDescription,
		Params: []mcptool.Param{
			pSpecID,
			idParam("session_id", "The autonomy session."),
			idParam("phase_id", "The gate step's phase_id."),
			idParam("step_id", "The run_fidelity_gate step's step_id."),
		},
		Actions: []mcptool.Action{
			{Name: "fidelity-gate", Summary: "A phase gate's verdict (pass|warn|fail) from evidence, stored as the gate step's evidence with its integrity checksum.",
				Required: []string{"spec_id", "session_id", "phase_id", "step_id"}, SideEffects: mcptool.EffectWrite, Idempotent: true,
				Latency: mcptool.LatencyFast, Answer: FidelityGateAnswer{}, Typed: mcptool.Typed(d.reviewFidelityGate)},
		},
	}
}

// reviewRefusal answers NOT_SUPPORTED for foundry's model-written reviews.
func reviewRefusal(action string) *core.Error {
	name := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(action)), "_", "-")
	switch name {
	case "spec", "spec-review", "fidelity", "parse-feedback", "plan", "list-tools", "list-plan-tools":
	default:
		return nil
	}
	return core.NewError(errcode.NotSupported,
		fmt.Sprintf("review %s is not offered: its reviews are written by a language model, and specd calls no language model (the agent calling it is one).", name),
		core.DetailsOf(notOffered("review", name))).
		WithRemediation("Review the spec yourself: spec(action=\"completeness-check\") and spec(action=\"analyze\") check it deterministically; in an autonomy session, review(action=\"fidelity-gate\") computes the gate from evidence.").
		WithNext(toSpecList.Call(specListArgs{}), nil)
}
