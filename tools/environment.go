package tools

import (
	"context"
	"runtime"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/toolchain"
	"github.com/specd/specd/core/workspacefs"
)

func environmentTool(d *Deps) *mcptool.Tool {
	read := func(name, summary string, answer any, h mcptool.Handler) mcptool.Action {
		return mcptool.Action{Name: name, Summary: summary, SideEffects: mcptool.EffectRead, Idempotent: true, Latency: mcptool.LatencyFast,
			Example: mcptool.ArgsOf(noArgs{}), Answer: answer, Typed: withoutArgs(h)}
	}
	return &mcptool.Tool{
		Name: "environment", Title: "specd environment",
		Description: "Use this when you need the project kind or toolchain. Use test instead to run tests. detect → test discover.",
		Actions: []mcptool.Action{
			read("detect", "Project kinds from marker files (go.mod, package.json, pyproject.toml, Cargo.toml, Makefile).", EnvDetectAnswer{}, d.envDetect),
			read("detect-test-runner", "The primary kind's test runner and command.", TestRunnerAnswer{}, d.envTestRunner),
			read("verify-toolchain", "Whether git, sh and each kind's programs are on PATH.", ToolchainAnswer{}, d.envToolchain),
			read("verify-env", "Workspace, store and toolchain checks together; ok when all pass.", VerifyEnvAnswer{}, d.envVerify),
			read("get-config", "specd's configuration and where each setting came from.", EnvConfigAnswer{}, d.envConfig),
			read("init", "foundry's init: specd keeps specs in its store, so nothing is written; says what is ready.", EnvInitAnswer{}, d.envInit),
			read("setup", "foundry's setup: as init.", EnvInitAnswer{}, d.envInit),
		},
	}
}

// EnvDetectAnswer is environment detect's answer.
type EnvDetectAnswer struct {
	Kinds []toolchain.Kind `json:"kinds"`
	Count int              `json:"count"`
}

// TestRunnerAnswer is detect-test-runner's answer (found false: no kind).
type TestRunnerAnswer struct {
	Found       bool   `json:"found"`
	Kind        string `json:"kind,omitempty"`
	TestRunner  string `json:"test_runner,omitempty"`
	TestCommand string `json:"test_command,omitempty"`
}

// ToolchainAnswer is verify-toolchain's answer.
type ToolchainAnswer struct {
	Programs []toolchain.Program `json:"programs"`
	OK       bool                `json:"ok"`
}

// VerifyEnvAnswer is verify-env's answer.
type VerifyEnvAnswer struct {
	Workspace bool                `json:"workspace_ok"`
	Store     bool                `json:"store_ok"`
	Programs  []toolchain.Program `json:"programs"`
	OS        string              `json:"os"`
	OK        bool                `json:"ok"`
}

// EnvConfigAnswer is get-config's answer.
type EnvConfigAnswer struct {
	Version             string            `json:"version"`
	Transports          []string          `json:"transports"`
	TokenBudget         int               `json:"token_budget"`
	VerificationExecute bool              `json:"verification_execute"`
	ReadOnly            bool              `json:"read_only"`
	Toolsets            []string          `json:"toolsets"`
	Sources             map[string]string `json:"config_sources"`
}

// EnvInitAnswer is init's and setup's answer.
type EnvInitAnswer struct {
	Written []string `json:"written"`
	Ready   bool     `json:"ready"`
	Note    string   `json:"note"`
}

// workspaceKinds opens the workspace and detects its kinds; the caller
// closes the workspace.
func (d *Deps) workspaceKinds() ([]toolchain.Kind, *workspacefs.Dir, error) {
	ws, err := workspacefs.Open(d.Workspace)
	if err != nil {
		return nil, nil, err
	}
	return toolchain.Detect(ws), ws, nil
}

// kinds is the workspace's kinds, primary first.
func (d *Deps) kinds() ([]toolchain.Kind, error) {
	ks, ws, err := d.workspaceKinds()
	if err != nil {
		return nil, err
	}
	_ = ws.Close()
	return ks, nil
}

// testRunnerOf is the primary kind's test runner (Found false without one).
func testRunnerOf(ks []toolchain.Kind) TestRunnerAnswer {
	if len(ks) == 0 {
		return TestRunnerAnswer{}
	}
	return TestRunnerAnswer{Found: true, Kind: ks[0].Name, TestRunner: ks[0].TestRunner, TestCommand: ks[0].TestCommand}
}

func (d *Deps) envDetect(_ context.Context, _ *mcptool.Request) mcptool.Result {
	ks, err := d.kinds()
	return answer(EnvDetectAnswer{Kinds: ks, Count: len(ks)}, err)
}

func (d *Deps) envTestRunner(_ context.Context, _ *mcptool.Request) mcptool.Result {
	ks, err := d.kinds()
	return answer(testRunnerOf(ks), err)
}

func (d *Deps) envToolchain(_ context.Context, _ *mcptool.Request) mcptool.Result {
	ks, err := d.kinds()
	ps := toolchain.Programs(ks)
	return answer(ToolchainAnswer{Programs: ps, OK: toolchain.AllFound(ps)}, err)
}

func (d *Deps) envVerify(ctx context.Context, _ *mcptool.Request) mcptool.Result {
	ks, err := d.kinds()
	a := VerifyEnvAnswer{OS: runtime.GOOS, Workspace: err == nil, Programs: toolchain.Programs(ks)}
	a.Store = d.Store != nil && d.Store.CheckWritable(ctx) == nil
	a.OK = a.Workspace && a.Store && toolchain.AllFound(a.Programs)
	return mcptool.OK(a)
}

func (d *Deps) envConfig(_ context.Context, _ *mcptool.Request) mcptool.Result {
	sources := d.ConfigSources
	if sources == nil {
		sources = map[string]string{}
	}
	toolsets := d.Toolsets
	if toolsets == nil {
		toolsets = []string{}
	}
	return mcptool.OK(EnvConfigAnswer{Version: d.Version, Transports: d.Transports, TokenBudget: d.TokenBudget,
		VerificationExecute: d.VerificationExecute, ReadOnly: d.ReadOnly, Toolsets: toolsets, Sources: sources})
}

func (d *Deps) envInit(ctx context.Context, _ *mcptool.Request) mcptool.Result {
	ready := d.Store != nil && d.Store.CheckWritable(ctx) == nil
	return mcptool.OK(EnvInitAnswer{Written: []string{}, Ready: ready,
		Note: "specd keeps specs in its store, so no specs/ folders or config files are needed; spec export writes foundry's layout when you want files."})
}
