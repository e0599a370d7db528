package specs

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/specd/specd/core/errcode"
)

func loadFixture(t testing.TB, name string) *Document {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func generic(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDocumentRoundTripFoundry(t *testing.T) {
	raw, err := os.ReadFile("testdata/foundry_basic.json")
	noErr(t, err)
	d, err := ParseDocument(raw)
	noErr(t, err)
	out, err := json.Marshal(d)
	noErr(t, err)
	if want, got := generic(t, raw), generic(t, out); !reflect.DeepEqual(want, got) {
		t.Fatalf("document did not round-trip:\nwant %v\ngot  %v", want, got)
	}
	// Through a view: same hierarchy and header (journal lives elsewhere).
	s := FromDocument(*d)
	mustNoViolations(t, s, "foundry_basic")
	back := s.Document()
	back.Journal = d.Journal
	out2, err := json.Marshal(back)
	noErr(t, err)
	if want, got := generic(t, raw), generic(t, out2); !reflect.DeepEqual(want, got) {
		t.Fatalf("view did not round-trip:\nwant %s\ngot  %s", raw, out2)
	}
	// Recomputing a consistent foundry spec changes nothing.
	RecomputeAll(s)
	put, _ := s.Changes()
	if len(put) != len(d.Hierarchy) {
		t.Fatalf("FromDocument should stage every node, got %d", len(put))
	}
	if s.Header.ProgressPercentage != 50 || s.Header.CurrentPhase != "phase-2" || s.Header.Status != StatusInProgress {
		t.Fatalf("header %+v", s.Header)
	}
}

func TestUnknownKeysRoundTrip(t *testing.T) {
	d := loadFixture(t, "foundry_quirks.json")
	if _, ok := d.Extra["x_custom_field"]; !ok {
		t.Fatal("unknown top-level key lost")
	}
	b, err := json.Marshal(d)
	noErr(t, err)
	d2, err := ParseDocument(b)
	noErr(t, err)
	if string(d2.Extra["x_custom_field"]) != `{"kept":true}` {
		t.Fatalf("extra = %s", d2.Extra["x_custom_field"])
	}
	if d.Hierarchy["task-1-1"].Type != "Task" || d.Hierarchy["task-1-1"].absent&fDependencies == 0 {
		t.Fatal("lenient parse lost information")
	}
	if n := d.Hierarchy["phase-1"]; n.TotalTasks != 7 || n.malformed&fTotal == 0 {
		t.Fatalf("numeric string count: %d %b", n.TotalTasks, n.malformed)
	}
	if n := d.Hierarchy["task-1-10"]; !reflect.DeepEqual(n.Dependencies.BlockedBy, []string{"task-1-2"}) || n.malformed&fDependencies == 0 {
		t.Fatalf("legacy dependency list: %+v", n.Dependencies)
	}
}

func TestParseDocumentErrors(t *testing.T) {
	for _, in := range []string{``, `[]`, `"x"`, `{`, `null`, `42`} {
		_, err := ParseDocument([]byte(in))
		mustCode(t, err, errcode.InvalidFormat)
	}
	d, err := ParseDocument([]byte(`{"hierarchy": {"a": null, "b": 3, "c": {"children": "task-1"}}}`))
	noErr(t, err)
	if len(d.Hierarchy) != 3 || d.Hierarchy["a"] == nil || d.Hierarchy["c"].Children.At(0) != "task-1" {
		t.Fatalf("%+v", d.Hierarchy)
	}
}

func TestNodeJSON(t *testing.T) {
	n := &Node{ID: "task-1-1", Type: TypeTask, Title: "x", Status: StatusPending, Parent: "phase-1"}
	b, err := EncodeNode(n)
	noErr(t, err)
	want := `{"type":"task","title":"x","status":"pending","parent":"phase-1","children":[],"total_tasks":0,"completed_tasks":0,"metadata":{},"dependencies":{"blocks":[],"blocked_by":[],"depends":[]}}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	back, err := DecodeNode("task-1-1", b)
	noErr(t, err)
	if back.ID != "task-1-1" || back.absent != 0 || back.malformed != 0 {
		t.Fatalf("%+v", back)
	}
	root := &Node{ID: RootID, Type: TypeSpec}
	b, _ = EncodeNode(root)
	if !json.Valid(b) || generic(t, b).(map[string]any)["parent"] != nil {
		t.Fatalf("root parent must be null: %s", b)
	}
	_, err = DecodeNode("x", []byte(`[1]`))
	mustCode(t, err, errcode.InvalidFormat)
}

func TestCopyOnWrite(t *testing.T) {
	orig := &Node{ID: "a", Type: TypeTask, Title: "A", Status: StatusPending, Metadata: map[string]any{"labels": map[string]any{"x": "1"}}}
	src := NewMemorySource(orig, &Node{ID: "b", Type: TypeTask, Title: "B"})
	s := NewSpecView(Header{SpecID: "s"}, src)
	if s.Node("a") != orig {
		t.Fatal("read should not copy")
	}
	e := s.Edit("a")
	e.Title = "A2"
	e.Metadata["labels"].(map[string]any)["x"] = "2"
	if orig.Title != "A" || orig.Metadata["labels"].(map[string]any)["x"] != "1" {
		t.Fatal("Edit mutated the source")
	}
	if s.Edit("a") != e || s.Node("a") != e {
		t.Fatal("second Edit must return the same copy")
	}
	if s.Edit("zzz") != nil {
		t.Fatal("Edit of a missing node")
	}
	s.Delete("b")
	if s.Node("b") != nil || s.Edit("b") != nil {
		t.Fatal("deleted node visible")
	}
	s.Put(&Node{ID: "c", Type: TypeTask})
	s.Put(&Node{ID: "d", Type: TypeTask})
	s.Delete("d") // created and deleted in the view: no change at all
	put, del := s.Changes()
	var ids []string
	for _, n := range put {
		ids = append(ids, n.ID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "c"}) || !reflect.DeepEqual(del, []string{"b"}) {
		t.Fatalf("changes %v %v", ids, del)
	}
	if got := s.IDs(); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Fatalf("IDs %v", got)
	}
	s.Put(&Node{ID: "b", Type: TypeTask, Title: "B again"})
	if _, del := s.Changes(); len(del) != 0 {
		t.Fatal("re-put node still deleted")
	}
}

func TestFailedMutationLeavesViewUnchanged(t *testing.T) {
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "P"}))
	src := MemorySource{}
	s, src = commit(s, src)
	before := docJSON(t, s)
	hdr := s.Header.Clone()
	// A bulk add with one bad task writes nothing.
	_, err := AddPhaseBulk(s, PhaseInput{Title: "Q"}, []TaskInput{{Title: "ok"}, {Title: "bad", Complexity: "huge"}})
	mustCode(t, err, errcode.InvalidFormat)
	if docJSON(t, s) != before || !reflect.DeepEqual(hdr, s.Header) || s.Dirty() {
		t.Fatal("a refused bulk add changed the view")
	}
	// A cycle is refused after partial work inside the call.
	a := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "a"}))
	s, src = commit(s, src)
	before = docJSON(t, s)
	hdr = s.Header.Clone()
	err = MoveTask(s, a, "phase-1", at(99))
	mustCode(t, err, errcode.InvalidPosition)
	if docJSON(t, s) != before || !reflect.DeepEqual(hdr, s.Header) || s.Dirty() {
		t.Fatal("failed mutation changed the view")
	}
	_ = src
}

func TestMutationTouchesOnlyWhatChanges(t *testing.T) {
	s := newTestSpec(t)
	for i := 0; i < 5; i++ {
		must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "P"}, []TaskInput{{Title: "a"}, {Title: "b"}, {Title: "c"}}))
	}
	v, _ := commit(s, MemorySource{})
	version := v.Header.Version
	_, err := Start(v, "task-1-2", TransitionOptions{Agent: "s1"})
	noErr(t, err)
	put, del := v.Changes()
	var ids []string
	for _, n := range put {
		ids = append(ids, n.ID)
	}
	// The task, its phase (pending → in_progress) and the root (status).
	if !reflect.DeepEqual(ids, []string{"phase-1", "spec-root", "task-1-2"}) || len(del) != 0 {
		t.Fatalf("changed %v deleted %v", ids, del)
	}
	if v.Header.Version != version+1 {
		t.Fatalf("version %d → %d", version, v.Header.Version)
	}
	_, err = Complete(v, "task-1-2", TransitionOptions{})
	noErr(t, err)
	if v.Header.Version != version+1 {
		t.Fatal("version must bump once per view")
	}
	mustNoViolations(t, v, "touch")
}

func changedIDs(s *Spec) ([]string, []string) {
	put, del := s.Changes()
	ids := []string{}
	for _, n := range put {
		ids = append(ids, n.ID)
	}
	return ids, del
}

func TestMutationsTouchFewNodesInABigSpec(t *testing.T) {
	h, src := benchSpec(t, 1000)
	cases := []struct {
		name string
		op   func(s *Spec) error
		want []string
	}{
		{"add task", func(s *Spec) error { _, err := AddTask(s, "phase-10", TaskInput{Title: "x"}); return err },
			[]string{"phase-10", "spec-root", "task-10-101"}},
		{"add subtask", func(s *Spec) error {
			_, err := AddTask(s, "task-10-5", TaskInput{Type: TypeSubtask, Title: "x"})
			return err
		}, []string{"task-10-5", "task-10-5-1"}}, // counts unchanged above the task
		{"complete", func(s *Spec) error { _, err := Complete(s, "task-6-1", TransitionOptions{}); return err },
			[]string{"phase-6", "spec-root", "task-6-1"}},
		{"add dependency", func(s *Spec) error { return AddDependency(s, "task-6-1", "task-6-2", "blocks") },
			[]string{"task-6-1", "task-6-2"}},
		{"metadata no-op", func(s *Spec) error {
			_, err := UpdateMetadata(s, "task-6-1", map[string]any{"file_path": "x.go"})
			return err
		}, []string{}},
		{"move within phase", func(s *Spec) error { return MoveTask(s, "task-7-3", "", at(0)) }, []string{"phase-7"}},
	}
	for _, c := range cases {
		s := NewSpecView(h, src)
		noErr(t, c.op(s))
		got, del := changedIDs(s)
		if !reflect.DeepEqual(got, c.want) || len(del) != 0 {
			t.Errorf("%s: changed %v deleted %v, want %v", c.name, got, del, c.want)
		}
	}
	s := NewSpecView(h, src)
	_, err := RemoveTask(s, "task-8-2", false)
	noErr(t, err)
	got, del := changedIDs(s)
	if !reflect.DeepEqual(got, []string{"phase-8", "spec-root"}) || !reflect.DeepEqual(del, []string{"task-8-2"}) {
		t.Errorf("remove: %v %v", got, del)
	}
}

// TestApplyDocumentOwnsHeaderMetadata: the view's header keeps a copy of
// the document's metadata, so a caller that edits the document afterwards
// (FixResult.Document) changes neither the view nor a header it shared
// (the node cache keeps ShareHeader's result).
func TestApplyDocumentOwnsHeaderMetadata(t *testing.T) {
	sp := newTestSpec(t)
	doc := sp.Document()
	doc.Metadata = map[string]any{"owner": "ada", "tags": []any{"a"}}
	ApplyDocument(sp, &doc)
	shared := sp.ShareHeader()
	doc.Metadata["owner"] = "bob"
	doc.Metadata["tags"].([]any)[0] = "changed"
	for name, h := range map[string]Header{"view": sp.Header, "shared": shared} {
		if h.Metadata["owner"] != "ada" || h.Metadata["tags"].([]any)[0] != "a" {
			t.Errorf("%s header metadata follows the document: %v", name, h.Metadata)
		}
	}
}
