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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/procrun"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/tools"
)

// version is set at build time with -ldflags "-X main.version=…"; other
// builds fall back to what the Go toolchain stamped (versionFromBuild).
var version = ""

func serverVersion() string {
	if version != "" {
		return version
	}
	bi, _ := debug.ReadBuildInfo() // nil when not ok
	return versionFromBuild(bi)
}

// versionFromBuild is the version of a build without -ldflags: the main
// module's version ("go install …@v1.2.3", or the pseudo-version Go stamps
// from VCS), else the VCS revision (12 hex digits, "-dirty" when
// vcs.modified), else "dev".
func versionFromBuild(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	if rev := vcsRevision(bi.Settings); rev != "" {
		return rev
	}
	return "dev"
}

// vcsRevision is the VCS revision the toolchain stamped, shortened to 12
// hex digits and marked "-dirty" when vcs.modified; "" when there is none.
func vcsRevision(settings []debug.BuildSetting) string {
	rev, dirty := "", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return ""
	}
	rev = rev[:min(len(rev), 12)]
	if dirty {
		rev += "-dirty"
	}
	return rev
}

// exitTimeout bounds closing the store and the flags service after a
// call's envelope is printed: nothing of the call is left to write by then
// (bbolt commits are durable on return; etcd keeps no client-side state), so
// a close that does not end in time is left to the process's exit.
const exitTimeout = time.Second

// closeWithin runs closeAll, waiting for it at most d.
func closeWithin(d time.Duration, logger *slog.Logger, closeAll func()) {
	done := make(chan struct{})
	go func() { defer close(done); closeAll() }()
	select {
	case <-done:
	case <-time.After(d):
		logger.Warn("closing the store did not end in time; exiting without waiting", "waited", d)
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `specd — specs, tasks and research digests for coding agents, over MCP.

Usage:
  specd serve [flags]            serve MCP on stdio (default) or streamable HTTP
  specd call TOOL JSON [flags]   run one tool call, print its response-v2 envelope
  specd spec list                a table of the specs with their progress (--json: the envelope)
  specd spec show SPEC_ID        a spec's phase → task tree: status, progress, who holds what, blockers
  specd task next SPEC_ID        the next task to start
  specd journal SPEC_ID          the spec's journal, newest first (--limit N, --cursor C)
  specd board [--addr A]         serve the live board on loopback and print its URL
  specd init                     write the default feature flag file to .specd/flags.json
  specd flags [eval --client ID] print the feature flags (and, with --url, a server's rollout health)
  specd version                  print the version
  specd backup PATH [--force]    write a consistent copy of the store (safe while servers run)
  specd migrate --from URL --to URL  copy a store between bolt://PATH and etcd://h1:2379,.../prefix, then verify counts and hashes
  specd check                    check the store file and every spec; exit 1 on any problem
  specd mirror status|sync --mirror DIR  bring the spec files in DIR up to date; list hand-edited ones

Run "specd serve -h" for the flags, their defaults and their environment
variables (SPECD_DB, SPECD_WORKSPACE, SPECD_LOG_LEVEL, SPECD_LOG_FORMAT,
SPECD_FLAGS, SPECD_CLIENT_ID, …). A flag wins over its variable; booleans
take 1/0, true/false, yes/no, on/off.
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "specd: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cmd(args[1:], stdin, stdout, stderr)
}

// command runs one subcommand with the arguments after its name and returns
// the process's exit status.
type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands are the subcommands by name (with the other spellings of
// version and help).
var commands = map[string]command{
	"version":   withoutStdin(versionCmd),
	"--version": withoutStdin(versionCmd),
	"-v":        withoutStdin(versionCmd),
	"help":      withoutStdin(helpCmd),
	"-h":        withoutStdin(helpCmd),
	"--help":    withoutStdin(helpCmd),
	"serve":     serve,
	"call":      withoutStdin(callCmd),
	"spec":      withoutStdin(personGroupCmd("spec")),
	"task":      withoutStdin(personGroupCmd("task")),
	"journal":   withoutStdin(journalCmd),
	"board":     boardCmd,
	"init":      withoutStdin(initCmd),
	"flags":     withoutStdin(flagsCmd),
	"keys":      withoutStdin(keysCmd),
	"backup":    withoutStdin(backupCmd),
	"check":     withoutStdin(checkCmd),
	"migrate":   withoutStdin(migrateCmd),
	"mirror":    withoutStdin(mirrorCmd),
}

// withoutStdin adapts a command that reads no standard input.
func withoutStdin(f func(args []string, stdout, stderr io.Writer) int) command {
	return func(args []string, _ io.Reader, stdout, stderr io.Writer) int { return f(args, stdout, stderr) }
}

// versionCmd prints the version; it takes no arguments and ignores any.
func versionCmd(_ []string, stdout, _ io.Writer) int {
	fmt.Fprintln(stdout, "specd", serverVersion())
	return 0
}

// helpCmd prints the usage on stdout.
func helpCmd(_ []string, stdout, _ io.Writer) int {
	fmt.Fprint(stdout, usage)
	return 0
}

// config is the resolved configuration of one process.
type config struct {
	DB          string
	Store       string // etcd:// URL when the store is a cluster (storeurl.go); "" for the bbolt file DB
	Workspace   string
	WorkspaceBy string
	LogLevel    slog.Level
	LogFormat   string // text or json
	Transport   string
	Addr        string
	LockTimeout time.Duration
	Deadline    time.Duration
	Source      []string          // the summary of config_source (db, workspace, log-level)
	Sources     map[string]string // every setting's source: flag, env or default

	VerifyExec       bool          // verification execute may run shell commands
	VerifyTimeout    time.Duration // verification execute's default timeout
	TestCommand      string        // command of the "Run tests" verify node of new phases
	StrictComplete   bool          // task complete refuses pending tasks
	AllowGateWaiver  bool          // task gate-waiver is enabled
	AllowLockBypass  bool          // the autonomy write lock may be bypassed
	HistoryKeep      int           // versions of history kept per spec
	TokenBudget      int           // answer budget in tokens
	ArchiveRetention time.Duration // how long archived research content is kept (0 = forever)
	Flags            *flagsConfig  // feature flags (flagscmd.go)
	HTTP             *httpConfig   // shared HTTP server (httpserve.go)
	Toolsets         []string      // the tools offered (nil: every tool)
	ReadOnly         bool          // offer only read actions
	Mirror           string        // spec mirror folder, "" for none (mirrorcmd.go)

	// callCtx, when set, is the context of the one call this process makes
	// (specd call), with its general deadline: the store reads that are not
	// the tool's own (the flag identity's install id, installIDLoader) wait
	// within it.
	callCtx context.Context
}

// build opens the store and assembles the tools over it.
func build(c *config, logger *slog.Logger, transports []string) (bucketstore.Store, *tools.Deps, error) {
	st, err := openStore(c, logger)
	if err != nil {
		return nil, nil, err
	}
	deps := &tools.Deps{
		Version:       serverVersion(),
		Workspace:     c.Workspace,
		ConfigSource:  strings.Join(c.Source, ", "),
		ConfigSources: c.Sources,
		Transports:    transports,
		Started:       time.Now(),
		TokenBudget:   c.TokenBudget,
		Runtime:       mcptool.Runtime{Logger: logger, Deadline: c.Deadline},
	}
	deps.OverStore(st) // the domain stores over the engine: specs, research, notes
	deps.VerificationExecute = c.VerifyExec
	deps.VerifyTimeout = c.VerifyTimeout
	deps.TestCommand = c.TestCommand
	deps.StrictComplete = c.StrictComplete
	deps.AllowGateWaiver, deps.AllowLockBypass = c.AllowGateWaiver, c.AllowLockBypass
	deps.HistoryKeep = c.HistoryKeep
	deps.ArchiveRetention = c.ArchiveRetention
	deps.Toolsets, deps.ReadOnly = c.Toolsets, c.ReadOnly
	if err := attachFlags(c, logger, deps, st); err != nil {
		st.Close()
		return nil, nil, err
	}
	if err := attachMirror(c, logger, deps, st); err != nil {
		closeFlags(deps)
		st.Close()
		return nil, nil, err
	}
	return st, deps, nil
}

func serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return serveWith(args, stdin, stdout, stderr, nil)
}

// serveWith is serve; listening, when set, hears the HTTP server's address
// once it listens (specd board prints its URL).
func serveWith(args []string, stdin io.Reader, stdout, stderr io.Writer, listening func(addr string)) int {
	c, _, code := commandConfig("serve", args, stderr)
	if c == nil {
		return code
	}
	logger := newLogger(c, stderr)
	slog.SetDefault(logger)
	procrun.Protect(logger)
	st, deps, err := build(c, logger, []string{c.Transport})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer st.Close()
	defer closeFlags(deps)
	access := httpAccess(c, deps)
	srv, reg := tools.NewMCPServer(deps)
	defer reg.FlushErrors(context.Background()) // before the store closes
	c.HTTP.listening = listening
	attachBoard(c, deps, reg, logger)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer runMirror(ctx, deps, st)() // before the store closes

	if c.Transport == "http" {
		return serveHTTP(ctx, c, deps, srv, logger, access)
	}
	return serveStdio(ctx, c, deps, srv, logger, stdin, stdout, stderr)
}

// serveStdio serves MCP on stdin/stdout until ctx ends or stdin does
// (exit 0), or the stdio server fails (exit 1, logged). A person at a
// terminal is told first how to connect an agent instead.
func serveStdio(ctx context.Context, c *config, deps *tools.Deps, srv *server.MCPServer, logger *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
	if isTerminal(stdin) {
		fmt.Fprint(stderr, connectHelp(c))
	}
	logger.Debug("serving MCP on stdio", "store", c.storeName(), "workspace", c.Workspace, "version", deps.Version)
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(slog.NewLogLogger(logger.Handler(), slog.LevelError))
	err := stdio.Listen(ctx, mcptool.StdioInput(stdin, core.MaxMessageBytes, logger), mcptool.StdioOutput(stdout))
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil // a signal, or the client closed stdin: a normal end
	}
	if err != nil {
		logger.Error("stdio server stopped", "err", err)
		return 1
	}
	return 0
}

// commandConfig is parseConfig for a command that -h ends with exit 0: it
// returns the configuration and the arguments left, or a nil configuration
// and the exit status: 0 after -h (the flag set printed the help), 2 after
// an unknown flag or a setting that does not parse (printed on stderr).
func commandConfig(name string, args []string, stderr io.Writer) (*config, []string, int) {
	c, rest, err := parseConfig(name, args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, nil, 0
	case err != nil:
		fmt.Fprintln(stderr, "specd:", err)
		return nil, nil, 2
	}
	return c, rest, 0
}

// parseFlags parses args into fs, which prints its own errors and help;
// when parsing fails ok is false and code is the exit status: 0 after -h,
// 2 otherwise.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case err != nil:
		return 2, false
	}
	return 0, true
}

// isHelp reports whether arg asks for help (-h, -help, --help, as the flag
// package reads them).
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "--h"
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
// Every CLI call is one agent, "cli" (its claims' started_by): a task started
// with one `specd call` can be completed with the next.
//
// The call's deadline (--deadline, or the action's own when longer) runs
// from the start of the command and bounds its set-up (the store's dial,
// the flag identity's install-id read) as well as the tool call: on an
// unreachable etcd cluster the envelope is printed at the deadline. Closing
// the store and the flags after it is bounded too (exitTimeout).
func callCmd(args []string, stdout, stderr io.Writer) int {
	start := time.Now()
	if len(args) < 2 || isHelp(args[0]) {
		fmt.Fprintln(stderr, `usage: specd call TOOL '{"action":"…", …}' [flags]`)
		if len(args) > 0 && isHelp(args[0]) {
			return 0
		}
		return 2
	}
	toolName, rawArgs := args[0], args[1]
	c, _, code := commandConfig("call", args[2:], stderr)
	if c == nil {
		return code
	}
	setup, cancelSetup := context.WithDeadline(context.Background(), start.Add(c.Deadline))
	defer cancelSetup()
	c.callCtx = setup
	quietOneShot(c)
	logger := newLogger(c, stderr)
	st, deps, err := build(c, logger, []string{"cli"})
	if err != nil {
		fmt.Fprintln(stderr, "specd:", err)
		return 1
	}
	defer closeWithin(exitTimeout, logger, func() { closeFlags(deps); st.Close() })
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
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(callDeadline(t, m, c.Deadline)))
	defer cancel()
	bar := startProgress(stderr, "specd call "+toolName) // spec import/export of many specs take a while
	env := reg.Dispatch(ctx, t, m, mcptool.Session{ID: "cli", ClientName: "specd-cli", Holder: "cli"}, deps.Runtime)
	bar.Done()
	printJSON(stdout, env)
	syncMirrorOnce(ctx, deps)
	return exitStatus(env)
}

// callDeadline is the deadline of the tool call of t with args, by the
// dispatcher's rule: the action's own when it is longer than general, else
// general (the set-up keeps general either way).
func callDeadline(t *mcptool.Tool, args map[string]any, general time.Duration) time.Duration {
	name, _ := args["action"].(string)
	if a, ok := t.Action(name); ok && name != "" && a.Deadline > general {
		return a.Deadline
	}
	return general
}

// exitStatus is the exit status of a command that printed env: 0 on
// success, 1 on a failure envelope.
func exitStatus(env core.Envelope) int {
	if !env.Success {
		return 1
	}
	return 0
}
