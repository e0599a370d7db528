package tests

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/core/mcptool"
)

// idParams are the parameters that name something stored; the probe gives
// each a well-formed id that does not exist.
var idParams = map[string]any{
	"spec_id": "no-such-spec", "task_id": "task-9-9", "node_id": "task-9-9", "verify_id": "verify-9-9",
	"target_id": "task-9-8", "parent": "phase-9", "phase_id": "phase-9", "source_id": "no-such-source",
	"query_hash": "sha256:" + strings.Repeat("0", 64), "hash": "sha256:" + strings.Repeat("0", 64),
	"content_id": "no-such-content", "version": 9999, "tool_name": "no-such-tool", "other_spec_id": "no-such-spec",
	"task_ids": []any{"task-9-9"},
}

// recoveryProbe records what the error paths answered, into a tally that
// probes of parallel subtests share.
type recoveryProbe struct {
	t *testing.T
	c *client.Client
	*recoveryTally
}

// recoveryTally counts what all probes saw.
type recoveryTally struct {
	mu      sync.Mutex
	codes   map[string]int  // error code → failures seen
	checked int             // recovery calls executed
	static  map[string]bool // static recovery calls that ran, by tool and args
}

// staticRecovery reports whether a recovery call's answer depends on the
// registry alone, never on the store: server(action="schema"), the next
// call of most argument errors. Each distinct such call is executed once;
// its hundreds of repeats (tens of kilobytes each) would add nothing.
func staticRecovery(tool string, args map[string]any) bool {
	return tool == "server" && args["action"] == "schema"
}

// ranStatic reports whether the static recovery call key already ran (its
// first run reports a failure), and records that it is about to run.
func (r *recoveryTally) ranStatic(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.static[key] {
		return true
	}
	r.static[key] = true
	return false
}

func (r *recoveryTally) count(code string, checked int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if code != "" {
		r.codes[code]++
	}
	r.checked += checked
}

// expectRecovery checks one failure: a registered code; a recovery call
// (unless the code is in core.NoNextCall); and that call, executed as
// given through the real dispatcher, succeeds. A success is reported as
// the probe not reaching an error path when mustFail is set.
func (p *recoveryProbe) expectRecovery(what string, env map[string]any, mustFail bool) {
	p.t.Helper()
	if env["success"] == true {
		if mustFail {
			p.t.Errorf("%s: expected an error, got success: %s", what, compactJSON(env["data"]))
		}
		return
	}
	d := data(env)
	code, _ := d["error_code"].(string)
	if _, ok := errcode.Lookup(code); !ok {
		p.t.Errorf("%s: unregistered code %q", what, code)
		return
	}
	p.count(code, 0)
	rec, _ := d["recovery"].(map[string]any)
	tool, _ := rec["suggested_tool"].(string)
	if tool == "" {
		if _, exempt := core.NoNextCall[code]; !exempt {
			p.t.Errorf("%s: %s names no next call and is not in core.NoNextCall: %s", what, code, compactJSON(d))
		}
		return
	}
	args, ok := rec["suggested_args"].(map[string]any)
	if !ok {
		p.t.Errorf("%s: %s recovery has no suggested_args: %s", what, code, compactJSON(rec))
		return
	}
	// As given: a copy of exactly what the answer said.
	var asGiven map[string]any
	b, _ := json.Marshal(args)
	_ = json.Unmarshal(b, &asGiven)
	if staticRecovery(tool, asGiven) && p.ranStatic(tool+" "+compactJSON(asGiven)) {
		p.count("", 1) // checked: the same call ran (and was checked) before
		return
	}
	got := call(p.t, p.c, tool, asGiven)
	p.count("", 1)
	if got["success"] == true {
		return
	}
	// A corrected call (the refused call with the refused point fixed: a
	// converted value, a key dropped, a candidate filled in) runs when the
	// refusal it fixed is gone; the probe's other made-up values may then
	// be refused in turn, and that refusal's own recovery must run.
	if corrected := strings.HasPrefix(requestID(env), tool+"_") && !sameRefusal(env, got); corrected && strings.Count(what, " → ") < 3 {
		p.expectRecovery(what+" → corrected call", got, false)
		return
	}
	p.t.Errorf("%s: %s recovery %s %s does not run: %s", what, code, tool, compactJSON(args), compactJSON(got["data"]))
}

// requestID is env's meta.request_id ("{tool}_{hex}").
func requestID(env map[string]any) string {
	m, _ := env["meta"].(map[string]any)
	s, _ := m["request_id"].(string)
	return s
}

// sameRefusal reports whether two failures refuse the same point: the same
// code about the same details.field.
func sameRefusal(a, b map[string]any) bool {
	field := func(env map[string]any) any { d, _ := data(env)["details"].(map[string]any); return d["field"] }
	return errorCode(a) == errorCode(b) && field(a) == field(b)
}

func compactJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestContractEveryRecoveryRuns provokes, for every action of every tool,
// each error path a client can reach with arguments alone — an unknown
// parameter, a parameter of another action, each missing required
// parameter, a wrong type, each stored id replaced by one that does not
// exist, a stale expected_version, a corrupt cursor, an unknown action —
// and, on a real store, the state errors of the work loop: a blocked start,
// starting and completing a task another session holds, invalid
// transitions, cycles, duplicates. Every failure must name a next call
// (recovery.suggested_tool/suggested_args) that succeeds when executed
// exactly as given, unless its code is listed in core.NoNextCall with the
// reason. A corrected call (the refused call with the refused point fixed)
// runs when that refusal is gone: if the probe's other made-up values are
// then refused, that refusal's recovery must run in turn. A recovery call
// whose answer depends on the registry alone (staticRecovery) is executed
// once per distinct call.
func TestContractEveryRecoveryRuns(t *testing.T) {
	t.Parallel()
	deps := newDeps(t, false)
	c, reg := inProcess(t, deps, protocols[0])
	other, _ := inProcess(t, deps, protocols[1]) // another session
	tally := &recoveryTally{codes: map[string]int{}, static: map[string]bool{}}
	p := &recoveryProbe{t: t, c: c, recoveryTally: tally}
	tmpl := newFixtureTemplate(t, protocols[0], false)

	for code, reason := range core.NoNextCall {
		if _, ok := errcode.Lookup(code); !ok || reason == "" {
			t.Errorf("core.NoNextCall: %q is not a registered code with a reason", code)
		}
	}

	// Each action's probes run in parallel with the other actions', on a
	// fresh fixture (a copy of one, on a server of its own) when the action
	// writes; those of actions that only read share one copy (readClient
	// checks that neither they nor the recovery calls they run change it).
	reads, readFx := tmpl.readClient(t, protocols[0])
	for _, tool := range reg.Tools() {
		p.expectRecovery(tool.Name+" unknown action", call(t, c, tool.Name, map[string]any{"action": "no-such-action"}), true)
	}
	t.Run("actions", func(t *testing.T) {
		for _, tool := range reg.Tools() {
			for _, a := range tool.Describe() {
				t.Run(tool.Name+"/"+a.Name, func(t *testing.T) {
					t.Parallel()
					act := findAction(tool, a.Name)
					c, fx := reads, readFx
					if act.SideEffects == mcptool.EffectWrite {
						c, fx = tmpl.client(t, protocols[0])
					}
					probeAction(&recoveryProbe{t: t, c: c, recoveryTally: tally}, tool, act, fx)
				})
			}
		}
	})

	// The work loop's state errors, on one fixture.
	fx := fixture(t, c)
	spec, t1, t2 := fx["$spec_id"], fx["$task_id"], fx["$task_id_2"]
	task := func(cl *client.Client, args map[string]any) map[string]any {
		args["spec_id"] = spec
		return call(t, cl, "task", args)
	}
	mustOK := func(env map[string]any) {
		t.Helper()
		if env["success"] != true {
			t.Fatalf("setup: %s", compactJSON(env["data"]))
		}
	}
	mustOK(task(c, map[string]any{"action": "add-dependency", "task_id": t1, "target_id": t2}))
	p.expectRecovery("start a blocked task", task(c, map[string]any{"action": "start", "task_id": t2}), true)
	p.expectRecovery("complete a blocked task", task(c, map[string]any{"action": "complete", "task_id": t2}), true)
	p.expectRecovery("start-batch with a blocked task", task(c, map[string]any{"action": "start-batch", "task_ids": []any{t1, t2}}), true)
	p.expectRecovery("cycle", task(c, map[string]any{"action": "add-dependency", "task_id": t2, "target_id": t1}), true)
	p.expectRecovery("self edge", task(c, map[string]any{"action": "add-dependency", "task_id": t1, "target_id": t1}), true)
	p.expectRecovery("remove a missing edge", task(c, map[string]any{"action": "remove-dependency", "task_id": t2, "target_id": t1, "dependency_type": "blocks"}), true)
	p.expectRecovery("unblock a pending task", task(c, map[string]any{"action": "unblock", "task_id": t1}), true)
	p.expectRecovery("complete a phase", task(c, map[string]any{"action": "complete", "task_id": fx["$phase_id"]}), true)
	mustOK(task(c, map[string]any{"action": "start", "task_id": t1}))
	for _, args := range []map[string]any{
		{"action": "start", "task_id": t1},
		{"action": "complete", "task_id": t1},
		{"action": "block", "task_id": t1, "reason": "mine now"},
		{"action": "reopen", "task_id": t1, "reason": "mine now"},
		{"action": "update-status", "task_id": t1, "status": "completed"},
	} {
		p.expectRecovery("another session's "+args["action"].(string), task(other, args), true)
	}
	mustOK(task(c, map[string]any{"action": "add-requirement", "task_id": t1, "text": "works"}))
	p.expectRecovery("duplicate requirement", task(c, map[string]any{"action": "add-requirement", "task_id": t1, "text": "works"}), true)
	p.expectRecovery("lifecycle move backwards", call(t, c, "lifecycle", map[string]any{"action": "move", "spec_id": spec, "to_folder": "pending"}), false)
	p.expectRecovery("lifecycle complete unfinished", call(t, c, "lifecycle", map[string]any{"action": "complete", "spec_id": spec}), true)
	p.expectRecovery("remove an active phase", call(t, c, "authoring", map[string]any{"action": "phase-remove", "spec_id": spec, "phase_id": fx["$phase_id"]}), true)
	p.expectRecovery("spec-create duplicate", call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "contract fixture"}), false)

	codes := make([]string, 0, len(tally.codes))
	for code, n := range tally.codes {
		codes = append(codes, fmt.Sprintf("%s×%d", code, n))
	}
	sort.Strings(codes)
	t.Logf("%d recovery calls checked (%d distinct static ones executed once); codes seen: %s", tally.checked, len(tally.static), strings.Join(codes, " "))
	for _, want := range []string{"TASK_BLOCKED", "VERSION_CONFLICT", "CONFLICT", "INVALID_TRANSITION", "UNKNOWN_ACTION", "UNKNOWN_PARAMETER",
		"MISSING_REQUIRED", "INVALID_FORMAT", "INVALID_CURSOR", "SPEC_NOT_FOUND", "TASK_NOT_FOUND", "CIRCULAR_DEPENDENCY", "SELF_REFERENCE",
		"DEPENDENCY_NOT_FOUND", "DUPLICATE_ENTRY"} {
		if tally.codes[want] == 0 || (want == "VERSION_CONFLICT" && tally.codes[want] < 30) {
			t.Errorf("no probe reached %s", want)
		}
	}
}

// probeAction provokes act's error paths a client can reach with arguments
// alone (see TestContractEveryRecoveryRuns) on the fixture fx.
func probeAction(p *recoveryProbe, tool *mcptool.Tool, act *mcptool.Action, fx map[string]string) {
	t, c, name := p.t, p.c, tool.Name+"/"+act.Name
	example := func(extra map[string]any) map[string]any {
		args := map[string]any{"action": act.Name}
		for k, v := range act.Example {
			args[k] = substitute(v, fx)
		}
		for _, r := range act.Required {
			if _, ok := args[r]; !ok {
				args[r] = substitute(sampleValue(findParam(tool, r)), fx)
			}
		}
		if v, ok := args["spec_id"]; ok && v == "x" {
			args["spec_id"] = fx["$spec_id"]
		}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	argumentErrors(t, tool, act, example, func(what string, args map[string]any) map[string]any {
		env := call(t, c, tool.Name, args)
		p.expectRecovery(name+" "+what, env, true)
		return env
	})
	for _, pn := range act.Params() {
		if v, ok := idParams[pn]; ok && pn != "parent" {
			// A missing id may be a legitimate empty answer (a
			// filter); an error must still name its next call.
			p.expectRecovery(name+" missing id "+pn, call(t, c, tool.Name, example(map[string]any{pn: v})), false)
		}
	}
	if takes(act, "cursor") {
		p.expectRecovery(name+" bad cursor", call(t, c, tool.Name, example(map[string]any{"cursor": "bm90LWEtY3Vyc29y"})), true)
	}
	if takes(act, "expected_version") && act.Example != nil {
		// Read-only actions may take expected_version and ignore it.
		p.expectRecovery(name+" stale expected_version", call(t, c, tool.Name, example(map[string]any{"expected_version": 9999})), false)
	}
}
