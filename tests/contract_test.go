package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/specd/specd/core/mcptool"
)

// TestContractEveryAction walks the registry: every action's happy path (its
// declared Example) and its error paths (an unknown parameter, a parameter
// of another action, each missing required parameter, a wrong type) answer
// with envelopes that validate against the published output schema. New
// actions are covered by declaring them; no new test code is needed.
//
// protocols[0]'s calls are made once, by the walks that check them for
// this test too: its happy paths by TestAnswersGolden (same examples, same
// fixture, on a deterministic clock and ids: each must succeed, its envelope
// validated by call), its error paths by TestContractEveryRecoveryRuns
// (argumentErrors checks each answer's code for this test and its recovery
// call for that one). This test walks the other protocols.
func TestContractEveryAction(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			shared, reg := inProcess(t, newDeps(t, false), p)
			if p != protocols[0] {
				walkContract(t, p, shared, reg)
			}
			env := call(t, shared, "health", map[string]any{"action": "no-such-action"})
			if errorCode(env) != "UNKNOWN_ACTION" {
				t.Fatalf("unknown action: %v", env)
			}
			env = call(t, shared, "health", map[string]any{})
			if errorCode(env) != "MISSING_REQUIRED" {
				t.Fatalf("no action: %v", env)
			}
		})
	}
}

// walkContract runs TestContractEveryAction's per-action subtests over
// protocol: each example on a fixture copy, then argumentErrors; actions
// without an example send their argument errors to shared (an empty store).
func walkContract(t *testing.T, protocol string, shared *client.Client, reg *mcptool.Registry) {
	tmpl := newFixtureTemplate(t, protocol, false)
	reads, readFx := tmpl.readClient(t, protocol)
	for _, tool := range reg.Tools() {
		for _, a := range tool.Describe() {
			t.Run(tool.Name+"/"+a.Name, func(t *testing.T) {
				t.Parallel()
				c := shared
				act := findAction(tool, a.Name)
				if act.Example != nil {
					// Each happy path that writes gets a fresh fixture
					// (a copy of one, on a server of its own), so
					// mutations cannot disturb one another; those that
					// only read share one copy (readClient checks that
					// they leave it as it was).
					var fx map[string]string
					c, fx = reads, readFx
					if act.SideEffects == mcptool.EffectWrite {
						c, fx = tmpl.client(t, protocol)
					}
					env := call(t, c, tool.Name, exampleArgs(t, c, tool, act, fx))
					if env["success"] != true {
						t.Fatalf("happy path failed: %v", env)
					}
				}
				argumentErrors(t, tool, act, func(extra map[string]any) map[string]any { return withExample(tool, act, extra) },
					func(_ string, args map[string]any) map[string]any { return call(t, c, tool.Name, args) })
			})
		}
	}
}

// argumentErrors sends act's argument errors a client can make — a
// parameter no tool has, a parameter of this tool that act does not take,
// each required parameter missing, a wrong type for each parameter act
// takes — built by example (act's example arguments plus extra), through
// send (what names the case), and fails t unless each answer is the error
// the contract gives: UNKNOWN_PARAMETER (naming the action for a foreign
// parameter), MISSING_REQUIRED naming the field, INVALID_FORMAT. Both
// TestContractEveryAction and TestContractEveryRecoveryRuns (which also
// checks each answer's recovery call) walk it, so a call both tests need
// is made once.
func argumentErrors(t testing.TB, tool *mcptool.Tool, act *mcptool.Action, example func(extra map[string]any) map[string]any, send func(what string, args map[string]any) map[string]any) {
	t.Helper()
	// A parameter no tool has.
	env := send("unknown parameter", example(map[string]any{"zz_not_a_param": 1}))
	if errorCode(env) != "UNKNOWN_PARAMETER" {
		t.Fatalf("unknown parameter: %v", env)
	}
	// A parameter of this tool that this action does not take.
	for _, p := range tool.Params {
		if !takes(act, p.Name) {
			env := send("foreign parameter "+p.Name, example(map[string]any{p.Name: sampleValue(p)}))
			if errorCode(env) != "UNKNOWN_PARAMETER" || data(env)["details"].(map[string]any)["action"] != act.Name {
				t.Fatalf("%s is not taken by %s: %v", p.Name, act.Name, env)
			}
			break
		}
	}
	// Each required parameter missing.
	for _, r := range act.Required {
		args := example(nil)
		delete(args, r)
		env := send("missing "+r, args)
		if errorCode(env) != "MISSING_REQUIRED" || data(env)["details"].(map[string]any)["field"] != r {
			t.Fatalf("missing %s: %v", r, env)
		}
	}
	// A wrong type for each parameter the action takes.
	for _, pn := range act.Params() {
		p := findParam(tool, pn)
		env := send("wrong type "+pn, example(map[string]any{pn: wrongValue(p)}))
		if errorCode(env) != "INVALID_FORMAT" {
			t.Fatalf("wrong type for %s: %v", pn, env)
		}
	}
}

func findAction(t *mcptool.Tool, name string) *mcptool.Action {
	for i := range t.Actions {
		if t.Actions[i].Name == name {
			return &t.Actions[i]
		}
	}
	panic("no action " + name)
}

func findParam(t *mcptool.Tool, name string) mcptool.Param {
	for _, p := range t.Params {
		if p.Name == name {
			return p
		}
	}
	panic("no param " + name)
}

func takes(a *mcptool.Action, name string) bool {
	for _, p := range a.Params() {
		if p == name {
			return true
		}
	}
	return false
}

func withExample(t *mcptool.Tool, a *mcptool.Action, extra map[string]any) map[string]any {
	args := map[string]any{"action": a.Name}
	for k, v := range a.Example {
		args[k] = v
	}
	for _, r := range a.Required {
		if _, ok := args[r]; !ok {
			args[r] = sampleValue(findParam(t, r))
		}
	}
	for k, v := range args {
		args[k] = substitute(v, map[string]string{})
	}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

func sampleValue(p mcptool.Param) any {
	switch p.Type {
	case mcptool.String:
		if len(p.Enum) > 0 {
			return p.Enum[0]
		}
		return "x"
	case mcptool.Integer, mcptool.Number, mcptool.IntOrString:
		if p.Min != nil {
			return *p.Min
		}
		return 1
	case mcptool.Boolean:
		return true
	case mcptool.Array:
		return []any{}
	default:
		return map[string]any{}
	}
}

func wrongValue(p mcptool.Param) any {
	switch p.Type {
	case mcptool.String:
		return 42
	case mcptool.Integer, mcptool.IntOrString:
		return 1.5
	case mcptool.Number, mcptool.Boolean, mcptool.Array, mcptool.Object:
		return fmt.Sprintf("not a %s", p.Type)
	}
	return nil
}

// fixture creates an active spec with one phase of two tasks, and a stored
// research digest with its archived source, and returns the placeholders
// examples may use: $spec_id, $phase_id, $task_id, $task_id_2, $verify_id,
// $source_id, $query_hash.
func fixture(t *testing.T, c *client.Client) map[string]string {
	t.Helper()
	env := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "contract fixture"})
	if env["success"] != true {
		t.Fatalf("fixture spec-create: %v", env)
	}
	id := data(env)["spec_id"].(string)
	env = call(t, c, "authoring", map[string]any{"action": "phase-add-bulk", "spec_id": id, "verify_scaffold": true,
		"phase": map[string]any{"title": "Phase one"},
		"tasks": []any{
			map[string]any{"title": "First task", "task_category": "implementation", "file_path": "a.go", "description": "do a"},
			map[string]any{"title": "Second task", "task_category": "implementation", "file_path": "b.go", "description": "do b"},
		}})
	if env["success"] != true {
		t.Fatalf("fixture phase-add-bulk: %v", env)
	}
	d := data(env)
	if env := call(t, c, "lifecycle", map[string]any{"action": "activate", "spec_id": id}); env["success"] != true {
		t.Fatalf("fixture activate: %v", env)
	}
	tasks := d["task_ids"].([]any)
	verify := d["verify_ids"].([]any)
	fx := map[string]string{"$spec_id": id, "$phase_id": d["phase_id"].(string), "$task_id": tasks[0].(string),
		"$task_id_2": tasks[1].(string), "$verify_id": verify[0].(string)}
	// A stored digest with its archived source: $source_id, $query_hash (the
	// research examples use the hash of this query: tools.contractFixtureQuery).
	const text, query = "Fixture source. The archive keeps canonical text for locators.", "archive locators"
	env = call(t, c, "research", map[string]any{"action": "digest-create", "text": text, "query": query, "source_id": "fixture-source"})
	if env["success"] != true {
		t.Fatalf("fixture digest-create: %v", env)
	}
	payload := data(env)["payload"]
	if env := call(t, c, "research", map[string]any{"action": "digest-put", "source_id": "fixture-source", "payload": payload, "text": text}); env["success"] != true {
		t.Fatalf("fixture digest-put: %v", env)
	}
	fx["$source_id"], fx["$query_hash"] = "fixture-source", data(env)["query_hash"].(string)
	return fx
}

// substitute replaces placeholder strings (also inside arrays and objects);
// unknown placeholders become "missing-…" ids so error paths still run.
func substitute(v any, fx map[string]string) any {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "$") {
			if r, ok := fx[x]; ok {
				return r
			}
			return "missing-" + strings.TrimPrefix(x, "$")
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, fx)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, fx)
		}
		return out
	}
	return v
}
