package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/toolchain"
	"github.com/specd/specd/flags/registry"
)

// maxTestFiles bounds test discover's list.
const maxTestFiles = 200

// testTarget is what test run accepts as target: package patterns and
// relative paths, no shell syntax, no leading dot (testRun also refuses
// a .. segment and a leading "-", which the runner would take as an option).
var testTarget = regexp.MustCompile(`^[A-Za-z0-9_@+-][A-Za-z0-9_./:@+-]*$`)

func testRunTool(d *Deps) *mcptool.Tool {
	return &mcptool.Tool{
		Name: "test", Title: "specd test",
		Description: "Use this when you need the tests or to run them. Use verification instead to record results. test discover → test run.",
		Params: []mcptool.Param{
			{Name: "target", Type: mcptool.String, MaxLength: 500, Pattern: testTarget.String(), Description: "run: appended to the command."},
		},
		Actions: []mcptool.Action{
			{Name: "discover", Summary: "The test runner and up to 200 test files of the workspace.", SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyModerate,
				Example: mcptool.ArgsOf(noArgs{}), Answer: TestDiscoverAnswer{}, Typed: mcptool.Typed(d.testDiscover)},
			{Name: "run", Summary: "Runs the detected test command (plus target) like verification execute: sh -c in the workspace, minimal environment, timeout, output tail kept.",
				Optional: []string{"target"}, SideEffects: mcptool.EffectWrite, Destructive: true, OpenWorld: true, Latency: mcptool.LatencySlow, Deadline: executeDeadline,
				Answer: TestRunAnswer{}, Typed: mcptool.Typed(d.testRun)},
		},
	}
}

// TestDiscoverAnswer is test discover's answer.
type TestDiscoverAnswer struct {
	TestRunnerAnswer
	Files     []string `json:"files"`
	Count     int      `json:"count"`
	Truncated bool     `json:"truncated"`
}

// TestRunAnswer is test run's answer.
type TestRunAnswer struct {
	Result string `json:"result"` // PASSED (exit 0) or FAILED
	ExecuteOutcome
}

func (d *Deps) testDiscover(ctx context.Context, _ *mcptool.Request, _ noArgs) mcptool.Result {
	ks, ws, err := d.workspaceKinds()
	if err != nil {
		return mcptool.Fail(err)
	}
	defer func() { _ = ws.Close() }()
	files, more, err := toolchain.TestFiles(ctx, ws, ks, maxTestFiles)
	a := TestDiscoverAnswer{Files: files, Count: len(files), Truncated: more}
	a.TestRunnerAnswer = testRunnerOf(ks)
	return answer(a, err)
}

// testRunDisabled is FEATURE_DISABLED of test run on a server started
// without --enable-verification-execute.
func testRunDisabled() *core.Error {
	e := core.NewError(errcode.FeatureDisabled, "test run is off on this server: it runs shell commands.", core.DetailsOf(featureDetail{Feature: registry.VerificationExecute})).
		WithRemediation("Run the command test discover names yourself; an operator can allow test run by starting specd with --enable-verification-execute and turning on the verification_execute flag.").
		WithNext(testDiscoverCall(), nil)
	e.Extra = core.DetailsOf(featureDetail{Feature: registry.VerificationExecute})
	return e
}

// testRun runs the primary kind's test command (with target) through
// runCommand, under the same ceiling and flag as verification
// execute. Errors: FEATURE_DISABLED; NOT_FOUND when no test runner is
// detected; UNAVAILABLE (no workspace); INVALID_FORMAT for a target with
// a .. segment or one starting with "-" (it would reach the runner as an
// option).
func (d *Deps) testRun(ctx context.Context, _ *mcptool.Request, a testRunArgs) mcptool.Result {
	if t := a.Target; strings.Contains("/"+t+"/", "/../") {
		return mcptool.Fail(core.FieldError(errcode.InvalidFormat, fmt.Sprintf("target %q leaves the workspace (a .. segment).", t),
			core.FieldDetail{Field: "target", Received: t}).
			WithNext(testDiscoverCall(), nil))
	}
	if t := a.Target; strings.HasPrefix(t, "-") {
		return mcptool.Fail(core.FieldError(errcode.InvalidFormat, fmt.Sprintf("target %q starts with \"-\": the test runner would read it as an option, not a target.", t),
			core.FieldDetail{Field: "target", Received: t}).
			WithRemediation("Pass a package pattern, test path or make target that does not start with \"-\" (e.g. ./pkg/... or unit); options of the test runner are not accepted.").
			WithNext(testDiscoverCall(), nil))
	}
	if !d.VerificationExecute {
		return mcptool.Fail(testRunDisabled())
	}
	ks, err := d.kinds()
	if err != nil {
		return mcptool.Fail(err)
	}
	if len(ks) == 0 {
		return mcptool.Fail(core.NewError(errcode.NotFound, "No test runner detected in the workspace (no go.mod, package.json, pyproject.toml, Cargo.toml or Makefile).", nil).
			WithNext(toEnvironmentDetect.Call(noArgs{}), nil))
	}
	dir, err := d.workspaceDir()
	if err != nil {
		return mcptool.Fail(err)
	}
	command := ks[0].TestCommand
	if t := a.Target; t != "" {
		command = fmt.Sprintf("%s %s", command, t)
	}
	out, rec, err := runCommand(ctx, command, dir, d.verifyTimeout(nil))
	if err != nil {
		return mcptool.Fail(err)
	}
	return mcptool.OK(TestRunAnswer{Result: rec.Result, ExecuteOutcome: out})
}

// testRunArgs are test run's typed arguments (mcptool.Typed).
type testRunArgs struct {
	Target string `arg:"target"`
}
