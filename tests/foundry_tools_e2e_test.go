package tests

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// ok calls tool and fails the test unless the call succeeds; it returns
// data.
func ok(t *testing.T, c *client.Client, tool string, args map[string]any) map[string]any {
	t.Helper()
	env := call(t, c, tool, args)
	if env["success"] != true {
		t.Fatalf("%s %v failed: %v", tool, args, env)
	}
	return data(env)
}

// failsWith calls tool, wants error code, and runs its recovery call as
// given (it must succeed); it returns data.
func failsWith(t *testing.T, c *client.Client, code, tool string, args map[string]any) map[string]any {
	t.Helper()
	env := call(t, c, tool, args)
	if errorCode(env) != code {
		t.Fatalf("%s %v: want %s, got %v", tool, args, code, env)
	}
	rec, _ := data(env)["recovery"].(map[string]any)
	if rec == nil {
		t.Fatalf("%s %v: %s without recovery: %v", tool, args, code, env)
	}
	ok(t, c, rec["suggested_tool"].(string), rec["suggested_args"].(map[string]any))
	return data(env)
}

// foundryToolsSpec makes an active spec with one phase of two tasks (3 h and
// 2.5 h estimated) and its verify node, returning spec, phase, task and
// verify ids.
func foundryToolsSpec(t *testing.T, c *client.Client) (spec, phase, task, verify string) {
	t.Helper()
	spec = ok(t, c, "authoring", map[string]any{"action": "spec-create", "name": "foundry tools"})["spec_id"].(string)
	d := ok(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": spec, "phase": map[string]any{"title": "One"}, "verify_scaffold": true,
		"tasks": []any{
			map[string]any{"title": "A", "task_category": "implementation", "file_path": "a.go", "description": "a", "estimated_hours": 3},
			map[string]any{"title": "B", "task_category": "implementation", "file_path": "b.go", "description": "b", "estimated_hours": 2.5},
		}})
	return spec, d["phase_id"].(string), d["task_ids"].([]any)[0].(string), d["verify_ids"].([]any)[0].(string)
}

// TestFoundrySpecTaskActionsEndToEnd: spec validate-fix, analyze,
// recalculate-hours, recalculate-actual-hours; task session-config,
// fix-verification-types.
func TestFoundrySpecTaskActionsEndToEnd(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	spec, phase, task, verify := foundryToolsSpec(t, c)

	// recalculate-hours: dry_run changes nothing, then the phase and spec get the sum.
	if d := ok(t, c, "spec", map[string]any{"action": "recalculate-hours", "spec_id": spec, "dry_run": true}); d["total"] != 5.5 || d["dry_run"] != true {
		t.Fatalf("dry run: %v", d)
	}
	d := ok(t, c, "spec", map[string]any{"action": "recalculate-hours", "spec_id": spec})
	if d["total"] != 5.5 || d["changed"] != float64(2) {
		t.Fatalf("recalculate-hours: %v", d)
	}
	info := ok(t, c, "task", map[string]any{"action": "info", "spec_id": spec, "task_id": phase})
	if !strings.Contains(mustJSON(t, info), `"estimated_hours":5.5`) {
		t.Fatalf("phase estimated_hours not 5.5: %v", info)
	}
	if d := ok(t, c, "spec", map[string]any{"action": "recalculate-hours", "spec_id": spec}); d["changed"] != float64(0) {
		t.Fatalf("second run must change nothing: %v", d)
	}
	ok(t, c, "task", map[string]any{"action": "start", "spec_id": spec, "task_id": task})
	ok(t, c, "task", map[string]any{"action": "complete", "spec_id": spec, "task_id": task, "completion_note": "done", "actual_hours": 4})
	if d := ok(t, c, "spec", map[string]any{"action": "recalculate-actual-hours", "spec_id": spec}); d["total"] != float64(4) || d["field"] != "actual_hours" {
		t.Fatalf("recalculate-actual-hours: %v", d)
	}

	// analyze: the three analyses in one answer.
	a := ok(t, c, "spec", map[string]any{"action": "analyze", "spec_id": spec})
	for _, k := range []string{"stats", "dependencies", "completeness"} {
		if a[k] == nil {
			t.Fatalf("analyze lacks %s: %v", k, a)
		}
	}

	// fix-verification-types: a verify node without a type gets one; validate-fix then finds nothing to do.
	ok(t, c, "task", map[string]any{"action": "update-metadata", "spec_id": spec, "task_id": verify, "metadata": map[string]any{"verification_type": nil}})
	fx := ok(t, c, "task", map[string]any{"action": "fix-verification-types", "spec_id": spec})
	if fx["applied_count"] != float64(1) || !strings.Contains(mustJSON(t, fx["applied"]), "MISSING_VERIFICATION_TYPE") {
		t.Fatalf("fix-verification-types: %v", fx)
	}
	if vf := ok(t, c, "spec", map[string]any{"action": "validate-fix", "spec_id": spec}); vf["applied_count"] != float64(0) {
		t.Fatalf("validate-fix after the fix: %v", vf)
	}

	// session-config: this session and its limits.
	sc := ok(t, c, "task", map[string]any{"action": "session-config"})
	if sc["session_id"] == "" || sc["token_budget"].(float64) <= 0 || sc["deadline_ms"].(float64) <= 0 {
		t.Fatalf("session-config: %v", sc)
	}
}

// TestFoundryAuthoringActionsEndToEnd: phase-template and the intake inbox.
func TestFoundryAuthoringActionsEndToEnd(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	pt := ok(t, c, "authoring", map[string]any{"action": "phase-template"})
	if pt["count"] != float64(5) {
		t.Fatalf("phase-template: %v", pt)
	}
	one := ok(t, c, "authoring", map[string]any{"action": "phase-template", "phase_template": "Testing"})
	tmpl := one["templates"].([]any)[0].(map[string]any)
	failsWith(t, c, "NOT_FOUND", "authoring", map[string]any{"action": "phase-template", "phase_template": "testng"})
	// A template applies as given through phase-add-bulk.
	spec := ok(t, c, "authoring", map[string]any{"action": "spec-create", "name": "templated"})["spec_id"].(string)
	ok(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": spec, "phase": tmpl["phase"], "tasks": tmpl["tasks"]})

	first := ok(t, c, "authoring", map[string]any{"action": "intake-add", "title": "Try bbolt buckets", "description": "for notes"})["item"].(map[string]any)
	ok(t, c, "authoring", map[string]any{"action": "intake-add", "title": "Second"})
	if l := ok(t, c, "authoring", map[string]any{"action": "intake-list"}); l["count"] != float64(2) {
		t.Fatalf("intake-list: %v", l)
	}
	id := first["intake_id"].(string)
	dis := ok(t, c, "authoring", map[string]any{"action": "intake-dismiss", "intake_id": id, "reason": "done"})
	if dis["item"].(map[string]any)["status"] != "dismissed" {
		t.Fatalf("intake-dismiss: %v", dis)
	}
	if again := ok(t, c, "authoring", map[string]any{"action": "intake-dismiss", "intake_id": id}); again["already_dismissed"] != true {
		t.Fatalf("second dismiss: %v", again)
	}
	l := ok(t, c, "authoring", map[string]any{"action": "intake-list", "limit": 1})
	if l["count"] != float64(1) || l["items"].([]any)[0].(map[string]any)["title"] != "Second" {
		t.Fatalf("dismissed items are not listed: %v", l)
	}
	failsWith(t, c, "NOT_FOUND", "authoring", map[string]any{"action": "intake-dismiss", "intake_id": "intake-99"})
}

// TestErrorToolRecordsErrorAnswers: every error answer is recorded; list,
// get, stats, patterns and cleanup read and clear the record.
func TestErrorToolRecordsErrorAnswers(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	for range 2 {
		if env := call(t, c, "spec", map[string]any{"action": "get", "spec_id": "no-such-spec"}); errorCode(env) != "SPEC_NOT_FOUND" {
			t.Fatalf("setup: %v", env)
		}
	}
	call(t, c, "task", map[string]any{"action": "no-such-action"})
	l := ok(t, c, "error", map[string]any{"action": "list", "tool_name": "spec"})
	if l["count"] != float64(2) {
		t.Fatalf("error list: %v", l)
	}
	rec := l["errors"].([]any)[0].(map[string]any)
	if rec["error_code"] != "SPEC_NOT_FOUND" || rec["action"] != "get" || rec["request_id"] == "" {
		t.Fatalf("record: %v", rec)
	}
	if g := ok(t, c, "error", map[string]any{"action": "get", "error_id": rec["id"]}); g["id"] != rec["id"] {
		t.Fatalf("error get: %v", g)
	}
	failsWith(t, c, "NOT_FOUND", "error", map[string]any{"action": "get", "error_id": "err-999999"})
	st := ok(t, c, "error", map[string]any{"action": "stats"})
	if st["total"].(float64) < 3 || st["by_code"].([]any)[0].(map[string]any)["key"] != "SPEC_NOT_FOUND" {
		t.Fatalf("error stats: %v", st)
	}
	p := ok(t, c, "error", map[string]any{"action": "patterns"})
	if p["count"] != float64(1) || p["patterns"].([]any)[0].(map[string]any)["count"] != float64(2) {
		t.Fatalf("error patterns: %v", p)
	}
	if d := ok(t, c, "error", map[string]any{"action": "cleanup", "dry_run": true}); d["deleted"].(float64) < 4 {
		t.Fatalf("cleanup dry run: %v", d)
	}
	ok(t, c, "error", map[string]any{"action": "cleanup"})
	if l := ok(t, c, "error", map[string]any{"action": "list", "tool_name": "spec"}); l["count"] != float64(0) {
		t.Fatalf("after cleanup: %v", l)
	}
}

// TestModelBackedActionsNotSupported: foundry's model-backed actions answer
// NOT_SUPPORTED (any case, _ or -) with a recovery that runs as given.
func TestModelBackedActionsNotSupported(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	for _, tc := range []struct{ tool, action, recovery string }{
		{"research", "deep-research", "research"},
		{"research", "Deep_Research_Report", "research"},
		{"research", "chat", "server"},
		{"research", "consensus", "server"},
		{"research", "thinkdeep", "server"},
		{"research", "ideate", "server"},
		{"research", "thread-list", "research"},
		{"server", "llm-status", "server"},
		{"pr", "create", "server"},
		{"review", "fidelity", "spec"}, // review offers only the deterministic fidelity-gate
		{"review", "parse_feedback", "spec"},
		{"provider", "execute", "server"},
	} {
		d := failsWith(t, c, "NOT_SUPPORTED", tc.tool, map[string]any{"action": tc.action, "prompt": "x"})
		if got := d["recovery"].(map[string]any)["suggested_tool"]; got != tc.recovery {
			t.Errorf("%s %s: recovery %v, want %s", tc.tool, tc.action, got, tc.recovery)
		}
	}
	if names := toolNames(listTools(t, c)); slices.Contains(names, "provider") || !slices.Contains(names, "review") {
		t.Errorf("tools/list offers a model-backed tool, or not review (fidelity-gate): %v", names)
	}
}

// mustJSON is v as compact JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	return string(b)
}

// writeFiles writes files (slash-separated names) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// TestPlanEnvironmentTestPREndToEnd: the plan, environment, test and pr
// tools over a real workspace folder.
func TestPlanEnvironmentTestPREndToEnd(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, true)
	ws := deps.Workspace
	writeFiles(t, ws, map[string]string{"Makefile": "test:\n\t@echo all-good\n", "pkg/x_test.go": "package pkg\n", "node_modules/y_test.go": "skip\n"})
	c, _ := inProcess(t, deps, protocols[0])

	// plan: create, refuse a second, list, review.
	pc := ok(t, c, "plan", map[string]any{"action": "create", "name": "Notes Inbox!", "template": "simple"})
	if pc["plan"] != "notes-inbox" || pc["path"] != "specs/.plans/notes-inbox.md" {
		t.Fatalf("plan create: %v", pc)
	}
	failsWith(t, c, "DUPLICATE_ENTRY", "plan", map[string]any{"action": "create", "name": "notes inbox"})
	if l := ok(t, c, "plan", map[string]any{"action": "list"}); l["count"] != float64(1) {
		t.Fatalf("plan list: %v", l)
	}
	rv := ok(t, c, "plan", map[string]any{"action": "review", "plan": "notes-inbox"})
	if rv["ready"] != false || rv["placeholders"] != float64(4) || rv["template"] != "simple" || len(rv["missing_sections"].([]any)) != 0 {
		t.Fatalf("fresh plan review: %v", rv)
	}
	writeFiles(t, ws, map[string]string{"specs/.plans/notes-inbox.md": "# Notes\n\n## Objective\n\nKeep notes.\n\n## Scope\n\nInbox only.\n\n## Tasks\n\n1. Store\n\n## Success Criteria\n\n- listed\n"})
	if rv := ok(t, c, "plan", map[string]any{"action": "review", "plan": "notes-inbox"}); rv["ready"] != true {
		t.Fatalf("filled plan review: %v", rv)
	}
	failsWith(t, c, "NOT_FOUND", "plan", map[string]any{"action": "review", "plan": "no-such-plan"})
	failsWith(t, c, "INVALID_FORMAT", "plan", map[string]any{"action": "review", "plan": "../etc/passwd"})

	// environment: the Makefile is the only marker.
	if d := ok(t, c, "environment", map[string]any{"action": "detect-test-runner"}); d["test_runner"] != "make" || d["test_command"] != "make test" {
		t.Fatalf("detect-test-runner: %v", d)
	}
	tc := ok(t, c, "environment", map[string]any{"action": "verify-toolchain"})
	if !strings.Contains(mustJSON(t, tc), `{"found":true,"name":"make"}`) {
		t.Fatalf("verify-toolchain: %v", tc)
	}
	if d := ok(t, c, "environment", map[string]any{"action": "init"}); len(d["written"].([]any)) != 0 || d["ready"] != true {
		t.Fatalf("init: %v", d)
	}

	// test: discover skips node_modules; run is off without the option.
	td := ok(t, c, "test", map[string]any{"action": "discover"})
	if td["count"] != float64(0) { // the Makefile kind has no test-file rule; go files need go.mod
		t.Fatalf("test discover: %v", td)
	}
	writeFiles(t, ws, map[string]string{"go.mod": "module x\n"})
	td = ok(t, c, "test", map[string]any{"action": "discover"})
	if td["count"] != float64(1) || td["files"].([]any)[0] != "pkg/x_test.go" || td["test_runner"] != "go" {
		t.Fatalf("test discover with go.mod: %v", td)
	}
	must(t, os.Remove(filepath.Join(ws, "go.mod")))
	failsWith(t, c, "FEATURE_DISABLED", "test", map[string]any{"action": "run"})
	for _, a := range ok(t, c, "server", map[string]any{"action": "schema", "tool_name": "test"})["actions"].([]any) {
		if a := a.(map[string]any); a["name"] == "run" && a["available"] != false {
			t.Fatalf("server schema must mark test run unavailable: %v", a)
		}
	}
	for _, target := range []string{"a; rm -rf /", "../outside", "pkg/../../outside"} {
		if env := call(t, c, "test", map[string]any{"action": "run", "target": target}); errorCode(env) != "INVALID_FORMAT" {
			t.Fatalf("target %q: %v", target, env)
		}
	}

	// pr get-context: progress, journal, and the diff of a git work tree.
	spec, _, _, _ := foundryToolsSpec(t, c)
	pr := ok(t, c, "pr", map[string]any{"action": "get-context", "spec_id": spec})
	if pr["diff"].(map[string]any)["available"] != false || pr["total_tasks"].(float64) < 2 {
		t.Fatalf("pr get-context outside git: %v", pr)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "Makefile")
	git("commit", "-qm", "init")
	writeFiles(t, ws, map[string]string{"Makefile": "test:\n\t@echo changed\n\t@echo twice\n"})
	pr = ok(t, c, "pr", map[string]any{"action": "get-context", "spec_id": spec})
	diff := pr["diff"].(map[string]any)
	if diff["available"] != true || diff["additions"] != float64(2) || diff["files"].([]any)[0].(map[string]any)["path"] != "Makefile" {
		t.Fatalf("pr get-context diff: %v", diff)
	}
	if strings.Contains(mustJSON(t, pr), ws) {
		t.Fatalf("pr get-context shows a server path: %v", pr)
	}
}

// TestTestRunExecutes: with --enable-verification-execute, test run runs
// the detected command in the workspace and reports PASSED.
func TestTestRunExecutes(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, true)
	deps.VerificationExecute = true
	writeFiles(t, deps.Workspace, map[string]string{"Makefile": "test:\n\t@echo all-good\nunit:\n\t@echo unit-ran\n"})
	c, _ := inProcess(t, deps, protocols[0])
	d := ok(t, c, "test", map[string]any{"action": "run", "target": "unit"})
	if d["result"] != "PASSED" || !strings.Contains(d["output"].(string), "unit-ran") || d["command"] != "make test unit" {
		t.Fatalf("test run: %v", d)
	}
}

// TestTestRunRefusesOptionTargets: a target starting with "-" would reach
// the test runner as an option (make -f, go test -exec, pytest -p): test
// run refuses it with INVALID_FORMAT, a remediation and a recovery that
// runs, and runs nothing; a "-" inside a target stays allowed.
func TestTestRunRefusesOptionTargets(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, true)
	deps.VerificationExecute = true
	writeFiles(t, deps.Workspace, map[string]string{
		"Makefile": "test:\n\t@echo all-good\nunit-a:\n\t@echo unit-a-ran\n",
		"evil.mk":  "test:\n\t@touch pwned\n",
	})
	c, _ := inProcess(t, deps, protocols[0])
	for _, target := range []string{"-fevil.mk", "--makefile", "-", "--", "-n"} {
		d := failsWith(t, c, "INVALID_FORMAT", "test", map[string]any{"action": "run", "target": target})
		if rem, _ := d["remediation"].(string); !strings.Contains(rem, "-") || d["details"].(map[string]any)["field"] != "target" {
			t.Errorf("target %q: %v", target, d)
		}
	}
	if _, err := os.Stat(filepath.Join(deps.Workspace, "pwned")); err == nil {
		t.Fatal("a target starting with - reached make as an option")
	}
	if d := ok(t, c, "test", map[string]any{"action": "run", "target": "unit-a"}); !strings.Contains(d["output"].(string), "unit-a-ran") {
		t.Fatalf("test run unit-a: %v", d)
	}
}

// BenchmarkErrorAnswer is one failing call (UNKNOWN_ACTION) through a real
// mcp-go client, with the error recorded in the store (recorded) and
// without a record (Deps.Notes nil): the cost of the error log per error
// answer.
func BenchmarkErrorAnswer(b *testing.B) {
	for _, recorded := range []bool{true, false} {
		b.Run(map[bool]string{true: "recorded", false: "unrecorded"}[recorded], func(b *testing.B) {
			deps := newDeps(b, false)
			deps.Runtime.Logger = slog.New(slog.DiscardHandler)
			if !recorded {
				deps.Notes = nil
			}
			c, _ := inProcess(b, deps, protocols[0])
			req := mcp.CallToolRequest{}
			req.Params.Name = "health"
			req.Params.Arguments = map[string]any{"action": "no-such-action"}
			ctx := context.Background()
			for b.Loop() {
				if res, err := c.CallTool(ctx, req); err != nil || !res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
