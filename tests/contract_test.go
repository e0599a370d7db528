package tests

import (
	"fmt"
	"testing"

	"github.com/specd/specd/tools"
)

// TestContractEveryAction walks the registry: every action's happy path (its
// declared Example) and its error paths (an unknown parameter, a parameter
// of another action, each missing required parameter, a wrong type) answer
// with envelopes that validate against the published output schema. New
// actions are covered by declaring them; no new test code is needed.
func TestContractEveryAction(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, reg := inProcess(t, newDeps(t, false), p)
			for _, tool := range reg.Tools() {
				for _, a := range tool.Describe() {
					name := tool.Name + "/" + a.Name
					t.Run(name, func(t *testing.T) {
						act := findAction(tool, a.Name)
						if act.Example != nil {
							args := map[string]any{"action": a.Name}
							for k, v := range act.Example {
								args[k] = v
							}
							env := call(t, c, tool.Name, args)
							if env["success"] != true {
								t.Fatalf("happy path failed: %v", env)
							}
						}
						// A parameter no tool has.
						env := call(t, c, tool.Name, withExample(act, map[string]any{"zz_not_a_param": 1}))
						if errorCode(env) != "UNKNOWN_PARAMETER" {
							t.Fatalf("unknown parameter: %v", env)
						}
						// A parameter of this tool that this action does not take.
						for _, p := range tool.Params {
							if !takes(act, p.Name) {
								env := call(t, c, tool.Name, withExample(act, map[string]any{p.Name: sampleValue(p)}))
								if errorCode(env) != "UNKNOWN_PARAMETER" || data(env)["details"].(map[string]any)["action"] != a.Name {
									t.Fatalf("%s is not taken by %s: %v", p.Name, a.Name, env)
								}
								break
							}
						}
						// Each required parameter missing.
						for _, r := range act.Required {
							args := withExample(act, nil)
							delete(args, r)
							env := call(t, c, tool.Name, args)
							if errorCode(env) != "MISSING_REQUIRED" || data(env)["details"].(map[string]any)["field"] != r {
								t.Fatalf("missing %s: %v", r, env)
							}
						}
						// A wrong type for each parameter the action takes.
						for _, pn := range act.Params() {
							p := findParam(tool, pn)
							env := call(t, c, tool.Name, withExample(act, map[string]any{pn: wrongValue(p)}))
							if errorCode(env) != "INVALID_FORMAT" {
								t.Fatalf("wrong type for %s: %v", pn, env)
							}
						}
					})
				}
			}
			env := call(t, c, "health", map[string]any{"action": "no-such-action"})
			if errorCode(env) != "UNKNOWN_ACTION" {
				t.Fatalf("unknown action: %v", env)
			}
			env = call(t, c, "health", map[string]any{})
			if errorCode(env) != "MISSING_REQUIRED" {
				t.Fatalf("no action: %v", env)
			}
		})
	}
}

func findAction(t *tools.Tool, name string) *tools.Action {
	for i := range t.Actions {
		if t.Actions[i].Name == name {
			return &t.Actions[i]
		}
	}
	panic("no action " + name)
}

func findParam(t *tools.Tool, name string) tools.Param {
	for _, p := range t.Params {
		if p.Name == name {
			return p
		}
	}
	panic("no param " + name)
}

func takes(a *tools.Action, name string) bool {
	for _, p := range a.Params() {
		if p == name {
			return true
		}
	}
	return false
}

func withExample(a *tools.Action, extra map[string]any) map[string]any {
	args := map[string]any{"action": a.Name}
	for k, v := range a.Example {
		args[k] = v
	}
	for _, r := range a.Required {
		if _, ok := args[r]; !ok {
			args[r] = "x"
		}
	}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

func sampleValue(p tools.Param) any {
	switch p.Type {
	case tools.String:
		if len(p.Enum) > 0 {
			return p.Enum[0]
		}
		return "x"
	case tools.Integer, tools.Number:
		if p.Min != nil {
			return *p.Min
		}
		return 1
	case tools.Boolean:
		return true
	case tools.Array:
		return []any{}
	default:
		return map[string]any{}
	}
}

func wrongValue(p tools.Param) any {
	switch p.Type {
	case tools.String:
		return 42
	case tools.Integer:
		return 1.5
	case tools.Number, tools.Boolean, tools.Array, tools.Object:
		return fmt.Sprintf("not a %s", p.Type)
	}
	return nil
}
