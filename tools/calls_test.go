package tools

import (
	"slices"
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// TestCallTargetsBindTheirActions: every action the tools name in a next
// call is served, and the typed struct its calls are built from is the one
// the action binds, so no suggested call names an undeclared parameter.
func TestCallTargetsBindTheirActions(t *testing.T) {
	d := testDeps()
	d.Specs = declaredOnly{}
	reg := New(d)
	if len(callTargets) == 0 {
		t.Fatal("no call targets declared")
	}
	for _, c := range callTargets {
		if err := reg.CheckTarget(c); err != nil {
			t.Error(err)
		}
	}
}

// TestTargetCallArgs: a call carries its action and exactly the fields
// given (a pointer to a zero value is given; a zero value is not), under
// their arg tags, embedded structs flattened.
func TestTargetCallArgs(t *testing.T) {
	depth := 0
	c := toTaskHierarchy.Call(taskHierarchyArgs{specArgs: specOf("s1"), MaxDepth: &depth})
	if c.Tool != "task" || len(c.Args) != 3 || c.Args["action"] != "hierarchy" || c.Args["spec_id"] != "s1" || c.Args["max_depth"] != 0 {
		t.Fatalf("call = %#v", c)
	}
	if got := toTaskSession.Args(sessionArgs{Command: "list"}); len(got) != 2 || got["command"] != "list" {
		t.Fatalf("args = %#v", got)
	}
	var reg mcptool.Registry
	if err := reg.CheckTarget(toTaskInfo); err == nil {
		t.Fatal("an empty registry serves task info")
	}
}

// TestExamplesNameDeclaredParameters: every action's example (built from
// its typed arguments, mcptool.ArgsOf, or its tool's table) gives only
// parameters the action takes, never "action".
func TestExamplesNameDeclaredParameters(t *testing.T) {
	d := testDeps()
	d.Specs = declaredOnly{}
	examples := 0
	for _, tool := range New(d).Tools() {
		for _, a := range tool.Actions {
			if a.Example != nil {
				examples++
			}
			for k := range a.Example {
				if !slices.Contains(a.Params(), k) {
					t.Errorf("%s %s: example gives %q, not a parameter of the action", tool.Name, a.Name, k)
				}
			}
		}
	}
	if examples == 0 {
		t.Fatal("no action has an example")
	}
}
