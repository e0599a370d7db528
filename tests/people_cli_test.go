package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core/store/storetest"
)

// seedPeopleSpec builds, through an in-process MCP client with the fixed
// clock and counter ids, a spec a person would look at: two phases, a
// task done, one in progress, a dependency between tasks, a blocked
// subtask and a journal entry. It returns the client, the store file and
// the spec id.
func seedPeopleSpec(t *testing.T) (*client.Client, string, string) {
	t.Helper()
	st := storetest.Open(t)
	c, _ := inProcess(t, depsOn(st, counterIDs()), protocols[0])
	env := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Ship the board"})
	id, _ := data(env)["spec_id"].(string)
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Build"},
			"tasks": []any{
				map[string]any{"title": "Write the handler", "task_category": "implementation", "file_path": "a.go"},
				map[string]any{"title": "Write the templates", "task_category": "implementation", "file_path": "b.go"},
				map[string]any{"title": "Wire the events", "task_category": "implementation", "file_path": "c.go"},
			}}},
		{"authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "phase": map[string]any{"title": "Ship"},
			"tasks": []any{map[string]any{"title": "Write the README", "task_category": "implementation", "file_path": "README.md"}}}},
		{"task", map[string]any{"action": "add-dependency", "spec_id": id, "task_id": "task-1-2", "target_id": "task-1-3"}},
		{"task", map[string]any{"action": "complete", "spec_id": id, "task_id": "task-1-1", "completion_note": "handler done"}},
		{"task", map[string]any{"action": "start", "spec_id": id, "task_id": "task-1-2"}},
		{"task", map[string]any{"action": "add", "spec_id": id, "parent": "task-2-1", "title": "Screenshot", "task_type": "subtask"}},
		{"task", map[string]any{"action": "block", "spec_id": id, "task_id": "task-2-1-1", "reason": "waiting for the board"}},
		{"journal", map[string]any{"action": "add", "spec_id": id, "title": "Chose SSE", "entry_type": "decision", "content": "Server-sent events reuse the subscriptions."}},
	} {
		if env := call(t, c, step.tool, step.args); env["success"] != true {
			t.Fatalf("seed %s %v: %v", step.tool, step.args["action"], env)
		}
	}
	// A second spec with work ready to start.
	env = call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Tidy the docs"})
	second, _ := data(env)["spec_id"].(string)
	if env := call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": second, "phase": map[string]any{"title": "Docs"},
		"tasks": []any{map[string]any{"title": "Fix the links", "task_category": "implementation", "file_path": "docs.md"}}}); env["success"] != true {
		t.Fatalf("seed second spec: %v", env)
	}
	return c, st.Path(), id
}

// runPeopleCLI runs the built binary on the store db with a pipe as stdout
// and extra environment, and returns the exit status, stdout and stderr.
func runPeopleCLI(t *testing.T, db string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(specdBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "SPECD_DB="+db, "SPECD_WORKSPACE="+filepath.Dir(filepath.Dir(db)))
	cmd.Env = append(withoutEnv(cmd.Env, "SPECD_LOG_LEVEL", "NO_COLOR"), env...)
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// withoutEnv drops the named variables from env.
func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

var inprocessSession = regexp.MustCompile(`inprocess-[0-9]+`)

// textHolderLabel is a claim holder's per-process label (mcptool.HolderOf)
// inside a line of text: random per server process, so masked.
var textHolderLabel = regexp.MustCompile(`#[0-9a-f]{12}\b`)

// TestPeopleCLIGolden renders each person command against a spec seeded
// through MCP and compares it with its golden file (no colour: stdout is
// a pipe). Nothing but the output reaches stdout, and at the default log
// level stderr stays empty (no info line per call).
func TestPeopleCLIGolden(t *testing.T) {
	t.Parallel()
	_, db, id := seedPeopleSpec(t)
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"spec_list.txt", []string{"spec", "list"}},
		{"spec_show.txt", []string{"spec", "show", id}},
		{"task_next.txt", []string{"task", "next", id}},
		{"task_next_found.txt", []string{"task", "next", "tidy-the-docs-2026-01-02-001"}},
		{"journal.txt", []string{"journal", id, "--limit", "3"}},
	} {
		code, out, errOut := runPeopleCLI(t, db, nil, tc.args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		if strings.Contains(out, "\x1b[") {
			t.Fatalf("%v: colour on a pipe:\n%q", tc.args, out)
		}
		// The in-process client's session id (who holds the started task)
		// is random; everything else is fixed by the clock and the ids.
		golden(t, filepath.Join("cli", tc.golden), []byte(textHolderLabel.ReplaceAllString(inprocessSession.ReplaceAllString(out, "inprocess-SESSION"), "#LABEL")))
	}
	// The journal's next page continues where the first stopped.
	_, out, _ := runPeopleCLI(t, db, nil, "journal", id, "--limit", "3")
	i := strings.Index(out, "--cursor ")
	if i < 0 {
		t.Fatalf("no next page offered:\n%s", out)
	}
	cursor := strings.TrimSpace(out[i+len("--cursor "):])
	code, page2, _ := runPeopleCLI(t, db, nil, "journal", id, "--limit", "3", "--cursor", cursor)
	if code != 0 || !strings.Contains(page2, "#") || strings.Contains(page2, "Chose SSE") {
		t.Fatalf("page 2 (exit %d) repeats page 1 or is empty:\n%s", code, page2)
	}
}

// TestPeopleCLIJSONIsTheEnvelope: --json prints the envelope `specd call`
// prints for the same action (same data; request id and timing differ).
func TestPeopleCLIJSONIsTheEnvelope(t *testing.T) {
	t.Parallel()
	_, db, id := seedPeopleSpec(t)
	for _, tc := range []struct {
		args []string
		tool string
		call string
	}{
		{[]string{"spec", "list", "--json"}, "spec", `{"action":"list","include_progress":true}`},
		{[]string{"spec", "show", id, "--json"}, "spec", `{"action":"get","spec_id":"` + id + `"}`},
		{[]string{"task", "next", id, "--json"}, "task", `{"action":"next","spec_id":"` + id + `"}`},
		{[]string{"journal", id, "--json", "--limit", "2"}, "journal", `{"action":"list","spec_id":"` + id + `","limit":2}`},
	} {
		code, out, _ := runPeopleCLI(t, db, nil, tc.args...)
		_, want, _ := runPeopleCLI(t, db, nil, "call", tc.tool, tc.call)
		validateEnvelopeJSON(t, []byte(out))
		var got, exp map[string]any
		must(t, json.Unmarshal([]byte(out), &got))
		must(t, json.Unmarshal([]byte(want), &exp))
		if code != 0 || got["success"] != true || !jsonEqual(got["data"], exp["data"]) {
			t.Fatalf("%v: exit %d; data differs from specd call:\n%s\n---\n%s", tc.args, code, out, want)
		}
	}
}

// TestPeopleCLIExitCodes: 0 ok, 1 refused (stdout empty; stderr has the
// code, the remediation and the recovery's call, which runs as given),
// 2 usage.
func TestPeopleCLIExitCodes(t *testing.T) {
	t.Parallel()
	_, db, id := seedPeopleSpec(t)
	if code, _, _ := runPeopleCLI(t, db, nil, "spec", "show", id); code != 0 {
		t.Fatalf("show: exit %d", code)
	}
	code, out, errOut := runPeopleCLI(t, db, nil, "spec", "show", "no-such-spec")
	if code != 1 || out != "" || !strings.Contains(errOut, "SPEC_NOT_FOUND") || !strings.Contains(errOut, "Use a spec_id") {
		t.Fatalf("refusal: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	i := strings.Index(errOut, "next: ")
	if i < 0 {
		t.Fatalf("no recovery call in %q", errOut)
	}
	next := strings.TrimSpace(errOut[i+len("next: "):])
	sh := exec.Command("sh", "-c", strings.Replace(next, "specd ", specdBinary(t)+" ", 1))
	sh.Env = append(os.Environ(), "SPECD_DB="+db, "SPECD_WORKSPACE="+filepath.Dir(filepath.Dir(db)))
	if b, err := sh.Output(); err != nil || !strings.Contains(string(b), `"success": true`) {
		t.Fatalf("the recovery call %q did not run as given: %v\n%s", next, err, b)
	}
	if code, out, _ := runPeopleCLI(t, db, nil, "task", "next", "no-such-spec", "--json"); code != 1 || !strings.Contains(out, `"SPEC_NOT_FOUND"`) {
		t.Fatalf("--json refusal: exit %d, stdout %q", code, out)
	}
	for _, args := range [][]string{
		{"spec", "show"},
		{"spec", "list", "extra"},
		{"journal", id, "--limit", "zero"},
		{"spec", "list", "--no-such-flag"},
		{"spec", "frobnicate"},
	} {
		if code, _, errOut := runPeopleCLI(t, db, nil, args...); code != 2 || errOut == "" {
			t.Fatalf("%v: exit %d, stderr %q; want 2 with a usage message", args, code, errOut)
		}
	}
}

// TestPeopleCLIColourOnATerminal runs spec show on a pseudo-terminal: the
// output carries ANSI colour; with NO_COLOR set it carries none.
func TestPeopleCLIColourOnATerminal(t *testing.T) {
	t.Parallel()
	_, db, id := seedPeopleSpec(t)
	run := func(env ...string) string {
		cmd := exec.Command(specdBinary(t), "spec", "show", id)
		cmd.Env = append(withoutEnv(os.Environ(), "NO_COLOR", "TERM"), append([]string{"SPECD_DB=" + db, "TERM=xterm-256color"}, env...)...)
		f, err := pty.Start(cmd)
		must(t, err)
		defer f.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { _, _ = io.Copy(&out, f); close(done) }() // ends with EIO once the child exits
		if err := cmd.Wait(); err != nil {
			t.Fatalf("spec show on a terminal: %v\n%s", err, out.String())
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the terminal's output did not end")
		}
		if !strings.Contains(out.String(), "Ship the board") {
			t.Fatalf("no spec on the terminal:\n%q", out.String())
		}
		return out.String()
	}
	if out := run(); !strings.Contains(out, "\x1b[") {
		t.Fatalf("no ANSI colour on a terminal:\n%q", out)
	}
	if out := run("NO_COLOR=1"); strings.Contains(out, "\x1b[") {
		t.Fatalf("colour despite NO_COLOR:\n%q", out)
	}
}

// stderrOnTerminal runs the binary with stderr on a pseudo-terminal and
// stdout on a pipe, and returns both.
func stderrOnTerminal(t *testing.T, args ...string) (string, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	must(t, err)
	defer ptmx.Close()
	cmd := exec.Command(specdBinary(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	cmd.Env = withoutEnv(os.Environ(), "SPECD_LOG_LEVEL")
	must(t, cmd.Start())
	tty.Close()
	var term bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&term, ptmx); close(done) }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, term.String())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	return out.String(), term.String()
}

// TestLongOperationsShowProgressOnlyOnATerminal: backup and migrate show
// their steps on stderr when it is a terminal, wipe the line at the end
// and print their result on stdout; piped, stderr stays empty.
func TestLongOperationsShowProgressOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	_, db, _ := seedPeopleSpec(t)
	dir := t.TempDir()
	out, term := stderrOnTerminal(t, "backup", filepath.Join(dir, "b1.db"), "--db", db)
	if !strings.Contains(term, "specd backup: working") || !strings.Contains(out, "backup of") || strings.Contains(out, "working") {
		t.Fatalf("backup on a terminal: stderr %q, stdout %q", term, out)
	}
	out, term = stderrOnTerminal(t, "migrate", "--from", "bolt://"+db, "--to", "bolt://"+filepath.Join(dir, "m1.db"))
	for _, step := range []string{"reading the source", "writing", "verifying the destination"} {
		if !strings.Contains(term, step) {
			t.Fatalf("migrate on a terminal: no %q in stderr %q", step, term)
		}
	}
	if !strings.Contains(out, "verified") {
		t.Fatalf("migrate: stdout %q", out)
	}
	if code, out, errOut := runPeopleCLI(t, db, nil, "backup", filepath.Join(dir, "b2.db")); code != 0 || errOut != "" || !strings.Contains(out, "backup of") {
		t.Fatalf("piped backup: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	if code, _, errOut := runPeopleCLI(t, db, nil, "migrate", "--from", "bolt://"+db, "--to", "bolt://"+filepath.Join(dir, "m2.db")); code != 0 || errOut != "" {
		t.Fatalf("piped migrate: exit %d, stderr %q", code, errOut)
	}
}
