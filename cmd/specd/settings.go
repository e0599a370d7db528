package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/specd/specd/cmd/specd/board"
	"github.com/specd/specd/core"
	"github.com/specd/specd/core/httpguard"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store"
	"github.com/specd/specd/specs/specstore"
	"github.com/specd/specd/tools"
)

// The layering (flag over environment over default) is hand-written on
// purpose; weighed against github.com/peterbourgon/ff (v4.0.0-alpha.4, the
// only v4 tag, and v3.4.0, both 2023): ff derives each variable from the flag
// name, but here 1 of the 38 variables is named otherwise
// (SPECD_VERIFICATION_EXECUTE) and 2 settings take none (transport, addr),
// so the public environment would change; ff records only that a flag was
// set, not whether by flag or environment, which config_sources reports; and
// its module requires go-toml and yaml.v2. It would replace about 30 lines
// (settingFlag and the loop of parseConfig); the table, parsers and range
// checks below stay either way.

// setting is one configuration value of serve and call: a flag, an
// environment variable (optional), a default, and the parser that checks
// the text and stores it in the config. The flag wins over the environment,
// which wins over the default; every setting is checked at start.
type setting struct {
	name    string // flag name (without dashes), also its name in config_sources
	env     string // environment variable, "" when there is none
	def     string // default text, shown by -h and parsed when nothing is given
	usage   string // -h text; a `word` in back quotes names the value
	boolean bool   // a switch: --name alone means true
	parse   func(c *config, v string) error
}

// settings lists every setting in the order they are resolved (workspace
// before db, whose default lies in the workspace).
func settings() []setting {
	return []setting{
		{name: "workspace", env: "SPECD_WORKSPACE", usage: "workspace `root` (default: the git repository's root shared by its worktrees, else the current directory)",
			parse: parseWorkspace},
		{name: "db", env: "SPECD_DB", usage: "store `file` (default <workspace>/.specd/specd.db)",
			parse: parseDB},
		{name: "store", env: "SPECD_STORE", usage: "store `url`: bolt://PATH (the embedded file, as --db) or etcd://h1:2379,h2:2379/prefix (a cluster; ?cacert=&cert=&key=&user=&max_txn_ops=, password in SPECD_ETCD_PASSWORD)",
			parse: parseStoreURL},
		{name: "log-level", env: "SPECD_LOG_LEVEL", def: "info", usage: "log `level`: debug, info, warn or error",
			parse: func(c *config, v string) (err error) { c.LogLevel, err = parseLevel(v); return err }},
		{name: "log-format", env: "SPECD_LOG_FORMAT", def: "text", usage: "log line `format`: text or json",
			parse: func(c *config, v string) error { c.LogFormat = v; return oneOf(v, "text", "json") }},
		{name: "flags", env: "SPECD_FLAGS", usage: "feature flag `file` in flagd's JSON format (default <workspace>/.specd/flags.json when present, else the embedded defaults)",
			parse: parseFlagsFile},
		{name: "flags-provider", env: "SPECD_FLAGS_PROVIDER", def: "file", usage: "where flags come from: `file` (the flag file, watched) or flagd (a flagd daemon)",
			parse: func(c *config, v string) error { c.Flags.Provider = v; return oneOf(v, "file", "flagd") }},
		{name: "flagd-host", env: "SPECD_FLAGD_HOST", def: "localhost", usage: "flagd `host` for --flags-provider flagd",
			parse: func(c *config, v string) error { c.Flags.FlagdHost = v; return nil }},
		{name: "flagd-port", env: "SPECD_FLAGD_PORT", def: "8015", usage: "flagd sync `port` for --flags-provider flagd",
			parse: intSetting(func(c *config) *int { return &c.Flags.FlagdPort }, 1, 65535)},
		{name: "transport", def: "stdio", usage: "`transport`: stdio or http",
			parse: func(c *config, v string) error {
				c.Transport, c.HTTP.serving = v, v == "http"
				return oneOf(v, "stdio", "http")
			}},
		{name: "addr", def: "127.0.0.1:7777", usage: "listen `address` for --transport http",
			parse: func(c *config, v string) error { c.Addr = v; return nil }},
		{name: "lock-timeout", env: "SPECD_LOCK_TIMEOUT", def: shortDuration(store.DefaultLockTimeout), usage: "longest `duration` to wait for another process's store lock",
			parse: durationSetting(func(c *config) *time.Duration { return &c.LockTimeout }, false)},
		{name: "deadline", env: "SPECD_DEADLINE", def: shortDuration(mcptool.DefaultDeadline), usage: "deadline (a `duration`) of one tool call",
			parse: durationSetting(func(c *config) *time.Duration { return &c.Deadline }, false)},
		{name: "enable-verification-execute", env: "SPECD_VERIFICATION_EXECUTE", def: "false", boolean: true,
			usage: "let verification execute run verify nodes' commands in the workspace",
			parse: func(c *config, v string) (err error) { c.VerifyExec, err = parseBool(v); return err }},
		{name: "verify-timeout", env: "SPECD_VERIFY_TIMEOUT", def: shortDuration(tools.DefaultVerifyTimeout), usage: "default timeout (a `duration`) of verification execute",
			parse: durationSetting(func(c *config) *time.Duration { return &c.VerifyTimeout }, false)},
		{name: "test-command", env: "SPECD_TEST_COMMAND", usage: "`command` of the \"Run tests\" verify step new phases get (default none: a manual step)",
			parse: func(c *config, v string) error { c.TestCommand = v; return nil }},
		{name: "allow-gate-waiver", env: "SPECD_ALLOW_GATE_WAIVER", def: "false", boolean: true,
			usage: "let task gate-waiver waive an autonomy session's phase gate (a maintainer's call)",
			parse: func(c *config, v string) (err error) { c.AllowGateWaiver, err = parseBool(v); return err }},
		{name: "allow-lock-bypass", env: "SPECD_ALLOW_LOCK_BYPASS", def: "false", boolean: true,
			usage: "let task and lifecycle mutations bypass an autonomy session's write lock (bypass_autonomy_lock with a bypass_reason; audited)",
			parse: func(c *config, v string) (err error) { c.AllowLockBypass, err = parseBool(v); return err }},
		{name: "strict-complete", env: "SPECD_STRICT_COMPLETE", def: "false", boolean: true,
			usage: "task complete refuses tasks that were never started",
			parse: func(c *config, v string) (err error) { c.StrictComplete, err = parseBool(v); return err }},
		{name: "history-keep", env: "SPECD_HISTORY_KEEP", def: strconv.Itoa(specstore.DefaultHistoryKeep), usage: "`versions` of history kept per spec, 1 to 10000",
			parse: intSetting(func(c *config) *int { return &c.HistoryKeep }, 1, 10_000)},
		{name: "token-budget", env: "SPECD_TOKEN_BUDGET", def: strconv.Itoa(core.DefaultTokenBudget), usage: "answer budget in `tokens` (bytes/4), 1000 to 1000000",
			parse: intSetting(func(c *config) *int { return &c.TokenBudget }, 1_000, 1_000_000)},
		{name: "toolsets", env: "SPECD_TOOLSETS", usage: "comma list of the `tools` to offer (default every tool; health and server are always offered)",
			parse: func(c *config, v string) (err error) { c.Toolsets, err = tools.ParseToolsets(v); return err }},
		{name: "read-only", env: "SPECD_READ_ONLY", def: "false", boolean: true,
			usage: "offer only read actions: write actions leave the tool list and are refused; every tool is annotated read-only",
			parse: func(c *config, v string) (err error) { c.ReadOnly, err = parseBool(v); return err }},
		{name: "api-keys", env: "SPECD_API_KEYS", usage: "API keys `file` for --transport http: lines of \"id role sha256-hex\" (specd keys add writes them); without it the server is loopback-only and open",
			parse: parseAPIKeys},
		{name: "allowed-origins", env: "SPECD_ALLOWED_ORIGINS", usage: "comma list of browser `origins` (scheme://host:port) allowed besides the same origin; requests without Origin always pass",
			parse: func(c *config, v string) error { c.HTTP.AllowedOrigins = splitList(v); return nil }},
		{name: "max-body", env: "SPECD_MAX_BODY", def: strconv.Itoa(core.MaxMessageBytes), usage: "largest HTTP request body in `bytes`, 1024 to 8388608; larger ones get 413 without being read",
			parse: intSetting(func(c *config) *int { return &c.HTTP.MaxBody }, 1024, core.MaxMessageBytes)},
		{name: "max-header-bytes", env: "SPECD_MAX_HEADER_BYTES", def: "32768", usage: "largest HTTP request header block in `bytes`, 4096 to 1048576",
			parse: intSetting(func(c *config) *int { return &c.HTTP.MaxHeaderBytes }, 4096, 1<<20)},
		{name: "read-header-timeout", env: "SPECD_READ_HEADER_TIMEOUT", def: "5s", usage: "time (a `duration`) a connection has to send its request headers",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.ReadHeaderTimeout }, false)},
		{name: "read-timeout", env: "SPECD_READ_TIMEOUT", def: "30s", usage: "time (a `duration`) to read a whole request",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.ReadTimeout }, false)},
		{name: "write-timeout", env: "SPECD_WRITE_TIMEOUT", def: "60s", usage: "time (a `duration`) to write an answer (not applied to the GET event stream)",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.WriteTimeout }, false)},
		{name: "idle-timeout", env: "SPECD_IDLE_TIMEOUT", def: "60s", usage: "how long (a `duration`) an idle keep-alive connection is kept",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.IdleTimeout }, false)},
		{name: "max-conns", env: "SPECD_MAX_CONNS", def: "1024", usage: "open HTTP `connections` held at most, 16 to 100000; at the cap the oldest idle one is closed",
			parse: intSetting(func(c *config) *int { return &c.HTTP.MaxConns }, 16, 100_000)},
		{name: "max-sessions-per-key", env: "SPECD_MAX_SESSIONS_PER_KEY", def: "64", usage: "live MCP `sessions` one API key (or the keyless caller) may hold, 1 to 100000",
			parse: intSetting(func(c *config) *int { return &c.HTTP.MaxSessionsPerKey }, 1, 100_000)},
		{name: "session-idle-ttl", env: "SPECD_SESSION_IDLE_TTL", def: "30m", usage: "a session unused this long (a `duration`) is ended",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.SessionIdleTTL }, false)},
		{name: "rate", env: "SPECD_RATE", def: "50", usage: "tool `calls` per second per API key, on average (0.01 to 100000)",
			parse: floatSetting(func(c *config) *float64 { return &c.HTTP.RatePerSecond }, 0.01, 100_000)},
		{name: "rate-burst", env: "SPECD_RATE_BURST", def: "200", usage: "tool `calls` per API key allowed at once (the bucket), 1 to 1000000",
			parse: intSetting(func(c *config) *int { return &c.HTTP.RateBurst }, 1, 1_000_000)},
		{name: "board-max-sessions", env: "SPECD_BOARD_MAX_SESSIONS", def: strconv.Itoa(board.DefaultMaxSessions), usage: "board sign-in `sessions` kept in all, 1 to 1000000; at the cap a key without one is refused (503), another key's is never evicted",
			parse: intSetting(func(c *config) *int { return &c.HTTP.Board.MaxSessions }, 1, 1_000_000)},
		{name: "board-max-sessions-per-key", env: "SPECD_BOARD_MAX_SESSIONS_PER_KEY", def: strconv.Itoa(board.DefaultMaxSessionsPerKey), usage: "board sign-in `sessions` one API key may hold, 1 to 100000; a sign-in past it ends that key's oldest",
			parse: intSetting(func(c *config) *int { return &c.HTTP.Board.MaxSessionsPerKey }, 1, 100_000)},
		{name: "board-session-ttl", env: "SPECD_BOARD_SESSION_TTL", def: shortDuration(board.DefaultSessionTTL), usage: "lifetime (a `duration`) of a board sign-in session; its open event streams end with it",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.Board.SessionTTL }, false)},
		{name: "board-max-streams-per-key", env: "SPECD_BOARD_MAX_STREAMS_PER_KEY", def: strconv.Itoa(board.DefaultMaxStreamsPerKey), usage: "open board event `streams` per API key (or the keyless caller), 1 to 100000",
			parse: intSetting(func(c *config) *int { return &c.HTTP.Board.MaxStreamsPerKey }, 1, 100_000)},
		{name: "board-max-streams", env: "SPECD_BOARD_MAX_STREAMS", def: strconv.Itoa(board.DefaultMaxStreams), usage: "open board event `streams` in all, 1 to 100000",
			parse: intSetting(func(c *config) *int { return &c.HTTP.Board.MaxStreams }, 1, 100_000)},
		{name: "board-login-rate", env: "SPECD_BOARD_LOGIN_RATE", def: strconv.FormatFloat(board.DefaultLoginRate, 'g', -1, 64), usage: "board sign-in `attempts` per second per client address and per key, on average, failed ones included (0.001 to 1000)",
			parse: floatSetting(func(c *config) *float64 { return &c.HTTP.Board.LoginRate }, 0.001, 1000)},
		{name: "board-login-rate-burst", env: "SPECD_BOARD_LOGIN_RATE_BURST", def: strconv.Itoa(board.DefaultLoginBurst), usage: "board sign-in `attempts` per client address and per key allowed at once, 1 to 10000",
			parse: intSetting(func(c *config) *int { return &c.HTTP.Board.LoginBurst }, 1, 10_000)},
		{name: "shutdown-timeout", env: "SPECD_SHUTDOWN_TIMEOUT", def: "10s", usage: "on SIGINT/SIGTERM, how long (a `duration`) calls in flight may finish",
			parse: durationSetting(func(c *config) *time.Duration { return &c.HTTP.ShutdownTimeout }, false)},
		{name: "mirror", env: "SPECD_MIRROR", usage: "keep every spec's JSON (as spec export writes it) in `folder` inside the workspace, DIR/{pending,active,completed,archived}/<id>.json, after every change (default none)",
			parse: parseMirror},
		{name: "archive-retention", env: "SPECD_ARCHIVE_RETENTION", def: shortDuration(tools.DefaultArchiveRetention), usage: "how long (a `duration`) archived research content is kept; 0 keeps it forever",
			parse: durationSetting(func(c *config) *time.Duration { return &c.ArchiveRetention }, true)},
	}
}

// parseWorkspace is the workspace setting: the root given, else the one
// found from the current directory (resolveWorkspace).
func parseWorkspace(c *config, v string) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	c.Workspace, c.WorkspaceBy = resolveWorkspace(v, cwd)
	return nil
}

// parseDB is the db setting: the file given, else
// <workspace>/.specd/specd.db, made absolute.
func parseDB(c *config, v string) (err error) {
	if v == "" {
		v = filepath.Join(c.Workspace, ".specd", "specd.db")
	}
	c.DB, err = filepath.Abs(v)
	return err
}

// parseFlagsFile is the flags setting: the flag file given, made absolute
// ("" leaves the choice to findWorkspaceFile).
func parseFlagsFile(c *config, v string) (err error) {
	if v != "" {
		c.Flags.Path, err = filepath.Abs(v)
	}
	return err
}

// parseAPIKeys is the api-keys setting: the keys file given is loaded
// (httpguard.LoadKeys refuses a file others can write); "" means no keys.
func parseAPIKeys(c *config, v string) (err error) {
	if c.HTTP.KeysFile = v; v != "" {
		c.HTTP.Keys, err = httpguard.LoadKeys(v)
	}
	return err
}

// floatSetting parses a number from lo to hi into field (NaN is none).
func floatSetting(field func(*config) *float64, lo, hi float64) func(*config, string) error {
	return func(c *config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= lo && f <= hi) { // NaN compares false: refused
			return fmt.Errorf("must be a number between %g and %g", lo, hi)
		}
		*field(c) = f
		return nil
	}
}

func durationSetting(field func(*config) *time.Duration, zeroOK bool) func(*config, string) error {
	return func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return fmt.Errorf("not a duration (use e.g. 30s, 5m, 720h)")
		case d < 0 || (d == 0 && !zeroOK):
			if zeroOK {
				return fmt.Errorf("must be a duration ≥ 0")
			}
			return fmt.Errorf("must be a positive duration")
		}
		*field(c) = d
		return nil
	}
}

// shortDuration writes d as -h shows it: 720h, 5m, 30s rather than
// 720h0m0s.
func shortDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

func intSetting(field func(*config) *int, lo, hi int) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be a whole number between %d and %d", lo, hi)
		}
		*field(c) = n
		return nil
	}
}

// parseBool accepts the usual spellings, case-insensitively: 1/0, true/false,
// yes/no, on/off.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean (use true/false, 1/0, yes/no or on/off)")
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("must be %s", strings.Join(allowed, " or "))
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

// settingFlag is the flag.Value of one setting: it records the text given
// and whether the flag was used; parsing happens after all sources are
// known.
type settingFlag struct {
	s   *setting
	raw string
	set bool
}

func (f *settingFlag) String() string {
	if f == nil || f.s == nil {
		return ""
	}
	return f.s.def
}

func (f *settingFlag) Set(v string) error { f.raw, f.set = v, true; return nil }

func (f *settingFlag) IsBoolFlag() bool { return f != nil && f.s != nil && f.s.boolean }

// parseConfig reads flags, then environment, then defaults (in that order of
// precedence) for serve and call. Every setting is checked: a value that
// does not parse or lies out of range is an error naming the flag or the
// variable (the caller exits 2). c.Sources records where each came from.
func parseConfig(name string, args []string, stderr io.Writer) (*config, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	all := settings()
	given := declareSettings(fs, all)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	c := &config{Sources: map[string]string{}, Flags: &flagsConfig{}, HTTP: &httpConfig{}}
	for i, s := range all {
		raw, src, where := s.resolve(given[i])
		if err := s.parse(c, raw); err != nil {
			return nil, nil, fmt.Errorf("%s=%q: %v", where, raw, err)
		}
		c.Sources[s.name] = src
	}
	c.Flags.findWorkspaceFile(c.Workspace, c.Sources["flags"])
	c.Source = []string{"db=" + c.Sources["db"], "workspace=" + c.WorkspaceBy, "log-level=" + c.Sources["log-level"]}
	return c, fs.Args(), nil
}

// declareSettings declares a flag on fs for each setting of all (its -h
// text naming its environment variable) and returns them in the same
// order, to be read once fs has parsed.
func declareSettings(fs *flag.FlagSet, all []setting) []*settingFlag {
	flags := make([]*settingFlag, len(all))
	for i := range all {
		s := &all[i]
		flags[i] = &settingFlag{s: s}
		usage := s.usage
		if s.env != "" {
			usage += " (env " + s.env + ")"
		}
		fs.Var(flags[i], s.name, usage)
	}
	return flags
}

// resolve is the text of s to parse, where it came from (flag, env or
// default) and how an error names that source: the flag f when it was
// given, else the environment variable when it is set and not empty, else
// the default.
func (s *setting) resolve(f *settingFlag) (raw, src, where string) {
	if f.set {
		return f.raw, "flag", "--" + s.name
	}
	if v := os.Getenv(s.env); s.env != "" && v != "" {
		return v, "env", s.env
	}
	return s.def, "default", "default of --" + s.name
}

// newLogger is the process's logger on w in the configured format.
func newLogger(c *config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
