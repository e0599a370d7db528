package specs

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// allNodeFields is every node field bit.
const allNodeFields = fType | fTitle | fStatus | fParent | fChildren | fTotal | fCompleted | fMetadata | fDependencies

// TestDecodeNodeLenient pins, field by field, how a node is read: the value
// kept (coerced where possible) and whether the field is recorded absent or
// malformed.
func TestDecodeNodeLenient(t *testing.T) {
	full := `"type":"task","title":"T","status":"pending","parent":"phase-1","children":[],` +
		`"total_tasks":1,"completed_tasks":0,"metadata":{},"dependencies":{"blocks":[],"blocked_by":[],"depends":[]}`
	base := Node{ID: "n", Type: TypeTask, Title: "T", Status: StatusPending, Parent: "phase-1", Children: ChildListOf([]string{}),
		TotalTasks: 1, Metadata: map[string]any{}, Dependencies: Dependencies{Blocks: []string{}, BlockedBy: []string{}, Depends: []string{}}}
	with := func(f func(n *Node)) Node {
		n := base
		f(&n)
		return n
	}
	tests := []struct {
		name string
		json string
		want Node
	}{
		{"complete", `{` + full + `}`, base},
		{"empty object", `{}`, Node{ID: "n", absent: allNodeFields}},
		{"type a number", `{` + full + `,"type":7}`, with(func(n *Node) { n.Type = "7"; n.malformed = fType })},
		{"title a bool", `{` + full + `,"title":true}`, with(func(n *Node) { n.Title = "true"; n.malformed = fTitle })},
		{"status null reads as empty", `{` + full + `,"status":null}`, with(func(n *Node) { n.Status = "" })},
		{"parent null is the root", `{` + full + `,"parent":null}`, with(func(n *Node) { n.Parent = "" })},
		{"parent a number", `{` + full + `,"parent":3}`, with(func(n *Node) { n.Parent = "3"; n.malformed = fParent })},
		{"children a bare string", `{` + full + `,"children":"task-1"}`, with(func(n *Node) { n.Children = ChildListOf([]string{"task-1"}); n.malformed = fChildren })},
		{"children with a number", `{` + full + `,"children":["a",2,{}]}`, with(func(n *Node) { n.Children = ChildListOf([]string{"a", "2"}); n.malformed = fChildren })},
		{"total in a string", `{` + full + `,"total_tasks":" 4 "}`, with(func(n *Node) { n.TotalTasks = 4; n.malformed = fTotal })},
		{"completed a fraction", `{` + full + `,"completed_tasks":1.5}`, with(func(n *Node) { n.CompletedTasks = 1; n.malformed = fCompleted })},
		{"completed negative", `{` + full + `,"completed_tasks":-1}`, with(func(n *Node) { n.CompletedTasks = 0; n.malformed = fCompleted })},
		{"metadata null", `{` + full + `,"metadata":null}`, with(func(n *Node) { n.Metadata = nil; n.malformed = fMetadata })},
		{"metadata a list", `{` + full + `,"metadata":[1]}`, with(func(n *Node) { n.Metadata = nil; n.malformed = fMetadata })},
		{"legacy dependency list", `{` + full + `,"dependencies":["task-9"]}`, with(func(n *Node) {
			n.Dependencies = Dependencies{BlockedBy: []string{"task-9"}}
			n.malformed = fDependencies
		})},
		{"dependencies missing a key", `{` + full + `,"dependencies":{"blocks":["x"]}}`, with(func(n *Node) { n.Dependencies = Dependencies{Blocks: []string{"x"}}; n.malformed = fDependencies })},
		{"unknown keys kept compact", `{` + full + `,"x_extra": { "a" : 1 }}`, with(func(n *Node) { n.Extra = map[string]json.RawMessage{"x_extra": json.RawMessage(`{"a":1}`)} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := DecodeNode("n", []byte(tt.json))
			noErr(t, err)
			if !reflect.DeepEqual(*n, tt.want) {
				t.Errorf("\n got %#v\nwant %#v", *n, tt.want)
			}
		})
	}
	for _, bad := range []string{`[]`, `null`, `"x"`, `{`} {
		_, err := DecodeNode("n", []byte(bad))
		mustCode(t, err, errcode.InvalidFormat)
	}
}

// TestParseDocumentLenient pins, key by key, how a document is read: the
// value kept, the absent and malformed bits, non-object nodes, the journal
// and unknown keys.
func TestParseDocumentLenient(t *testing.T) {
	full := `"spec_id":"s","title":"T","generated":"g","last_updated":"u","version":2,"lifecycle":"active",` +
		`"metadata":{},"status":"pending","progress_percentage":50,"current_phase":"phase-1","hierarchy":{},"journal":[]`
	base := Document{SpecID: "s", Title: "T", Generated: "g", LastUpdated: "u", Version: 2, Lifecycle: "active",
		Metadata: map[string]any{}, Status: StatusPending, ProgressPercentage: 50, CurrentPhase: "phase-1", Hierarchy: map[string]*Node{}}
	with := func(f func(d *Document)) Document {
		d := base
		f(&d)
		return d
	}
	allDoc := dSpecID | dTitle | dGenerated | dLastUpdated | dMetadata | dHierarchy | dJournal | dStatus | dProgress | dCurrentPhase | dVersion | dLifecycle
	tests := []struct {
		name string
		json string
		want Document
	}{
		{"complete", `{` + full + `}`, base},
		{"empty object", `{}`, Document{absent: allDoc}},
		{"title a number", `{` + full + `,"title":5}`, with(func(d *Document) { d.Title = "5"; d.malformed = dTitle })},
		{"current phase null", `{` + full + `,"current_phase":null}`, with(func(d *Document) { d.CurrentPhase = "" })},
		{"lifecycle a bool", `{` + full + `,"lifecycle":false}`, with(func(d *Document) { d.Lifecycle = "false"; d.malformed = dLifecycle })},
		{"version in a string", `{` + full + `,"version":"3"}`, with(func(d *Document) { d.Version = 3; d.malformed = dVersion })},
		{"progress above 100", `{` + full + `,"progress_percentage":101}`, with(func(d *Document) { d.ProgressPercentage = 0; d.malformed = dProgress })},
		{"progress a fraction", `{` + full + `,"progress_percentage":33.9}`, with(func(d *Document) { d.ProgressPercentage = 33 })},
		{"progress a string", `{` + full + `,"progress_percentage":"5"}`, with(func(d *Document) { d.ProgressPercentage = 0; d.malformed = dProgress })},
		{"metadata null", `{` + full + `,"metadata":null}`, with(func(d *Document) { d.Metadata = nil; d.malformed = dMetadata })},
		{"hierarchy a list", `{` + full + `,"hierarchy":[]}`, with(func(d *Document) { d.Hierarchy = nil; d.malformed = dHierarchy })},
		{"hierarchy null", `{` + full + `,"hierarchy":null}`, with(func(d *Document) { d.Hierarchy = nil; d.malformed = dHierarchy })},
		{"a node that is not an object", `{` + full + `,"hierarchy":{"a":3,"b":{}}}`, with(func(d *Document) {
			d.Hierarchy = map[string]*Node{"a": {ID: "a", absent: allNodeFields, malformed: allNodeFields}, "b": {ID: "b", absent: allNodeFields}}
		})},
		{"journal an object", `{` + full + `,"journal":{}}`, with(func(d *Document) { d.malformed = dJournal })},
		{"journal with a bad entry", `{` + full + `,"journal":[{"title":"a","seq":4,"metadata":{"k":1}},3]}`, with(func(d *Document) {
			d.Journal = []JournalEntry{{Seq: 4, Title: "a", Metadata: map[string]any{"k": float64(1)}}}
			d.malformed = dJournal
		})},
		{"unknown keys kept compact", `{` + full + `,"x": [ 1, 2 ]}`, with(func(d *Document) { d.Extra = map[string]json.RawMessage{"x": json.RawMessage(`[1,2]`)} })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDocument([]byte(tt.json))
			noErr(t, err)
			if !reflect.DeepEqual(*d, tt.want) {
				t.Errorf("\n got %#v\nwant %#v", *d, tt.want)
			}
		})
	}
	for _, bad := range []string{`[]`, `null`, `{`} {
		_, err := ParseDocument([]byte(bad))
		mustCode(t, err, errcode.InvalidFormat)
	}
}

// TestLenientInt pins how a count field reads: a whole number in range is
// well-typed; a fraction is truncated and a numeric string read, both
// mistyped; anything else is 0 and mistyped.
func TestLenientInt(t *testing.T) {
	cases := []struct {
		in   string
		want int
		ok   bool
	}{
		{`3`, 3, true}, {`0`, 0, true}, {`1e9`, 1000000000, true}, {`2.5`, 2, false},
		{`-1`, 0, false}, {`1e10`, 0, false}, {`" 7 "`, 7, false}, {`"-2"`, 0, false},
		{`"x"`, 0, false}, {`true`, 0, false}, {`null`, 0, false}, {`[1]`, 0, false}, {`{`, 0, false},
	}
	for _, tc := range cases {
		got, ok := lenientInt(json.RawMessage(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("lenientInt(%s) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
