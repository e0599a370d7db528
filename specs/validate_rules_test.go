package specs

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// ruleCase is one validator rule's test row: a mutation of the valid
// foundry_basic fixture that breaks exactly that rule, and the findings the
// rule must report (locations in order, severity, fixability).
type ruleCase struct {
	name    string
	code    string
	node    string // the node a node rule is run on alone
	mutate  func(h map[string]any)
	locs    []string
	top     func(m map[string]any) // a mutation of the top-level fields
	also    []string               // other codes (but counts) the mutation adds to the base fixture's findings
	sev     Severity
	fixable bool
}

func hnode(h map[string]any, id string) map[string]any { return h[id].(map[string]any) }

func listChild(h map[string]any, parent, id string) {
	p := hnode(h, parent)
	p["children"] = append(p["children"].([]any), id)
}

func dropChild(h map[string]any, parent, id string) {
	p := hnode(h, parent)
	var out []any
	for _, c := range p["children"].([]any) {
		if c != id {
			out = append(out, c)
		}
	}
	p["children"] = append([]any{}, out...)
}

func addNode(h map[string]any, id, typ, parent string) {
	h[id] = map[string]any{"type": typ, "title": id, "status": "pending", "parent": parent, "children": []any{}, "total_tasks": 1, "completed_tasks": 0,
		"metadata": map[string]any{}, "dependencies": map[string]any{"blocks": []any{}, "blocked_by": []any{}, "depends": []any{}}}
	listChild(h, parent, id)
}

var ruleCases = []ruleCase{
	{name: "blank id", code: "INVALID_NODE", mutate: func(h map[string]any) { h[" "] = map[string]any{"type": "task", "title": "t"} },
		locs: []string{"hierarchy. "}, sev: SeverityError, fixable: true},
	{name: "bad id", code: "INVALID_ID", node: "task 2 9", mutate: func(h map[string]any) { addNode(h, "task 2 9", "task", "phase-2") },
		locs: []string{"hierarchy.task 2 9"}, sev: SeverityError},
	{name: "no title", code: "MISSING_NODE_FIELD", node: "task-2-1", mutate: func(h map[string]any) { delete(hnode(h, "task-2-1"), "title") },
		locs: []string{"hierarchy.task-2-1.title"}, sev: SeverityError, fixable: true},
	{name: "no type, no status", code: "MISSING_NODE_FIELD", node: "task-2-1", mutate: func(h map[string]any) {
		delete(hnode(h, "task-2-1"), "status")
		delete(hnode(h, "task-2-1"), "type")
	}, locs: []string{"hierarchy.task-2-1.type", "hierarchy.task-2-1.status"}, sev: SeverityError, fixable: true},
	{name: "no type, the id names none", code: "MISSING_NODE_FIELD", node: "node-x", mutate: func(h map[string]any) {
		addNode(h, "node-x", "task", "phase-2")
		delete(hnode(h, "node-x"), "type")
	}, locs: []string{"hierarchy.node-x.type"}, sev: SeverityError, fixable: true},
	{name: "no metadata", code: "MISSING_NODE_FIELD", node: "task-2-1", mutate: func(h map[string]any) { delete(hnode(h, "task-2-1"), "metadata") },
		locs: []string{"hierarchy.task-2-1.metadata"}, sev: SeverityWarning, fixable: true},
	{name: "title is a number", code: "INVALID_FIELD_TYPE", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["title"] = 5 },
		locs: []string{"hierarchy.task-2-1"}, sev: SeverityError, fixable: true},
	{name: "unknown type", code: "INVALID_NODE_TYPE", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["type"] = "bogus" },
		locs: []string{"hierarchy.task-2-1.type"}, sev: SeverityError, fixable: true},
	{name: "unknown type, the id names none", code: "INVALID_NODE_TYPE", node: "node-x", mutate: func(h map[string]any) {
		addNode(h, "node-x", "widget", "phase-2")
	}, locs: []string{"hierarchy.node-x.type"}, sev: SeverityError, fixable: true},
	{name: "spec below the root", code: "INVALID_NODE_TYPE", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["type"] = "spec" },
		locs: []string{"hierarchy.task-2-1.type"}, also: []string{"INVALID_PARENT_TYPE"}, sev: SeverityError, fixable: true},
	{name: "mistyped status", code: "INVALID_STATUS", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["status"] = "pnedign" },
		locs: []string{"hierarchy.task-2-1.status"}, sev: SeverityError, fixable: true},
	{name: "archived below the root", code: "INVALID_STATUS", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["status"] = "archived" },
		locs: []string{"hierarchy.task-2-1.status"}, sev: SeverityError, fixable: true},
	{name: "blank title", code: "EMPTY_TITLE", node: "task-2-1", mutate: func(h map[string]any) { hnode(h, "task-2-1")["title"] = "  " },
		locs: []string{"hierarchy.task-2-1.title"}, sev: SeverityWarning, fixable: true},
	{name: "child does not exist", code: "MISSING_CHILD_NODE", mutate: func(h map[string]any) { listChild(h, "phase-2", "task-2-9") },
		locs: []string{"hierarchy.phase-2.children"}, sev: SeverityError, fixable: true},
	{name: "child listed twice", code: "DUPLICATE_CHILD", mutate: func(h map[string]any) { listChild(h, "phase-2", "task-2-1") },
		locs: []string{"hierarchy.phase-2.children"}, sev: SeverityWarning, fixable: true},
	{name: "parent field names another node", code: "PARENT_CHILD_MISMATCH", mutate: func(h map[string]any) { hnode(h, "task-2-1")["parent"] = "phase-1" },
		locs: []string{"hierarchy.task-2-1.parent"}, sev: SeverityError, fixable: true},
	{name: "listed by parent and another", code: "PARENT_CHILD_MISMATCH", mutate: func(h map[string]any) { listChild(h, "phase-1", "task-2-1") },
		locs: []string{"hierarchy.phase-1.children"}, also: []string{"CYCLE_DETECTED"}, sev: SeverityError, fixable: true},
	{name: "parent does not list it", code: "PARENT_CHILD_MISMATCH", mutate: func(h map[string]any) { dropChild(h, "phase-2", "task-2-1") },
		locs: []string{"hierarchy.phase-2.children"}, sev: SeverityError, fixable: true},
	{name: "orphan whose id names no parent goes under the root", code: "ORPHANED_NODES", mutate: func(h map[string]any) {
		h["task-9-1"] = map[string]any{"type": "task", "title": "t", "status": "pending", "parent": "phase-9", "children": []any{}, "total_tasks": 1, "completed_tasks": 0,
			"metadata": map[string]any{}, "dependencies": map[string]any{"blocks": []any{}, "blocked_by": []any{}, "depends": []any{}}}
	}, locs: []string{"hierarchy.task-9-1.parent"}, sev: SeverityError, fixable: true},
	{name: "no parent, not listed", code: "ORPHANED_NODES", mutate: func(h map[string]any) {
		dropChild(h, "phase-2", "task-2-1")
		hnode(h, "task-2-1")["parent"] = "phase-9"
	}, locs: []string{"hierarchy.task-2-1.parent"}, sev: SeverityError, fixable: true},
	{name: "parent chain loops", code: "ORPHANED_NODES", mutate: func(h map[string]any) {
		dropChild(h, "phase-2", "task-2-1")
		dropChild(h, "phase-2", "task-2-2")
		hnode(h, "task-2-1")["parent"], hnode(h, "task-2-1")["children"] = "task-2-2", []any{"task-2-2"}
		hnode(h, "task-2-2")["parent"], hnode(h, "task-2-2")["children"] = "task-2-1", []any{"task-2-1"}
	}, locs: []string{"hierarchy.task-2-1.parent", "hierarchy.task-2-2.parent"}, also: []string{"CYCLE_DETECTED"}, sev: SeverityError, fixable: true},
	{name: "too many children", code: "TOO_MANY_CHILDREN", mutate: func(h map[string]any) {
		for i := 1; i <= MaxChildren+1; i++ {
			addNode(h, fmt.Sprintf("subtask-2-1-%d", i), "subtask", "task-2-1")
		}
	}, locs: []string{"hierarchy.task-2-1.children"}, sev: SeverityWarning},
	{name: "nested too deep", code: "NESTING_TOO_DEEP", mutate: func(h map[string]any) {
		parent := "task-2-1" // depth 2
		for i := 1; i <= MaxNestingDepth; i++ {
			id := fmt.Sprintf("subtask-2-1-%d", i)
			addNode(h, id, "subtask", parent)
			parent = id
		}
	}, locs: []string{"hierarchy.subtask-2-1-9"}, sev: SeverityWarning},
	{name: "phase under a phase", code: "INVALID_PARENT_TYPE", mutate: func(h map[string]any) { hnode(h, "task-2-2")["type"] = "phase" },
		locs: []string{"hierarchy.task-2-2.parent"}, sev: SeverityError, fixable: true},
	{name: "task under a verify", code: "INVALID_PARENT_TYPE", mutate: func(h map[string]any) { addNode(h, "task-2-3", "task", "verify-2-1") },
		locs: []string{"hierarchy.task-2-3.parent"}, sev: SeverityWarning, fixable: true},
	{name: "subtask reset to spec-root by foundry's fix", code: "INVALID_PARENT_TYPE", mutate: func(h map[string]any) {
		addNode(h, "task-2-1-1", "subtask", RootID)
	}, locs: []string{"hierarchy.task-2-1-1.parent"}, sev: SeverityWarning, fixable: true},
	{name: "verify reset to spec-root by foundry's fix", code: "INVALID_PARENT_TYPE", mutate: func(h map[string]any) {
		addNode(h, "verify-2-9", "verify", RootID)
	}, locs: []string{"hierarchy.verify-2-9.parent"}, also: []string{"MISSING_VERIFICATION_TYPE"}, sev: SeverityWarning, fixable: true},
	// Its id names no parent: the fix moves it into a phase next walks.
	{name: "task under the root, its id names no parent", code: "INVALID_PARENT_TYPE", mutate: func(h map[string]any) {
		addNode(h, "task-9-1", "task", RootID)
	}, locs: []string{"hierarchy.task-9-1.parent"}, sev: SeverityWarning, fixable: true},

	// Node metadata (nodeMetadataRules).
	{name: "verify without a type", code: "MISSING_VERIFICATION_TYPE", node: "verify-2-1", mutate: func(h map[string]any) { delete(meta(h, "verify-2-1"), "verification_type") },
		locs: []string{"hierarchy.verify-2-1.metadata.verification_type"}, sev: SeverityWarning, fixable: true},
	{name: "unknown verification type", code: "INVALID_VERIFICATION_TYPE", node: "verify-2-1", mutate: func(h map[string]any) { meta(h, "verify-2-1")["verification_type"] = "vibes" },
		locs: []string{"hierarchy.verify-2-1.metadata.verification_type"}, sev: SeverityError, fixable: true},
	{name: "category synonym", code: "INVALID_TASK_CATEGORY", node: "task-2-1", mutate: func(h map[string]any) { meta(h, "task-2-1")["task_category"] = "Implementation" },
		locs: []string{"hierarchy.task-2-1.metadata.task_category"}, sev: SeverityWarning, fixable: true},
	{name: "complexity synonym", code: "INVALID_COMPLEXITY", node: "task-2-1", mutate: func(h map[string]any) { meta(h, "task-2-1")["complexity"] = "hard" },
		locs: []string{"hierarchy.task-2-1.metadata.complexity"}, sev: SeverityWarning, fixable: true},
	{name: "unknown blocking mode", code: "INVALID_BLOCKING_MODE", node: "task-2-1", mutate: func(h map[string]any) {
		hnode(h, "task-2-1")["type"] = "research"
		meta(h, "task-2-1")["blocking_mode"] = "maybe"
	}, locs: []string{"hierarchy.task-2-1.metadata.blocking_mode"}, sev: SeverityWarning, fixable: true},
	{name: "estimate as text", code: "INVALID_ESTIMATE", node: "task-2-1", mutate: func(h map[string]any) { meta(h, "task-2-1")["estimated_hours"] = "3" },
		locs: []string{"hierarchy.task-2-1.metadata.estimated_hours"}, sev: SeverityWarning, fixable: true},
	{name: "negative hours", code: "INVALID_ESTIMATE", node: "task-2-1", mutate: func(h map[string]any) {
		meta(h, "task-2-1")["actual_hours"] = -1
		meta(h, "task-2-1")["estimated_hours"] = "many"
	}, locs: []string{"hierarchy.task-2-1.metadata.estimated_hours", "hierarchy.task-2-1.metadata.actual_hours"}, sev: SeverityWarning},
	{name: "absolute file path", code: "INVALID_FILE_PATH", node: "task-2-1", mutate: func(h map[string]any) { meta(h, "task-2-1")["file_path"] = "/etc/passwd" },
		locs: []string{"hierarchy.task-2-1.metadata.file_path"}, sev: SeverityWarning},
	{name: "legacy details", code: "LEGACY_METADATA_FIELD", node: "task-2-1", mutate: func(h map[string]any) {
		delete(meta(h, "task-2-1"), "description")
		meta(h, "task-2-1")["details"] = []any{"a", "b"}
	}, locs: []string{"hierarchy.task-2-1.metadata.details"}, sev: SeverityInfo, fixable: true},
	{name: "details next to a description", code: "LEGACY_METADATA_FIELD", node: "task-2-1", mutate: func(h map[string]any) { meta(h, "task-2-1")["details"] = "old" }},
	{name: "implementation without a file", code: "MISSING_FILE_PATH", node: "task-2-1", mutate: func(h map[string]any) { delete(meta(h, "task-2-1"), "file_path") },
		locs: []string{"hierarchy.task-2-1.metadata.file_path"}, sev: SeverityWarning},
	{name: "implementation without criteria", code: "MISSING_ACCEPTANCE_CRITERIA", node: "task-2-1", mutate: func(h map[string]any) { delete(meta(h, "task-2-1"), "acceptance_criteria") },
		locs: []string{"hierarchy.task-2-1.metadata.acceptance_criteria", baseAcceptance}, sev: SeverityInfo},
	// Top level (topRules).
	{name: "no spec_id", code: "MISSING_REQUIRED_FIELD", top: func(m map[string]any) { delete(m, "spec_id") },
		locs: []string{"spec_id"}, sev: SeverityError},
	{name: "spec_id not an id", code: "INVALID_ID", top: func(m map[string]any) { m["spec_id"] = "../x" },
		locs: []string{"spec_id"}, sev: SeverityError},
	{name: "spec_id without a date", code: "INVALID_SPEC_ID_FORMAT", top: func(m map[string]any) { m["spec_id"] = "csv-export" },
		locs: []string{"spec_id"}, sev: SeverityWarning},
	{name: "blank title", code: "MISSING_REQUIRED_FIELD", top: func(m map[string]any) { m["title"] = " " },
		locs: []string{"title"}, sev: SeverityError, fixable: true},
	{name: "no timestamps", code: "MISSING_REQUIRED_FIELD", top: func(m map[string]any) { delete(m, "generated"); delete(m, "last_updated") },
		locs: []string{"generated", "last_updated"}, sev: SeverityError, fixable: true},
	{name: "local time", code: "INVALID_TIMESTAMP", top: func(m map[string]any) { m["last_updated"] = "2025-01-02T03:04:05+02:00" },
		locs: []string{"last_updated"}, sev: SeverityWarning, fixable: true},
	{name: "unknown lifecycle", code: "INVALID_LIFECYCLE", top: func(m map[string]any) { m["lifecycle"] = "limbo" },
		locs: []string{"lifecycle"}, sev: SeverityError, fixable: true},
	{name: "metadata not an object", code: "MISSING_REQUIRED_FIELD", top: func(m map[string]any) { m["metadata"] = "x" },
		locs: []string{"metadata"}, sev: SeverityWarning, fixable: true},
	{name: "no hierarchy", code: "MISSING_REQUIRED_FIELD", top: func(m map[string]any) { delete(m, "hierarchy") },
		locs: []string{"hierarchy"}, sev: SeverityError, fixable: true},
	{name: "title as a number", code: "INVALID_FIELD_TYPE", top: func(m map[string]any) { m["title"] = 7 },
		locs: []string{"spec"}, sev: SeverityWarning, fixable: true},
}

// baseAcceptance is the one finding of the base fixture.
const baseAcceptance = "hierarchy.task-2-2.metadata.acceptance_criteria"

func meta(h map[string]any, id string) map[string]any {
	return hnode(h, id)["metadata"].(map[string]any)
}

func mutatedBasic(t *testing.T, mutate func(h map[string]any), top func(m map[string]any)) *Document {
	t.Helper()
	raw, err := os.ReadFile("testdata/foundry_basic.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(m["hierarchy"].(map[string]any))
	}
	if top != nil {
		top(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestValidatorRules runs each rule's row: the mutated fixture gets exactly
// the rule's findings, and Fix clears the fixable ones.
func TestValidatorRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.code+"/"+tc.name, func(t *testing.T) {
			d := mutatedBasic(t, tc.mutate, tc.top)
			var locs []string
			for _, diag := range Validate(d).Diagnostics {
				if diag.Code != tc.code {
					continue
				}
				locs = append(locs, diag.Location)
				if diag.Severity != tc.sev || diag.AutoFixable != tc.fixable {
					t.Errorf("%s: severity %s fixable %v, want %s %v", diag.Location, diag.Severity, diag.AutoFixable, tc.sev, tc.fixable)
				}
			}
			base := map[string]int{}
			for _, diag := range Validate(mutatedBasic(t, nil, nil)).Diagnostics {
				base[diag.Code]++
			}
			others := map[string]int{}
			for _, diag := range Validate(d).Diagnostics {
				if diag.Code != tc.code && diag.Category != CategoryCounts { // counts follow any tree change
					others[diag.Code]++
				}
			}
			for c, n := range base {
				if others[c] -= n; others[c] <= 0 {
					delete(others, c)
				}
			}
			var also []string
			for c := range others {
				also = append(also, c)
			}
			sort.Strings(also)
			if strings.Join(also, ",") != strings.Join(tc.also, ",") {
				t.Errorf("other findings %v, want %v", others, tc.also)
			}
			if !reflect.DeepEqual(locs, tc.locs) {
				t.Fatalf("%s at %q, want %q", tc.code, locs, tc.locs)
			}
			if tc.fixable {
				for _, diag := range Fix(d, FixOptions{Clock: testClock()}).Report.Diagnostics {
					if diag.Code == tc.code {
						t.Errorf("after Fix: %+v", diag)
					}
				}
			}
		})
	}
}

// TestNodeRulesAlone runs each node rule by itself on its row's node: it
// reports only its own code, and every rule of the table has a row.
func TestNodeRulesAlone(t *testing.T) {
	rows := map[string]bool{}
	for _, tc := range ruleCases {
		if tc.node == "" {
			continue
		}
		for _, r := range append(append([]nodeRule{}, nodeRules...), nodeMetadataRules...) {
			if r.code != tc.code {
				continue
			}
			rows[r.code] = true
			d := mutatedBasic(t, tc.mutate, tc.top)
			c := &checker{d: d, flagged: map[string]bool{}}
			r.check(c, tc.node, d.Hierarchy[tc.node])
			want := 0
			for _, l := range tc.locs {
				if l == nodeLoc(tc.node) || strings.HasPrefix(l, nodeLoc(tc.node)+".") {
					want++
				}
			}
			if len(c.issues) != want {
				t.Errorf("%s on %s: %d findings, want %d", r.code, tc.node, len(c.issues), want)
			}
			for _, is := range c.issues {
				if is.Code != r.code {
					t.Errorf("rule %s reported %s", r.code, is.Code)
				}
			}
		}
	}
	for _, r := range append(append([]nodeRule{}, nodeRules...), nodeMetadataRules...) {
		if !rows[r.code] {
			t.Errorf("node rule %s has no test row", r.code)
		}
	}
	if d := mutatedBasic(t, nil, nil); len(Validate(d).Diagnostics) != 1 || !strings.Contains(Validate(d).Diagnostics[0].Code, "ACCEPTANCE") {
		t.Fatalf("the base fixture must be clean but for acceptance criteria: %+v", Validate(d).Diagnostics)
	}
}
