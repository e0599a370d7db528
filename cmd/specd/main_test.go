package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestRunCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "specd.db")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		stderrIn string
	}{
		{"version", []string{"version"}, 0, "specd ", ""},
		{"no command", nil, 2, "", "Usage:"},
		{"unknown command", []string{"bogus"}, 2, "", `unknown command "bogus"`},
		{"call success", []string{"call", "health", `{"action":"liveness"}`, "--db", db}, 0, `"success": true`, ""},
		{"call failure envelope", []string{"call", "health", `{"action":"nope"}`, "--db", db}, 1, `"UNKNOWN_ACTION"`, ""},
		{"call bad json", []string{"call", "health", `{`, "--db", db}, 2, "", "JSON object"},
		{"call unknown tool", []string{"call", "nope", `{}`, "--db", db}, 2, "", `no tool "nope"`},
		{"bad log level", []string{"serve", "--log-level", "loud", "--db", db}, 2, "", "log level"},
		{"bad transport", []string{"serve", "--transport", "carrier-pigeon", "--db", db}, 2, "", "--transport"},
		{"token budget out of range", []string{"serve", "--token-budget", "5", "--db", db}, 2, "", "--token-budget=\"5\": must be a whole number between 1000 and 1000000"},
		{"settings reach the tools", []string{"call", "server", `{"action":"capabilities"}`, "--db", db, "--token-budget", "5000"}, 0, `"token_budget": 5000`, ""},
		{"read-only reaches the tools", []string{"call", "authoring", `{"action":"spec-create","name":"Refused"}`, "--db", db, "--read-only"}, 1, `"FORBIDDEN"`, ""},
		{"read-only reads", []string{"call", "spec", `{"action":"list"}`, "--db", db, "--read-only"}, 0, `"count": 0`, ""},
		{"toolsets reach the tools", []string{"call", "spec", `{"action":"list"}`, "--db", db, "--toolsets", "task"}, 2, "", `no tool "spec"`},
		{"unknown toolset refused at start", []string{"serve", "--toolsets", "task,bogus", "--db", db}, 2, "", `unknown tool "bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errb.String())
			}
			if !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderrIn) {
				t.Fatalf("stdout %q / stderr %q", out.String(), errb.String())
			}
		})
	}
}

func TestServeOnClosedStdinExitsCleanlyAndWritesOnlyJSON(t *testing.T) {
	var out, errb bytes.Buffer
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	code := run([]string{"serve", "--db", filepath.Join(t.TempDir(), "s.db")}, in, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
	}
}

func TestConnectHelpNamesClientsAndStore(t *testing.T) {
	h := connectHelp(&config{DB: "/x/.specd/specd.db", Workspace: "/x"})
	for _, want := range []string{"claude mcp add specd", "mcpServers", "/x/.specd/specd.db"} {
		if !strings.Contains(h, want) {
			t.Errorf("help lacks %q:\n%s", want, h)
		}
	}
}

func TestEnvSettingsAreChecked(t *testing.T) {
	t.Setenv("SPECD_HISTORY_KEEP", "lots")
	var out, errb bytes.Buffer
	if code := run([]string{"call", "health", `{"action":"liveness"}`, "--db", filepath.Join(t.TempDir(), "s.db")}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "SPECD_HISTORY_KEEP") {
		t.Fatalf("stderr %q", errb.String())
	}
}

// TestSettingsAreCheckedAtStart: every setting is parsed from its flag, else
// its variable, else its default; nonsense is refused naming where it came
// from (exit 2 in run), booleans take the usual spellings.
func TestSettingsAreCheckedAtStart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		err  string             // substring of the error; "" for success
		want func(*config) bool // checked on success
	}{
		{"env true enables execution", map[string]string{"SPECD_VERIFICATION_EXECUTE": "true"}, nil, "", func(c *config) bool { return c.VerifyExec }},
		{"env YES", map[string]string{"SPECD_VERIFICATION_EXECUTE": "YES"}, nil, "", func(c *config) bool { return c.VerifyExec }},
		{"env On", map[string]string{"SPECD_STRICT_COMPLETE": "On"}, nil, "", func(c *config) bool { return c.StrictComplete }},
		{"env 1", map[string]string{"SPECD_STRICT_COMPLETE": "1"}, nil, "", func(c *config) bool { return c.StrictComplete }},
		{"env off", map[string]string{"SPECD_VERIFICATION_EXECUTE": "off"}, nil, "", func(c *config) bool { return !c.VerifyExec }},
		{"env False", map[string]string{"SPECD_VERIFICATION_EXECUTE": "False"}, nil, "", func(c *config) bool { return !c.VerifyExec }},
		{"flag beats env", map[string]string{"SPECD_VERIFICATION_EXECUTE": "no"}, []string{"--enable-verification-execute"}, "", func(c *config) bool { return c.VerifyExec }},
		{"flag =false beats env", map[string]string{"SPECD_VERIFICATION_EXECUTE": "1"}, []string{"--enable-verification-execute=false"}, "", func(c *config) bool { return !c.VerifyExec }},
		{"nonsense boolean", map[string]string{"SPECD_VERIFICATION_EXECUTE": "sure"}, nil, `SPECD_VERIFICATION_EXECUTE="sure": not a boolean`, nil},
		{"nonsense boolean flag", nil, []string{"--strict-complete=maybe"}, `--strict-complete="maybe": not a boolean`, nil},
		{"negative token budget", nil, []string{"--token-budget", "-5"}, `--token-budget="-5": must be a whole number between 1000 and 1000000`, nil},
		{"history keep 0", nil, []string{"--history-keep", "0"}, `--history-keep="0": must be a whole number between 1 and 10000`, nil},
		{"history keep from env", map[string]string{"SPECD_HISTORY_KEEP": "7"}, nil, "", func(c *config) bool { return c.HistoryKeep == 7 }},
		{"negative deadline", nil, []string{"--deadline", "-1s"}, `--deadline="-1s": must be a positive duration`, nil},
		{"zero lock timeout", map[string]string{"SPECD_LOCK_TIMEOUT": "0s"}, nil, `SPECD_LOCK_TIMEOUT="0s": must be a positive duration`, nil},
		{"archive retention 0 keeps forever", nil, []string{"--archive-retention", "0"}, "", func(c *config) bool { return c.ArchiveRetention == 0 }},
		{"negative archive retention", map[string]string{"SPECD_ARCHIVE_RETENTION": "-1h"}, nil, `SPECD_ARCHIVE_RETENTION="-1h": must be a duration ≥ 0`, nil},
		{"log format json", map[string]string{"SPECD_LOG_FORMAT": "json"}, nil, "", func(c *config) bool { return c.LogFormat == "json" }},
		{"log format nonsense", nil, []string{"--log-format", "xml"}, `--log-format="xml": must be text or json`, nil},
		{"toolsets flag", nil, []string{"--toolsets", "task, spec,task"}, "", func(c *config) bool { return strings.Join(c.Toolsets, ",") == "task,spec" }},
		{"toolsets env", map[string]string{"SPECD_TOOLSETS": "research"}, nil, "", func(c *config) bool { return strings.Join(c.Toolsets, ",") == "research" }},
		{"toolsets default every tool", nil, nil, "", func(c *config) bool { return c.Toolsets == nil && c.Sources["toolsets"] == "default" }},
		{"unknown toolset", nil, []string{"--toolsets", "task,tasks"}, `--toolsets="task,tasks": unknown tool "tasks"`, nil},
		{"unknown toolset from env", map[string]string{"SPECD_TOOLSETS": "github"}, nil, `SPECD_TOOLSETS="github": unknown tool "github"`, nil},
		{"read-only flag", nil, []string{"--read-only"}, "", func(c *config) bool { return c.ReadOnly }},
		{"read-only env", map[string]string{"SPECD_READ_ONLY": "yes"}, nil, "", func(c *config) bool { return c.ReadOnly }},
		{"read-only default off", nil, nil, "", func(c *config) bool { return !c.ReadOnly }},
		{"read-only nonsense", map[string]string{"SPECD_READ_ONLY": "mostly"}, nil, `SPECD_READ_ONLY="mostly": not a boolean`, nil},
		{"defaults", nil, nil, "", func(c *config) bool {
			return c.TokenBudget == 25_000 && c.HistoryKeep == 50 && c.ArchiveRetention == 720*time.Hour && !c.VerifyExec && c.LogFormat == "text" &&
				c.Sources["token-budget"] == "default" && c.Sources["db"] == "flag"
		}},
		// The variables are named by hand, not derived from the flag (as
		// flag libraries with an env prefix do): these must stay as they are.
		{"verification execute's variable drops enable", map[string]string{"SPECD_ENABLE_VERIFICATION_EXECUTE": "true"}, nil, "", func(c *config) bool {
			return !c.VerifyExec && c.Sources["enable-verification-execute"] == "default"
		}},
		{"transport and addr take no variable", map[string]string{"SPECD_TRANSPORT": "http", "SPECD_ADDR": "0.0.0.0:1"}, nil, "", func(c *config) bool {
			return c.Transport == "stdio" && c.Addr == "127.0.0.1:7777" && c.Sources["transport"] == "default" && c.Sources["addr"] == "default"
		}},
		{"empty variable counts as unset", map[string]string{"SPECD_TOKEN_BUDGET": ""}, nil, "", func(c *config) bool {
			return c.TokenBudget == 25_000 && c.Sources["token-budget"] == "default"
		}},
		{"board limits from flags and env", map[string]string{"SPECD_BOARD_SESSION_TTL": "1h", "SPECD_BOARD_LOGIN_RATE": "0.5"},
			[]string{"--board-max-sessions-per-key", "3", "--board-login-rate-burst", "4", "--board-max-sessions", "99", "--board-max-streams", "7", "--board-max-streams-per-key", "2"}, "",
			func(c *config) bool {
				b := c.HTTP.Board
				return b.MaxSessionsPerKey == 3 && b.LoginBurst == 4 && b.MaxSessions == 99 && b.MaxStreams == 7 && b.MaxStreamsPerKey == 2 &&
					b.SessionTTL == time.Hour && b.LoginRate == 0.5 && c.Sources["board-login-rate"] == "env"
			}},
		{"board limit defaults", nil, nil, "", func(c *config) bool {
			b := c.HTTP.Board
			return b.MaxSessions == 1024 && b.MaxSessionsPerKey == 16 && b.SessionTTL == 12*time.Hour && b.LoginRate == 0.1 && b.LoginBurst == 10
		}},
		{"board sessions per key 0", nil, []string{"--board-max-sessions-per-key", "0"}, `--board-max-sessions-per-key="0": must be a whole number between 1 and 100000`, nil},
		{"board login rate 0", map[string]string{"SPECD_BOARD_LOGIN_RATE": "0"}, nil, `SPECD_BOARD_LOGIN_RATE="0": must be a number between 0.001 and 1000`, nil},
		{"rate nonsense", nil, []string{"--rate", "fast"}, `--rate="fast": must be a number between 0.01 and 100000`, nil},
		{"board login rate NaN", nil, []string{"--board-login-rate", "NaN"}, `--board-login-rate="NaN": must be a number between 0.001 and 1000`, nil},
		{"rate NaN", map[string]string{"SPECD_RATE": "nan"}, nil, `SPECD_RATE="nan": must be a number between 0.01 and 100000`, nil},
		{"sources", map[string]string{"SPECD_DEADLINE": "9s"}, []string{"--token-budget", "2000"}, "", func(c *config) bool {
			return c.Sources["deadline"] == "env" && c.Sources["token-budget"] == "flag" && c.Sources["history-keep"] == "default" && len(c.Sources) == len(settings())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range settings() {
				if s.env != "" {
					t.Setenv(s.env, "")
				}
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, _, err := parseConfig("serve", append([]string{"--db", db}, tt.args...), io.Discard)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				var out, errb bytes.Buffer
				if code := run(append([]string{"serve", "--db", db}, tt.args...), strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.err) {
					t.Fatalf("serve: exit %d, stderr %q", code, errb.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Fatalf("config %+v", c)
			}
		})
	}
}

// TestHelpShowsRealDefaults: -h names each default as it applies.
func TestHelpShowsRealDefaults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "-h"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	h := errb.String()
	for _, want := range []string{"(default 720h)", "(default 25000)", "(default 50)", "(default 5m)", "(default 30s)", "(default 5s)", "(default text)",
		"SPECD_LOG_FORMAT", "SPECD_VERIFICATION_EXECUTE"} {
		if !strings.Contains(h, want) {
			t.Errorf("-h lacks %q", want)
		}
	}
	for _, bad := range []string{"-1ns", "(default 0)", "(default 0s)"} {
		if strings.Contains(h, bad) {
			t.Errorf("-h shows %q:\n%s", bad, h)
		}
	}
}

// TestContextReportsEverySettingsSource: server context names the source
// of every setting.
func TestContextReportsEverySettingsSource(t *testing.T) {
	t.Setenv("SPECD_HISTORY_KEEP", "9")
	var out, errb bytes.Buffer
	if code := run([]string{"call", "server", `{"action":"context"}`, "--db", filepath.Join(t.TempDir(), "s.db"), "--token-budget", "3000"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var env struct {
		Data struct {
			Sources map[string]string `json:"config_sources"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	s := env.Data.Sources
	if len(s) != len(settings()) || s["token-budget"] != "flag" || s["history-keep"] != "env" || s["deadline"] != "default" || s["db"] != "flag" {
		t.Fatalf("config_sources %v", s)
	}
}

// TestVersionFromBuild: without -ldflags the version comes from the module
// version, else the VCS revision, else "dev".
func TestVersionFromBuild(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "dev"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs("0ea06c1a2b3c4d5e", "false")}, "v1.4.0"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261123181000-0ea06c1a2b3c+dirty"}}, "v0.0.0-20261123181000-0ea06c1a2b3c+dirty"},
		{"devel with revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0ea06c1a2b3c4d5e6f", "false")}, "0ea06c1a2b3c"},
		{"devel with modified tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0ea06c1a2b3c4d5e6f", "true")}, "0ea06c1a2b3c-dirty"},
		{"devel without VCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionFromBuild(tt.bi); got != tt.want {
				t.Fatalf("versionFromBuild = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLogFormatJSON: --log-format json writes every log line as JSON,
// including the one line of each call (at --log-level info: a one-shot
// command's default is warn, see TestCallQuietByDefault).
func TestLogFormatJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"call", "health", `{"action":"liveness"}`, "--db", filepath.Join(t.TempDir(), "s.db"), "--log-format", "json", "--log-level", "info"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	calls := 0
	for _, line := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "call" && m["ok"] == true && m["tool"] == "health" {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("want one call line, got %d:\n%s", calls, errb.String())
	}
}

// TestCallQuietByDefault: specd call and the person commands log at warn
// unless told otherwise, so a person sees only the output; SPECD_LOG_LEVEL
// (like --log-level) still brings the info line back.
func TestCallQuietByDefault(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	for _, args := range [][]string{
		{"call", "health", `{"action":"liveness"}`, "--db", db},
		{"spec", "list", "--db", db},
	} {
		var out, errb bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errb); code != 0 || errb.Len() != 0 || out.Len() == 0 {
			t.Fatalf("%v: exit %d, stderr %q (want none), stdout %d bytes", args, code, errb.String(), out.Len())
		}
	}
	t.Setenv("SPECD_LOG_LEVEL", "info")
	var out, errb bytes.Buffer
	if code := run([]string{"call", "health", `{"action":"liveness"}`, "--db", db}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(errb.String(), "level=INFO") {
		t.Fatalf("SPECD_LOG_LEVEL=info: exit %d, stderr %q", code, errb.String())
	}
}

// TestCallHelpExitsZero: specd call -h, like every other command's -h,
// prints its usage and exits 0 without an error line; a missing argument or
// an unknown flag is still a usage error (exit 2).
func TestCallHelpExitsZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"call", "-h"}, 0},
		{[]string{"call", "--help"}, 0},
		{[]string{"call", "health", `{"action":"liveness"}`, "-h"}, 0},
		{[]string{"call", "health"}, 2},
		{[]string{"call", "health", `{"action":"liveness"}`, "--bogus"}, 2},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), "usage") && tc.code == 0 && !strings.Contains(errb.String(), "-deadline") {
			t.Errorf("%v: exit %d (want %d), stderr %q", tc.args, code, tc.code, errb.String())
		}
		if strings.Contains(errb.String(), "help requested") {
			t.Errorf("%v: stderr names the flag package's help error: %q", tc.args, errb.String())
		}
	}
}
