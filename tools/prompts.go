package tools

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/specs"
)

// Prompt names.
const (
	promptStartFeature  = "start_feature"
	promptCompletePhase = "complete_phase"
	promptReviewSpec    = "review_spec"
)

// installPrompts publishes the prompts start_feature (spec_id),
// complete_phase (spec_id, phase_id) and review_spec (spec_id): one user
// message each, whose deterministic text is built from the spec alone
// (startFeaturePrompt, completePhasePrompt, reviewSpecPrompt).
// A missing or malformed argument, an unknown spec or phase is a JSON-RPC
// error whose message starts with the error code (INVALID_FORMAT,
// SPEC_NOT_FOUND, PHASE_NOT_FOUND) and names the call that lists the ids.
func installPrompts(s *server.MCPServer, d *Deps) {
	specArg := mcp.WithArgument("spec_id", mcp.RequiredArgument(),
		mcp.ArgumentDescription("Spec identifier (from spec list or the specd://specs resource)."))
	s.AddPrompt(mcp.NewPrompt(promptStartFeature,
		mcp.WithPromptDescription("Start work on a spec: its mission, phases, the first task to take, and the claim → work → journal → complete loop."),
		specArg), d.promptHandler(func(sp *specs.Spec, _ map[string]string) (string, error) {
		return startFeaturePrompt(sp), nil
	}))
	s.AddPrompt(mcp.NewPrompt(promptCompletePhase,
		mcp.WithPromptDescription("Close one phase of a spec: its unfinished tasks and verify steps, and the calls that finish, verify and journal them."),
		specArg, mcp.WithArgument("phase_id", mcp.RequiredArgument(), mcp.ArgumentDescription("The phase, e.g. phase-1."))),
		d.promptHandler(func(sp *specs.Spec, args map[string]string) (string, error) {
			if args["phase_id"] == "" {
				return "", core.Errorf(errcode.MissingRequired, "complete_phase needs phase_id (the phases are in task(action=\"progress\", spec_id=%q))", sp.Header.SpecID)
			}
			if err := specs.CheckID("phase_id", args["phase_id"]); err != nil {
				return "", err
			}
			return completePhasePrompt(sp, args["phase_id"])
		}))
	s.AddPrompt(mcp.NewPrompt(promptReviewSpec,
		mcp.WithPromptDescription("Review a spec against its intent: structure, dependencies, blocked and failed work, missing journal entries, and the checks to run."),
		specArg), d.promptHandler(func(sp *specs.Spec, _ map[string]string) (string, error) {
		return reviewSpecPrompt(sp), nil
	}))
}

// promptHandler reads the spec named by the spec_id argument and answers
// the text build makes of it as one user message.
func (d *Deps) promptHandler(build func(sp *specs.Spec, args map[string]string) (string, error)) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		id := req.Params.Arguments["spec_id"]
		if id == "" {
			return nil, promptError(core.Errorf(errcode.MissingRequired, "%s needs spec_id (spec list or the specd://specs resource lists them)", req.Params.Name))
		}
		if err := specs.CheckID("spec_id", id); err != nil {
			return nil, promptError(err)
		}
		var text, title string
		err := d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			var err error
			title = sp.Header.Title
			text, err = build(sp, req.Params.Arguments)
			return err
		})
		if err != nil {
			return nil, promptError(err)
		}
		return mcp.NewGetPromptResult(title, []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text)),
		}), nil
	}
}

// promptError is mcptool.PromptError for a spec's prompt.
func promptError(err error) error { return mcptool.PromptError(err, "the spec") }

// promptCompletion completes the prompts' arguments: spec_id from the
// stored spec ids (like the resource templates), phase_id from the phases
// of the spec named in the context's spec_id.
type promptCompletion struct{ d *Deps }

func (c promptCompletion) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	switch {
	case arg.Name == "spec_id" && knownPrompt(prompt):
		return specCompletion(c).CompleteResourceArgument(ctx, "", arg, cc)
	case arg.Name == "phase_id" && prompt == promptCompletePhase:
		id := cc.Arguments["spec_id"]
		if specs.CheckID("spec_id", id) != nil {
			return &mcp.Completion{Values: []string{}}, nil
		}
		var phases []string
		err := c.d.Specs.ReadSpec(ctx, id, func(sp *specs.Spec, _ specs.JournalReader) error {
			phases = nil // fn may run more than once (specs.Repo)
			for _, p := range specs.Phases(sp) {
				if strings.HasPrefix(p.ID, arg.Value) {
					phases = append(phases, p.ID)
				}
			}
			return nil
		})
		if err != nil {
			return &mcp.Completion{Values: []string{}}, nil
		}
		return mcptool.Completion(phases), nil
	}
	return &mcp.Completion{Values: []string{}}, nil
}

func knownPrompt(name string) bool {
	return name == promptStartFeature || name == promptCompletePhase || name == promptReviewSpec
}
