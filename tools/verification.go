package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/procrun"
	"github.com/specd/specd/flags/registry"
	"github.com/specd/specd/specs"
)

const verificationDescription = `Use this when a verify step of a spec has a result: add records PASSED, FAILED or PARTIAL with the output you saw (last 10 results are kept on the node), execute runs the node's command in the workspace root with a timeout and answers its exit code and output, recording them only with record: true (only on servers started with --enable-verification-execute). ` +
	`Use task instead to complete the verify node once it passes, and journal to explain a failure. ` +
	`Typical composition: task next → verification execute (or add) → task complete(verify_id) → task next.`

// Verification execute limits.
const (
	DefaultVerifyTimeout = 300 * time.Second
	MaxVerifyTimeout     = 3600 * time.Second
	// executeDeadline is execute's call deadline: the longest command
	// timeout plus time to record the result.
	executeDeadline = MaxVerifyTimeout + time.Minute
)

func verificationTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name:        "verification",
		Title:       "specd verification",
		Description: verificationDescription,
		Params: []mcptool.Param{
			pSpecID, pDryRun, pExpectedVersion,
			idParam("verify_id", "The verify node, e.g. verify-1-1."),
			{Name: "result", Type: mcptool.String, Enum: specs.VerificationResults, Synonyms: specs.VerificationResultSynonyms, Description: "PASSED, FAILED or PARTIAL."},
			{Name: "command", Type: mcptool.String, MaxLength: 2000, Description: "add: the command that was run (default: the node's command)."},
			{Name: "output", Type: mcptool.String, MaxLength: specs.MaxVerificationOutput, Description: "add: what the check printed (at most 10,000 characters)."},
			{Name: "issues", Type: mcptool.String, Description: "add: problems found."},
			{Name: "notes", Type: mcptool.String, Description: "add: anything else worth keeping."},
			{Name: "timeout_seconds", Type: mcptool.Integer, Min: f64(1), Max: f64(MaxVerifyTimeout.Seconds()), Description: "execute: kill the command after this many seconds (default 300)."},
			{Name: "record", Type: mcptool.Boolean, Description: "execute: record the result on the node (default false, as in foundry-mcp)."},
		},
		Actions: []mcptool.Action{
			{
				Name: "add", Summary: "Records a result on a verify node (history keeps the last 10; last_result is the newest) and journals it; the node's status does not change.",
				Required: []string{"spec_id", "verify_id", "result"}, Optional: append([]string{"command", "output", "issues", "notes"}, mutationArgs...),
				SideEffects: mcptool.EffectWrite, Latency: mcptool.LatencyFast, Answer: VerificationAnswer{}, Typed: mcptool.Typed(d.verificationAdd),
			},
			{
				Name: "execute", Summary: "Runs the node's command with sh -c in the workspace root (minimal environment, timeout, output truncated to 10,000 characters) and answers PASSED (exit 0) or FAILED, recorded like add only with record: true; off unless the server was started with --enable-verification-execute and feature flag verification_execute is on for this client.",
				Required: []string{"spec_id", "verify_id"}, Optional: append([]string{"timeout_seconds", "record"}, mutationArgs...),
				SideEffects: mcptool.EffectWrite, Destructive: true, OpenWorld: true, Latency: mcptool.LatencySlow, Deadline: executeDeadline, Answer: VerificationAnswer{}, Typed: mcptool.Typed(d.verificationExecute),
			},
		},
	}
}

// VerificationAnswer is a result recorded on a verify node (add, and
// execute with record: true, which adds what the command did).
type VerificationAnswer struct {
	Mutation
	specs.VerificationRecorded
	*ExecuteOutcome
}

// ExecuteOutcome is what execute's command did.
type ExecuteOutcome = specs.ExecuteOutcome

// VerificationRunAnswer is execute without record (the default): the
// outcome, not stored.
type VerificationRunAnswer struct {
	SpecID   string `json:"spec_id"`
	VerifyID string `json:"verify_id"`
	Result   string `json:"result"`
	Recorded bool   `json:"recorded"`
	ExecuteOutcome
}

// VerificationDryRunAnswer is execute with dry_run: what would run.
type VerificationDryRunAnswer struct {
	SpecID         string             `json:"spec_id"`
	VerifyID       string             `json:"verify_id"`
	Command        string             `json:"command"`
	TimeoutSeconds int                `json:"timeout_seconds"`
	Executed       bool               `json:"executed"`
	Recorded       bool               `json:"recorded"`
	Record         bool               `json:"record"`
	DryRun         bool               `json:"dry_run"`
	Changes        []specs.RepoChange `json:"changes"`
}

// The verification tool's typed arguments (mcptool.Typed).
type (
	// verifyNodeArgs name the verify node a call records on.
	verifyNodeArgs struct {
		writeArgs
		VerifyID string `arg:"verify_id,required"`
	}
	verificationAddArgs struct {
		verifyNodeArgs
		Result  string `arg:"result,required"`
		Command string `arg:"command"`
		Output  string `arg:"output"`
		Issues  string `arg:"issues"`
		Notes   string `arg:"notes"`
	}
	verificationExecuteArgs struct {
		verifyNodeArgs
		TimeoutSeconds *int `arg:"timeout_seconds"`
		Record         bool `arg:"record"`
	}
)

// recordVerification stores rec on verify node v with a journal note, as
// one mutation (specs.RecordVerificationNote).
func (d *Deps) recordVerification(ctx context.Context, r *mcptool.Request, v verifyNodeArgs, rec specs.VerificationRecord, run *ExecuteOutcome) mcptool.Result {
	return mutateTo(ctx, d, r, v.writeArgs, func(sp *specs.Spec, j specs.JournalWriter) (VerificationAnswer, error) {
		recorded, err := specs.RecordVerificationNote(sp, j, v.VerifyID, rec, author(r))
		return VerificationAnswer{VerificationRecorded: recorded, ExecuteOutcome: run}, err
	})
}

// verificationAdd records a result the agent obtained itself.
func (d *Deps) verificationAdd(ctx context.Context, r *mcptool.Request, a verificationAddArgs) mcptool.Result {
	return d.recordVerification(ctx, r, a.verifyNodeArgs, specs.VerificationRecord{Result: a.Result, Command: a.Command,
		Output: a.Output, Issues: a.Issues, Notes: a.Notes}, nil)
}

// verificationDisabled is the FEATURE_DISABLED answer of execute on a server
// started without the option.
func verificationDisabled(specID, verifyID string) *core.Error {
	e := core.NewError(errcode.FeatureDisabled, "verification execute is off on this server: it runs shell commands.",
		core.DetailsOf(featureDetail{Feature: registry.VerificationExecute})).
		WithRemediation("Run the step's command yourself (task info shows it), then record what happened with verification(action=\"add\", result=…); an operator can allow execute by starting specd with --enable-verification-execute and turning on the verification_execute flag.").
		WithNext(toTaskInfo.Call(taskNodeArgs{specArgs: specOf(specID), taskIDArg: taskIDArg{TaskID: verifyID}}), nil)
	e.Extra = core.DetailsOf(featureDetail{Feature: registry.VerificationExecute})
	return e
}

// workspaceDir returns the workspace root as a clean absolute directory, or
// UNAVAILABLE when the server has none.
func (d *Deps) workspaceDir() (string, error) {
	ws := d.Workspace
	if ws == "" || !filepath.IsAbs(ws) {
		return "", core.NewError(errcode.Unavailable, "The server has no absolute workspace root to run commands in.", core.DetailsOf(workspaceDetail{Workspace: ws})).
			WithRemediation("Restart specd with --workspace set to the project root.")
	}
	ws = filepath.Clean(ws)
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return "", core.NewError(errcode.Unavailable, "The workspace root is not a directory.", nil).
			WithRemediation("Restart specd with --workspace set to an existing project root.")
	}
	return ws, nil
}

// verifyCommand reads the command of verify node id in one read
// transaction. Errors: specs.VerifyNode's (checked first); FEATURE_DISABLED
// unless Deps.VerificationExecute; VALIDATION_ERROR (no command).
func (d *Deps) verifyCommand(ctx context.Context, specID, id string) (string, error) {
	var command string
	err := d.Specs.ReadSpec(ctx, specID, func(sp *specs.Spec, _ specs.JournalReader) error {
		n, err := specs.VerifyNode(sp, id)
		if err != nil {
			return err
		}
		if !d.VerificationExecute {
			// After the lookup: the recovery names this verify node.
			return verificationDisabled(specID, id)
		}
		command = n.MetaString("command")
		if command == "" {
			return core.FieldError(errcode.Validation, fmt.Sprintf("%s has no command to run (a manual check).", id),
				core.FieldDetail{Field: "verify_id", Received: id}).
				WithNext(toTaskUpdateMetadata.Call(taskMetadataArgs{lockedWriteArgs: lockedWriteArgs{writeArgs: writeArgs{specArgs: specOf(specID)}}, taskIDArg: taskIDArg{TaskID: id}, Command: new("<the check to run>")}), nil)
		}
		return nil
	})
	if err != nil {
		return "", withSpecNextCall(err, specID)
	}
	return command, nil
}

// verifyTimeout is the call's timeout: seconds (timeout_seconds) when
// given, else Deps.VerifyTimeout, else 300 s.
func (d *Deps) verifyTimeout(seconds *int) time.Duration {
	if seconds != nil {
		return time.Duration(*seconds) * time.Second
	}
	if d.VerifyTimeout > 0 {
		return d.VerifyTimeout
	}
	return DefaultVerifyTimeout
}

// runCommand runs command in dir through procrun.Run and reads what it did
// as an answer and a verification record (specs.CommandRun.Outcome); the
// error is ctx's when the call was cancelled while it ran.
func runCommand(ctx context.Context, command, dir string, timeout time.Duration) (specs.ExecuteOutcome, specs.VerificationRecord, error) {
	run := procrun.Run(ctx, command, dir, timeout)
	if err := ctx.Err(); err != nil {
		return specs.ExecuteOutcome{}, specs.VerificationRecord{}, err
	}
	out, rec := specs.CommandRun(run).Outcome(command, timeout)
	return out, rec, nil
}

// verificationExecute runs the verify node's command (read in one read
// transaction; no store lock is held while it runs) with sh -c in the
// workspace root, environment PATH, HOME and LANG only, and a timeout
// (timeout_seconds, default Deps.VerifyTimeout or 300 s); exit 0 is PASSED,
// anything else (timeout included) FAILED. The output (stdout and stderr
// interleaved) is truncated to 10,000 characters keeping its end. With
// record: true the result is recorded like add (expected_version is checked
// then); by default (as in foundry-mcp) nothing is stored. dry_run runs
// nothing and reports what would run.
//
// Errors: TASK_NOT_FOUND (checked first); FEATURE_DISABLED
// (details.feature "verification_execute") unless Deps.VerificationExecute; VALIDATION_ERROR (not a verify
// node, or no command); UNAVAILABLE (no workspace).
func (d *Deps) verificationExecute(ctx context.Context, r *mcptool.Request, a verificationExecuteArgs) mcptool.Result {
	specID, id := a.SpecID, a.VerifyID
	command, err := d.verifyCommand(ctx, specID, id)
	if err != nil {
		return mcptool.Fail(err)
	}
	dir, err := d.workspaceDir()
	if err != nil {
		return mcptool.Fail(err)
	}
	timeout := d.verifyTimeout(a.TimeoutSeconds)
	record := a.Record // default false, as in foundry-mcp
	if a.DryRun {
		return mcptool.OK(VerificationDryRunAnswer{SpecID: specID, VerifyID: id, Command: command, TimeoutSeconds: int(timeout.Seconds()),
			Record: record, DryRun: true, Changes: []specs.RepoChange{{Op: "update", Target: "node:" + id, Detail: "verification result"}}})
	}
	out, rec, err := runCommand(ctx, command, dir, timeout)
	if err != nil {
		return mcptool.Fail(err)
	}
	if !record {
		return mcptool.OK(VerificationRunAnswer{SpecID: specID, VerifyID: id, Result: rec.Result, ExecuteOutcome: out}, executeMeta(out)...)
	}
	res := d.recordVerification(ctx, r, a.verifyNodeArgs, rec, &out)
	if res.Err == nil {
		res.Meta = append(res.Meta, executeMeta(out)...)
	}
	return res
}

// executeMeta reports what a run's answer does not show in full: a
// command the timeout killed (a VERIFY_TIMED_OUT warning: its FAILED is
// the timeout's, not the command's), and output cut to its end (partial
// content fidelity, item:output dropped in part, a CONTENT_TRUNCATED
// warning).
func executeMeta(out specs.ExecuteOutcome) []core.MetaOption {
	var meta []core.MetaOption
	if out.TimedOut {
		meta = append(meta, warnOf("VERIFY_TIMED_OUT",
			fmt.Sprintf("The command did not finish within %d s and was killed; its result is FAILED by the timeout (a larger timeout_seconds may let it finish).", out.TimeoutSeconds),
			timeoutContext{TimeoutSeconds: out.TimeoutSeconds}))
	}
	if out.OutputTruncated {
		meta = append(meta, core.WithFidelity(core.FidelityPartial, []string{"item:output"}, nil),
			core.WithWarning(core.WarnContentTruncated, core.SeverityWarning,
				fmt.Sprintf("The command wrote %d bytes; only the end of its output is shown.", out.OutputBytes),
				core.DetailsOf(core.TruncationContext{DroppedCount: 1, TotalCount: 1, Reason: core.TruncatedOutputLimit, OutputBytes: out.OutputBytes})))
	}
	return meta
}
