package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
		{"token budget out of range", []string{"serve", "--token-budget", "5", "--db", db}, 2, "", "token_budget must be between"},
		{"settings reach the tools", []string{"call", "server", `{"action":"capabilities"}`, "--db", db, "--token-budget", "5000"}, 0, `"token_budget": 5000`, ""},
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
