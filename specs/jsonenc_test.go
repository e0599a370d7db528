package specs

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// refNodeJSON and refMarshal are Node.marshal as it was, by reflection:
// the reference the hand-written encoding must match byte for byte.
type refNodeJSON struct {
	Type           NodeType       `json:"type"`
	Title          string         `json:"title"`
	Status         Status         `json:"status"`
	Parent         *string        `json:"parent"`
	Children       []string       `json:"children"`
	TotalTasks     int            `json:"total_tasks"`
	CompletedTasks int            `json:"completed_tasks"`
	Metadata       map[string]any `json:"metadata"`
	Dependencies   Dependencies   `json:"dependencies"`
}

func refMarshal(n Node, internal bool) ([]byte, error) {
	meta := n.Metadata
	if _, has := meta[RollupMetaKey]; has && !internal {
		meta = make(map[string]any, len(n.Metadata))
		for k, v := range n.Metadata {
			if k != RollupMetaKey {
				meta[k] = v
			}
		}
	}
	j := refNodeJSON{
		Type: n.Type, Title: n.Title, Status: n.Status,
		Children: orEmpty(n.Children.Slice()), TotalTasks: n.TotalTasks, CompletedTasks: n.CompletedTasks,
		Metadata: meta,
		Dependencies: Dependencies{
			Blocks: orEmpty(n.Dependencies.Blocks), BlockedBy: orEmpty(n.Dependencies.BlockedBy), Depends: orEmpty(n.Dependencies.Depends),
		},
	}
	if n.Parent != "" {
		p := n.Parent
		j.Parent = &p
	}
	if j.Metadata == nil {
		j.Metadata = map[string]any{}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return appendExtra(b, n.Extra, knownNodeKeys)
}

// trickyStrings need every escape encoding/json makes (quotes, controls,
// HTML, invalid UTF-8, line separators) or none.
var trickyStrings = []string{"", "plain", "task-1-2", `say "hi"`, `back\slash`, "tab\there", "nl\n", "\x00\x1f\x7f",
	"<b>&amp;</b>", "é ü 漢字 🚀", "\xff\xfe bad", "line\u2028sep\u2029", "\b\f\r", "a>b", "{}[]:,"}

var trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 3, 100, 1e6, 1e20, 1e21, 1.234e21, 1e-6, 9.99e-7, 1e-7, 1.5e-10,
	123456789.125, -2.5e-300, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.30000000000000004}

func randValue(r *rand.Rand, depth int) any {
	k := r.IntN(12)
	if depth > 2 && k >= 8 {
		k = r.IntN(8)
	}
	switch k {
	case 0:
		return nil
	case 1, 2:
		return trickyStrings[r.IntN(len(trickyStrings))]
	case 3:
		return r.IntN(2) == 0
	case 4, 5:
		return trickyFloats[r.IntN(len(trickyFloats))]
	case 6:
		return r.IntN(2000) - 1000
	case 7:
		return []string{trickyStrings[r.IntN(len(trickyStrings))], "x"}
	case 8, 9:
		m := map[string]any{}
		for i := r.IntN(20); i > 0; i-- {
			m[trickyStrings[r.IntN(len(trickyStrings))]+string(rune('a'+r.IntN(26)))] = randValue(r, depth+1)
		}
		if r.IntN(8) == 0 {
			return map[string]any(nil)
		}
		return m
	case 10:
		var l []any
		for i := r.IntN(5); i > 0; i-- {
			l = append(l, randValue(r, depth+1))
		}
		return l
	default:
		return map[string]string{"typed": trickyStrings[r.IntN(len(trickyStrings))]} // encoding/json's own path
	}
}

func randStrings(r *rand.Rand) []string {
	switch r.IntN(3) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	out := make([]string, r.IntN(6)+1)
	for i := range out {
		out[i] = trickyStrings[r.IntN(len(trickyStrings))]
	}
	return out
}

func randMeta(r *rand.Rand) map[string]any {
	if r.IntN(6) == 0 {
		return nil
	}
	m := map[string]any{}
	for i := r.IntN(24); i > 0; i-- {
		m[trickyStrings[r.IntN(len(trickyStrings))]+string(rune('a'+r.IntN(26)))] = randValue(r, 0)
	}
	if r.IntN(2) == 0 {
		m[RollupMetaKey] = map[string]any{"total": 3.0, "completed": 1.0}
	}
	return m
}

func randNode(r *rand.Rand) Node {
	n := Node{ID: "task-1", Type: NodeType(trickyStrings[r.IntN(len(trickyStrings))]), Title: trickyStrings[r.IntN(len(trickyStrings))],
		Status: Status(trickyStrings[r.IntN(len(trickyStrings))]), Children: ChildListOf(randStrings(r)),
		TotalTasks: r.IntN(5000) - 10, CompletedTasks: r.IntN(100), Metadata: randMeta(r),
		Dependencies: Dependencies{Blocks: randStrings(r), BlockedBy: randStrings(r), Depends: randStrings(r)}}
	if r.IntN(4) > 0 {
		n.Parent = trickyStrings[r.IntN(len(trickyStrings))]
	}
	if r.IntN(5) == 0 {
		n.Extra = map[string]json.RawMessage{"z_extra": json.RawMessage(`{"a": "<x>"}`), "title": json.RawMessage(`"dup"`)}
	}
	return n
}

func checkNodeBytes(t *testing.T, n Node) {
	t.Helper()
	for _, internal := range []bool{false, true} {
		want, werr := refMarshal(n, internal)
		got, gerr := n.marshal(internal)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Fatalf("node %+v internal=%v:\n got %s (%v)\nwant %s (%v)", n, internal, got, gerr, want, werr)
		}
	}
}

// The hand-written node encoding writes what the reflection one wrote, for
// random nodes full of strings to escape, floats at the format's edges,
// nested and typed metadata, and for the foundry fixtures' nodes.
func TestNodeMarshalMatchesReflection(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 2))
	for range 4000 {
		checkNodeBytes(t, randNode(r))
	}
	checkNodeBytes(t, Node{})
	fixtures, _ := filepath.Glob("testdata/foundry_*.json")
	if len(fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range fixtures {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d Document
		if err := json.Unmarshal(raw, &d); err != nil {
			continue // a fixture that is not a document
		}
		for _, n := range d.Hierarchy {
			checkNodeBytes(t, *n)
		}
	}
}

// Non-finite numbers fail as they did.
func TestNodeMarshalRefusesNonFinite(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), []any{math.Inf(-1)}, map[string]any{"x": math.NaN()}} {
		n := Node{Metadata: map[string]any{"bad": v}}
		if _, err := n.marshal(true); err == nil {
			t.Fatalf("%v encoded", v)
		}
		if _, err := EncodeHeader(Header{Metadata: map[string]any{"bad": v}}); err == nil {
			t.Fatalf("header with %v encoded", v)
		}
	}
}

// EncodeHeader is json.Marshal(h), byte for byte.
func TestEncodeHeaderMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 3))
	lifecycles := []Lifecycle{"", LifecycleArchived, "active", "<odd>"}
	for i := range 4000 {
		s := func() string { return trickyStrings[r.IntN(len(trickyStrings))] }
		h := Header{SpecID: s(), Title: s(), Generated: s(), LastUpdated: s(), Version: int64(r.IntN(1 << 20)),
			Lifecycle: lifecycles[r.IntN(len(lifecycles))], Metadata: randMeta(r), Status: Status(s()),
			ProgressPercentage: r.IntN(101), CurrentPhase: s(), TotalTasks: r.IntN(9999), CompletedTasks: r.IntN(99)}
		if i%7 == 0 {
			h.Extra = map[string]json.RawMessage{"x": json.RawMessage(`[1, "<&>"]`)}
		}
		want, werr := json.Marshal(h)
		got, gerr := EncodeHeader(h)
		if werr != nil || gerr != nil || string(got) != string(want) {
			t.Fatalf("header %+v:\n got %s (%v)\nwant %s (%v)", h, got, gerr, want, werr)
		}
	}
}

// TestAppendJSONStringsMatchesMarshal holds AppendJSONStrings to
// json.Marshal (each string is core.AppendJSONString's, tested there
// byte by byte), except that nil is written [].
func TestAppendJSONStringsMatchesMarshal(t *testing.T) {
	list := append([]string{}, trickyStrings...)
	want, _ := json.Marshal(list)
	if got := AppendJSONStrings(nil, list); string(got) != string(want) {
		t.Errorf("AppendJSONStrings = %s, json.Marshal = %s", got, want)
	}
	if got := AppendJSONStrings(nil, nil); string(got) != "[]" {
		t.Errorf("AppendJSONStrings(nil) = %s, want []", got)
	}
}
