package tests

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/tools"
)

// TestToolNamesAreTheRegistry keeps tools.ToolNames (what --toolsets
// accepts) equal to the tools New builds.
func TestToolNamesAreTheRegistry(t *testing.T) {
	t.Parallel()
	if got := tools.New(newDeps(t, false)).Names(); !slices.Equal(got, tools.ToolNames) {
		t.Fatalf("registry %v, tools.ToolNames %v", got, tools.ToolNames)
	}
}

func toolNames(ts []mcp.Tool) []string {
	var out []string
	for _, tl := range ts {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// TestToolsetsEndToEnd: --toolsets offers only the named tools, plus health
// and server, in tools/list and in server tools; the others are not there
// to call.
func TestToolsetsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		toolsets []string
		want     []string
	}{
		{nil, tools.ToolNames},
		{[]string{"task"}, []string{"health", "server", "task"}},
		{[]string{"spec", "research", "health"}, []string{"health", "research", "server", "spec"}},
	} {
		t.Run(strings.Join(tc.toolsets, ","), func(t *testing.T) {
			d := newDeps(t, false)
			d.Toolsets = tc.toolsets
			c, _ := inProcess(t, d, protocols[0])
			if got := toolNames(listTools(t, c)); !slices.Equal(got, tc.want) {
				t.Fatalf("tools/list %v, want %v", got, tc.want)
			}
			var listed []string
			for _, it := range data(call(t, c, "server", map[string]any{"action": "tools", "limit": 50}))["tools"].([]any) {
				listed = append(listed, it.(map[string]any)["name"].(string))
			}
			if !slices.Equal(listed, tc.want) {
				t.Fatalf("server tools %v, want %v", listed, tc.want)
			}
			if !slices.Contains(tc.want, "spec") {
				if env := call(t, c, "server", map[string]any{"action": "schema", "tool_name": "spec"}); errorCode(env) != "NOT_FOUND" {
					t.Fatalf("server schema of a tool outside the toolsets: %v", env)
				}
			}
		})
	}
}

// TestReadOnlyEndToEnd: --read-only offers only read actions, annotates
// every tool readOnlyHint true, refuses a write with FORBIDDEN naming
// --read-only (nothing written), and server schema marks the write actions
// unavailable with the reason, their documentation kept.
func TestReadOnlyEndToEnd(t *testing.T) {
	t.Parallel()
	d := newDeps(t, false)
	d.ReadOnly = true
	c, reg := inProcess(t, d, protocols[0])
	listed := listTools(t, c)
	if len(listed) == 0 {
		t.Fatal("no tools")
	}
	for _, it := range data(call(t, c, "server", map[string]any{"action": "tools", "limit": 50}))["tools"].([]any) {
		if tl := it.(map[string]any); tl["name"] == "task" && slices.Contains(tl["actions"].([]any), any("start")) {
			t.Errorf("server tools offers task start under --read-only: %v", tl["actions"])
		}
	}
	for _, tl := range listed {
		a := tl.Annotations
		if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
			t.Errorf("%s: annotations %+v, want readOnlyHint true, destructiveHint false", tl.Name, a)
		}
		decl, _ := reg.Tool(tl.Name)
		enum := tl.InputSchema.Properties["action"].(map[string]any)["enum"].([]any)
		var offered []string
		for _, e := range enum {
			offered = append(offered, e.(string))
		}
		for _, as := range decl.Describe() {
			if want := as.SideEffects != mcptool.EffectWrite; slices.Contains(offered, as.Name) != want {
				t.Errorf("%s %s (side effects %s): offered %v", tl.Name, as.Name, as.SideEffects, offered)
			}
		}
	}
	if !slices.Contains(toolNames(listed), "task") || !slices.Contains(toolNames(listed), "spec") {
		t.Fatalf("read-only tools/list lacks task or spec: %v", toolNames(listed))
	}

	refused := call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Read only"})
	if refused["success"] != false || errorCode(refused) != "FORBIDDEN" || !strings.Contains(refused["error"].(string), "--read-only") {
		t.Fatalf("a write under --read-only: %v", refused)
	}
	if env := call(t, c, "task", map[string]any{"action": "start", "spec_id": "no-such-spec", "task_id": "task-1-1"}); errorCode(env) != "FORBIDDEN" {
		t.Fatalf("task start under --read-only: %v (the refusal comes before any lookup)", env)
	}
	// An unknown action's allowed list and suggestions name only what is
	// offered ("strat" is closest to "start", which is not).
	unknown := data(call(t, c, "task", map[string]any{"action": "strat", "spec_id": "no-such-spec"}))
	if allowed := fmt.Sprint(unknown["details"].(map[string]any)["allowed"]); strings.Contains(allowed, "start") || !strings.Contains(allowed, "hierarchy") {
		t.Errorf("UNKNOWN_ACTION under --read-only allows %s", allowed)
	}
	if fm := fmt.Sprint(unknown["recovery"].(map[string]any)["fuzzy_matches"]); strings.Contains(fm, "start") {
		t.Errorf("UNKNOWN_ACTION under --read-only suggests %s", fm)
	}
	if list := call(t, c, "spec", map[string]any{"action": "list"}); list["success"] != true || data(list)["count"] != float64(0) {
		t.Fatalf("spec list after the refused create: %v", list)
	}

	sch := data(call(t, c, "server", map[string]any{"action": "schema", "tool_name": "task"}))
	for _, a := range sch["actions"].([]any) {
		as := a.(map[string]any)
		if as["name"] != "start" {
			continue
		}
		if as["available"] != false || !strings.Contains(as["unavailable_reason"].(string), "--read-only") || len(as["parameters"].([]any)) == 0 {
			t.Fatalf("server schema of task start under --read-only: %v", as)
		}
	}
}
