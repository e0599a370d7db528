// Command specd is an MCP server (stdio by default, streamable HTTP for a
// shared server) and a CLI over the same tools, keeping coding agents' specs
// in an embedded bbolt store.
//
// Usage:
//
//	specd serve [flags]          serve MCP on stdio (or --transport http)
//	specd call TOOL JSON [flags] run one tool call and print its envelope
//	specd version                print the version
//
// stdout of "serve" on stdio carries JSON-RPC only; every log line goes to
// stderr through log/slog.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/cmd/specd/adapt"
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/tools"
)

// version is set at build time with -ldflags "-X main.version=…"; "go
// install" builds fall back to the module version.
var version = ""

func serverVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `specd — specs, tasks and research digests for coding agents, over MCP.

Usage:
  specd serve [flags]            serve MCP on stdio (default) or streamable HTTP
  specd call TOOL JSON [flags]   run one tool call, print its response-v2 envelope
  specd init                     write the default feature flag file to .specd/flags.json
  specd flags [eval --client ID] print the feature flags (and, with --url, a server's rollout health)
  specd version                  print the version

Run "specd serve -h" for the flags. Environment: SPECD_DB, SPECD_WORKSPACE,
SPECD_LOG_LEVEL, SPECD_LOCK_TIMEOUT, SPECD_DEADLINE, SPECD_VERIFICATION_EXECUTE,
SPECD_FLAGS, SPECD_CLIENT_ID.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "specd", serverVersion())
		return 0
	case "serve":
		return serve(args[1:], stdin, stdout, stderr)
	case "call":
		return callCmd(args[1:], stdout, stderr)
	case "init":
		return initCmd(args[1:], stdout, stderr)
	case "flags":
		return flagsCmd(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "specd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// config is the resolved configuration of one process.
type config struct {
	DB          string
	Workspace   string
	WorkspaceBy string
	LogLevel    slog.Level
	Transport   string
	Addr        string
	LockTimeout time.Duration
	Deadline    time.Duration
	Source      []string

	VerifyExec       bool          // verification execute may run shell commands
	VerifyTimeout    time.Duration // verification execute's default timeout
	TestCommand      string        // command of the "Run tests" verify node of new phases
	StrictComplete   bool          // task complete refuses pending tasks
	HistoryKeep      int           // versions of history kept per spec
	TokenBudget      int           // answer budget in tokens
	ArchiveRetention time.Duration // how long archived research content is kept (0 = forever)
	Flags            *flagsConfig  // feature flags (flagscmd.go)
}

// parseConfig reads flags, then environment, then defaults (in that order of
// precedence) for serve and call.
func parseConfig(name string, args []string, stderr io.Writer) (*config, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "store file (env SPECD_DB; default <workspace>/.specd/specd.db)")
	ws := fs.String("workspace", "", "workspace root (env SPECD_WORKSPACE; default: the git repository's root shared by its worktrees, else the current directory)")
	level := fs.String("log-level", "", "log level: debug, info, warn, error (env SPECD_LOG_LEVEL; default info)")
	transport := fs.String("transport", "stdio", "stdio or http")
	addr := fs.String("addr", "127.0.0.1:7777", "listen address for --transport http")
	lockTimeout := fs.Duration("lock-timeout", 0, "longest wait for another process's store lock (env SPECD_LOCK_TIMEOUT; default 5s)")
	deadline := fs.Duration("deadline", 0, "deadline of one tool call (env SPECD_DEADLINE; default 30s)")
	verifyExec := fs.Bool("enable-verification-execute", false, "let verification execute run verify nodes' commands in the workspace (env SPECD_VERIFICATION_EXECUTE=1; default off)")
	verifyTimeout := fs.Duration("verify-timeout", 0, "default timeout of verification execute (env SPECD_VERIFY_TIMEOUT; default 300s)")
	testCommand := fs.String("test-command", "", "command of the \"Run tests\" verify step new phases get (env SPECD_TEST_COMMAND; default none: a manual step)")
	strict := fs.Bool("strict-complete", false, "task complete refuses tasks that were never started (env SPECD_STRICT_COMPLETE=1)")
	historyKeep := fs.Int("history-keep", 0, "versions of history kept per spec (env SPECD_HISTORY_KEEP; default 50)")
	tokenBudget := fs.Int("token-budget", 0, "answer budget in tokens, bytes/4 (env SPECD_TOKEN_BUDGET; default 25000)")
	retention := fs.Duration("archive-retention", -1, "how long archived research content is kept; 0 keeps it forever (env SPECD_ARCHIVE_RETENTION; default 720h)")
	flagsCfg := registerFlagsConfig(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	c := &config{Transport: *transport, Addr: *addr, Flags: flagsCfg}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	source := func(flagName, env string) string {
		switch {
		case set[flagName]:
			return "flag"
		case os.Getenv(env) != "":
			return "env"
		default:
			return "default"
		}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, nil, err
	}
	c.Workspace, c.WorkspaceBy = resolveWorkspace(firstNonEmpty(*ws, os.Getenv("SPECD_WORKSPACE")), cwd)
	if err := c.Flags.resolve(c.Workspace); err != nil {
		return nil, nil, err
	}
	c.DB = firstNonEmpty(*db, os.Getenv("SPECD_DB"))
	if c.DB == "" {
		c.DB = filepath.Join(c.Workspace, ".specd", "specd.db")
	}
	if c.DB, err = filepath.Abs(c.DB); err != nil {
		return nil, nil, err
	}
	if c.LogLevel, err = parseLevel(firstNonEmpty(*level, os.Getenv("SPECD_LOG_LEVEL"), "info")); err != nil {
		return nil, nil, err
	}
	if c.LockTimeout, err = durationOr(*lockTimeout, "SPECD_LOCK_TIMEOUT", store.DefaultLockTimeout); err != nil {
		return nil, nil, err
	}
	if c.Deadline, err = durationOr(*deadline, "SPECD_DEADLINE", tools.DefaultDeadline); err != nil {
		return nil, nil, err
	}
	c.VerifyExec = *verifyExec || os.Getenv("SPECD_VERIFICATION_EXECUTE") == "1"
	c.StrictComplete = *strict || os.Getenv("SPECD_STRICT_COMPLETE") == "1"
	c.TestCommand = firstNonEmpty(*testCommand, os.Getenv("SPECD_TEST_COMMAND"))
	if c.VerifyTimeout, err = durationOr(*verifyTimeout, "SPECD_VERIFY_TIMEOUT", 300*time.Second); err != nil {
		return nil, nil, err
	}
	if c.HistoryKeep, err = intOr(*historyKeep, "SPECD_HISTORY_KEEP", store.DefaultHistoryKeep, 1, 10_000); err != nil {
		return nil, nil, err
	}
	if c.TokenBudget, err = intOr(*tokenBudget, "SPECD_TOKEN_BUDGET", core.DefaultTokenBudget, 1_000, 1_000_000); err != nil {
		return nil, nil, err
	}
	c.ArchiveRetention = tools.DefaultArchiveRetention
	switch {
	case *retention >= 0:
		c.ArchiveRetention = *retention
	case os.Getenv("SPECD_ARCHIVE_RETENTION") != "":
		d, perr := time.ParseDuration(os.Getenv("SPECD_ARCHIVE_RETENTION"))
		if perr != nil || d < 0 {
			return nil, nil, fmt.Errorf("SPECD_ARCHIVE_RETENTION=%q is not a duration ≥ 0", os.Getenv("SPECD_ARCHIVE_RETENTION"))
		}
		c.ArchiveRetention = d
	}
	if c.Transport != "stdio" && c.Transport != "http" {
		return nil, nil, fmt.Errorf("--transport must be stdio or http, not %q", c.Transport)
	}
	c.Source = []string{
		"db=" + source("db", "SPECD_DB"),
		"workspace=" + c.WorkspaceBy,
		"log-level=" + source("log-level", "SPECD_LOG_LEVEL"),
	}
	return c, fs.Args(), nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func durationOr(flagValue time.Duration, env string, def time.Duration) (time.Duration, error) {
	if flagValue > 0 {
		return flagValue, nil
	}
	if v := os.Getenv(env); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%s=%q is not a positive duration", env, v)
		}
		return d, nil
	}
	return def, nil
}

// intOr reads an integer setting from its flag (when > 0), else the
// environment, else def, and checks it lies in [lo, hi].
func intOr(flagValue int, env string, def, lo, hi int) (int, error) {
	v := def
	switch {
	case flagValue > 0:
		v = flagValue
	case os.Getenv(env) != "":
		n, err := strconv.Atoi(os.Getenv(env))
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not a number", env, os.Getenv(env))
		}
		v = n
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s must be between %d and %d, not %d", strings.ToLower(strings.TrimPrefix(env, "SPECD_")), lo, hi, v)
	}
	return v, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

// build opens the store and assembles the tools over it.
func build(c *config, logger *slog.Logger, transports []string) (*store.Store, *tools.Deps, error) {
	st, err := store.Open(store.Options{Path: c.DB, LockTimeout: c.LockTimeout, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	deps := &tools.Deps{
		Store:        adapt.Health(st),
		Specs:        st,
		Research:     adapt.Research(st),
		Version:      serverVersion(),
		Workspace:    c.Workspace,
		ConfigSource: strings.Join(c.Source, ", "),
		Transports:   transports,
		Started:      time.Now(),
		TokenBudget:  c.TokenBudget,
		Runtime:      tools.Runtime{Logger: logger, Deadline: c.Deadline},
	}
	deps.VerificationExecute = c.VerifyExec
	deps.VerifyTimeout = c.VerifyTimeout
	deps.TestCommand = c.TestCommand
	deps.StrictComplete = c.StrictComplete
	deps.HistoryKeep = c.HistoryKeep
	deps.ArchiveRetention = c.ArchiveRetention
	if err := attachFlags(c, logger, deps, st); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, deps, nil
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, _, err := parseConfig("serve", args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.LogLevel}))
	slog.SetDefault(logger)
	st, deps, err := build(c, logger, []string{c.Transport})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer st.Close()
	defer closeFlags(deps)
	srv, _ := tools.NewMCPServer(deps)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch c.Transport {
	case "http":
		httpSrv := server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp"))
		logger.Info("serving MCP over streamable HTTP", "addr", c.Addr, "endpoint", "/mcp", "store", c.DB, "version", deps.Version)
		errc := make(chan error, 1)
		go func() { errc <- httpSrv.Start(c.Addr) }()
		select {
		case err := <-errc:
			if err != nil {
				logger.Error("http server stopped", "err", err)
				return 1
			}
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = httpSrv.Shutdown(sctx)
		}
		return 0
	default:
		if isTerminal(stdin) {
			fmt.Fprint(stderr, connectHelp(c))
		}
		logger.Debug("serving MCP on stdio", "store", c.DB, "workspace", c.Workspace, "version", deps.Version)
		stdio := server.NewStdioServer(srv)
		stdio.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
		if err := stdio.Listen(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			logger.Error("stdio server stopped", "err", err)
			return 1
		}
		return 0
	}
}

// isTerminal reports whether r is a character device (a person at a terminal).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func connectHelp(c *config) string {
	exe, err := os.Executable()
	if err != nil {
		exe = "specd"
	}
	return fmt.Sprintf(`specd %s is waiting for an MCP client on stdin/stdout.
It is meant to be started by an agent, not typed at. To connect one:

  Claude Code:     claude mcp add specd -- %s serve
  Claude Desktop / Cursor (mcpServers in their JSON config):
                   {"specd": {"command": "%s", "args": ["serve"]}}

Store:     %s
Workspace: %s
Press Ctrl-C to quit.
`, serverVersion(), exe, exe, c.DB, c.Workspace)
}

// callCmd runs one tool call through the same dispatcher the MCP server uses
// and prints the envelope. Exit status 0 on success, 1 on a failure envelope.
func callCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, `usage: specd call TOOL '{"action":"…", …}' [flags]`)
		return 2
	}
	toolName, rawArgs := args[0], args[1]
	c, _, err := parseConfig("call", args[2:], stderr)
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: c.LogLevel}))
	st, deps, err := build(c, logger, []string{"cli"})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer st.Close()
	defer closeFlags(deps)
	reg := tools.New(deps)
	t, ok := reg.Tool(toolName)
	if !ok {
		fmt.Fprintf(stderr, "specd: no tool %q; tools: %s\n", toolName, strings.Join(reg.Names(), ", "))
		return 2
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(rawArgs), &m); err != nil {
		fmt.Fprintln(stderr, "specd: arguments must be a JSON object:", err)
		return 2
	}
	env := reg.Dispatch(context.Background(), t, m, tools.Session{ID: "cli", ClientName: "specd-cli"}, deps.Runtime)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(env)
	if !env.Success {
		return 1
	}
	return 0
}
