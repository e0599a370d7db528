package specs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestNewSpec(t *testing.T) {
	s, err := NewSpec(NewSpecInput{Name: "Export CSV", Mission: "m", Category: "implementation", Template: "feature", TestCommand: "go test ./..."}, testClock(), nil)
	noErr(t, err)
	h := s.Header
	if h.SpecID != "export-csv-2025-01-02-001" || h.Version != 1 || h.Lifecycle != LifecyclePending || h.Generated == "" || !strings.HasSuffix(h.Generated, "Z") {
		t.Fatalf("header %+v", h)
	}
	if s.Node("verify-1-1").MetaString("command") != "go test ./..." || s.Node("verify-1-1").VerificationType() != "run-tests" {
		t.Fatal("scaffold command")
	}
	if h.Metadata["mission"] != "m" || h.Metadata["category"] != "implementation" {
		t.Fatalf("metadata %v", h.Metadata)
	}
	mustNoViolations(t, s, "new")
	_, err = NewSpec(NewSpecInput{Name: " "}, nil, nil)
	mustCode(t, err, errcode.MissingRequired)
	e := mustCode(t, func() error { _, err := NewSpec(NewSpecInput{Name: "x", Template: "bugfx"}, nil, nil); return err }(), errcode.InvalidFormat)
	if m := e.Matches(); len(m) == 0 || m[0] != "bugfix" {
		t.Fatalf("fuzzy matches %v", m)
	}
	seen := map[string]bool{"a-2025-01-02-001": true}
	s2, err := NewSpec(NewSpecInput{Name: "A"}, testClock(), func(id string) bool { return seen[id] })
	noErr(t, err)
	if s2.Header.SpecID != "a-2025-01-02-002" {
		t.Fatal(s2.Header.SpecID)
	}
}

func TestAddPhaseScaffoldAndLinks(t *testing.T) {
	s := newTestSpec(t)
	p1 := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "One", Purpose: "p", Description: "d"}))
	v1, v2 := s.Node("verify-1-1"), s.Node("verify-1-2")
	if v1.Title != ScaffoldRunTestsTitle || v1.VerificationType() != "manual" || v2.Title != ScaffoldReviewTitle || v2.VerificationType() != "manual" {
		t.Fatal("scaffold without command must be manual")
	}
	if !reflect.DeepEqual(v2.Dependencies.BlockedBy, []string{"verify-1-1"}) {
		t.Fatal("run tests must block the review")
	}
	if p1.LinkedTo != "" {
		t.Fatal("first phase has nothing to link to")
	}
	p3 := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Three"}))
	if p3.LinkedTo != "phase-1" {
		t.Fatalf("%+v", p3)
	}
	// Insert between: phase-1 → new → phase-2(id) re-linked.
	no := false
	mid := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Middle", Position: at(1)}))
	if mid.LinkedTo != "phase-1" || len(mid.Relinked) != 1 || mid.Relinked[0].Blocked != p3.PhaseID {
		t.Fatalf("%+v", mid)
	}
	if got := s.Node(p3.PhaseID).Dependencies.BlockedBy; !reflect.DeepEqual(got, []string{mid.PhaseID}) {
		t.Fatalf("relinked: %v", got)
	}
	if got := s.Root().Children.Slice(); !reflect.DeepEqual(got, []string{"phase-1", mid.PhaseID, p3.PhaseID}) {
		t.Fatalf("order %v", got)
	}
	free := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Free", LinkPrevious: &no}))
	if len(s.Node(free.PhaseID).Dependencies.BlockedBy) != 0 {
		t.Fatal("link_previous false")
	}
	_, err := AddPhase(s, PhaseInput{Title: "x", Position: at(9)})
	mustCode(t, err, errcode.InvalidPosition)
	_, err = AddPhase(s, PhaseInput{})
	mustCode(t, err, errcode.MissingRequired)
	mustNoViolations(t, s, "phases")
}

func TestAddPhaseBulk(t *testing.T) {
	s := newTestSpec(t)
	res := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Bulk", MetadataDefaults: map[string]any{"complexity": "low"}}, []TaskInput{
		{Title: "a", Description: "d", TaskCategory: "implementation", FilePath: "a.go", AcceptanceCriteria: []string{"works"}, Complexity: "high", EstimatedHours: f64(2)},
		{Type: TypeSubtask, Title: "a.1"},
		{Title: "b"},
	}))
	if !reflect.DeepEqual(res.TaskIDs, []string{"task-1-1", "task-1-1-1", "task-1-2"}) || len(res.VerifyIDs) != 0 {
		t.Fatalf("no verify scaffold unless asked (as in foundry-mcp): %+v", res)
	}
	if s.Node("task-1-1").MetaString("complexity") != "high" || s.Node("task-1-2").MetaString("complexity") != "low" {
		t.Fatal("metadata defaults")
	}
	if s.Node("task-1-1-1").Parent != "task-1-1" {
		t.Fatal("subtask parent")
	}
	res2 := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Own checks", VerifyScaffold: true}, []TaskInput{{Title: "x"}, {Type: TypeVerify, Title: "check", Command: "make test"}}))
	if !reflect.DeepEqual(res2.VerifyIDs, []string{"verify-2-1"}) || s.Node("verify-2-1").VerificationType() != "run-tests" {
		t.Fatalf("no scaffold when verify given: %+v", res2)
	}
	before := docJSON(t, s)
	_, err := AddPhaseBulk(s, PhaseInput{Title: "Bad"}, []TaskInput{{Title: ""}, {Title: "x", TaskCategory: "coding"}, {Type: TypeSubtask, Title: "y"}, {Title: "z", FilePath: "../etc/passwd"}})
	e := mustCode(t, err, errcode.Validation)
	if vs, _ := e.Details["violations"].([]any); len(vs) != 3 {
		t.Fatalf("violations %v", e.Details)
	}
	_, err = AddPhaseBulk(s, PhaseInput{Title: "Bad"}, []TaskInput{{Type: TypeSubtask, Title: "orphan"}})
	mustCode(t, err, errcode.Validation)
	if docJSON(t, s) != before {
		t.Fatal("failed bulk changed the spec")
	}
	mustNoViolations(t, s, "bulk")
}

func TestAddTaskPlacementAndErrors(t *testing.T) {
	s := twoPhases(t)
	// Default: before the trailing verify node.
	id := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "new"}))
	ch := s.Node("phase-1").Children.Slice()
	if ch[len(ch)-2] != id || s.Node(ch[len(ch)-1]).Type != TypeVerify {
		t.Fatalf("children %v", ch)
	}
	id2 := must[string](t)(AddTask(s, "phase-1", TaskInput{Title: "first", Position: at(0)}))
	if s.Node("phase-1").Children.At(0) != id2 {
		t.Fatal("position 0 is first")
	}
	v := must[string](t)(AddTask(s, "phase-1", TaskInput{Type: TypeVerify, Title: "last check"}))
	if ch := s.Node("phase-1").Children.Slice(); ch[len(ch)-1] != v {
		t.Fatal("verify goes last")
	}
	cases := []struct {
		parent string
		in     TaskInput
		code   string
	}{
		{"", TaskInput{Title: "x"}, errcode.MissingRequired},
		{"phase-9", TaskInput{Title: "x"}, errcode.PhaseNotFound},
		{"task-9-9", TaskInput{Title: "x"}, errcode.TaskNotFound},
		{"phase-1", TaskInput{}, errcode.MissingRequired},
		{"phase-1", TaskInput{Title: "x", Type: "epic"}, errcode.InvalidFormat},
		{"phase-1", TaskInput{Title: "x", Type: TypeSubtask}, errcode.InvalidParent},
		{RootID, TaskInput{Title: "x"}, errcode.InvalidParent},
		{"verify-1-1", TaskInput{Title: "x"}, errcode.InvalidParent},
		{"phase-1", TaskInput{Title: "x", Position: at(99)}, errcode.InvalidPosition},
		{"phase-1", TaskInput{Title: "x", Position: at(-1)}, errcode.InvalidPosition},
		{"phase-1", TaskInput{Title: "x", FilePath: "/abs"}, errcode.InvalidFormat},
		{"phase-1", TaskInput{Title: "x", EstimatedHours: f64(-1)}, errcode.InvalidFormat},
		{"phase-1", TaskInput{Title: "x", Command: "make"}, errcode.InvalidFormat},
	}
	for i, c := range cases {
		_, err := AddTask(s, c.parent, c.in)
		if core.CodeOf(err) != c.code {
			t.Errorf("case %d: got %v want %s", i, err, c.code)
		}
	}
	// A subtask under a completed leaf reopens the parent's rollup.
	_, err := Start(s, "task-1-1", TransitionOptions{})
	noErr(t, err)
	_, err = Complete(s, "task-1-1", TransitionOptions{})
	noErr(t, err)
	sub := must[string](t)(AddTask(s, "task-1-1", TaskInput{Type: TypeSubtask, Title: "more"}))
	if s.Node("task-1-1").Status != StatusPending || s.Node("task-1-1").TotalTasks != 1 || sub != "task-1-1-1" {
		t.Fatalf("parent rollup %+v", s.Node("task-1-1"))
	}
	mustNoViolations(t, s, "add task")
}

func TestRemoveTaskCascade(t *testing.T) {
	s := twoPhases(t)
	must[string](t)(AddTask(s, "task-1-2", TaskInput{Type: TypeSubtask, Title: "s"}))
	noErr(t, AddDependency(s, "task-1-2-1", "task-1-3", "blocks"))
	noErr(t, AddDependency(s, "task-1-1", "task-1-2", "blocks"))
	_, err := RemoveTask(s, "task-1-2", false)
	mustCode(t, err, errcode.Validation)
	removed := must[[]string](t)(RemoveTask(s, "task-1-2", true))
	if !reflect.DeepEqual(removed, []string{"task-1-2", "task-1-2-1"}) {
		t.Fatal(removed)
	}
	if len(s.Node("task-1-3").Dependencies.BlockedBy) != 0 || len(s.Node("task-1-1").Dependencies.Blocks) != 0 {
		t.Fatal("edges to removed nodes remain")
	}
	_, err = RemoveTask(s, "phase-1", true)
	mustCode(t, err, errcode.Validation)
	_, err = RemoveTask(s, "nope", true)
	mustCode(t, err, errcode.TaskNotFound)
	mustNoViolations(t, s, "remove")
}

func TestMoveTask(t *testing.T) {
	s := twoPhases(t)
	noErr(t, MoveTask(s, "task-1-3", "", at(0)))
	if s.Node("phase-1").Children.At(0) != "task-1-3" {
		t.Fatal("reorder")
	}
	noErr(t, MoveTask(s, "task-1-1", "phase-2", nil))
	if s.Node("task-1-1").Parent != "phase-2" || indexOf(s.Node("phase-2").Children.Slice(), "task-1-1") != 2 {
		t.Fatalf("moved: %v", s.Node("phase-2").Children)
	}
	noErr(t, MoveTask(s, "task-1-2", "task-2-1", nil))
	mustCode(t, MoveTask(s, "task-2-1", "task-1-2", nil), errcode.InvalidParent)
	mustCode(t, MoveTask(s, "task-2-1", "verify-1-1", nil), errcode.InvalidParent)
	mustCode(t, MoveTask(s, "phase-1", "phase-2", nil), errcode.Validation)
	mustCode(t, MoveTask(s, "task-2-1", "phase-7", nil), errcode.PhaseNotFound)
	mustCode(t, MoveTask(s, "task-2-1", "phase-1", at(9)), errcode.InvalidPosition)
	// A move that makes a task inherit a cycle is refused: task-1-3 blocks
	// a task of phase-1; under phase-2 (blocked by phase-1) task-1-3 would
	// wait for phase-1, which contains a task waiting for task-1-3.
	noErr(t, AddDependency(s, "task-1-3", "task-2-1", "blocks"))
	noErr(t, MoveTask(s, "task-2-1", "phase-1", nil))
	before := docJSON(t, s)
	mustCode(t, MoveTask(s, "task-1-3", "phase-2", nil), errcode.CircularDependency)
	if docJSON(t, s) != before {
		t.Fatal("refused move changed the spec")
	}
	mustNoViolations(t, s, "move")
}

func TestRemovePhase(t *testing.T) {
	s := twoPhases(t)
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Three"}))
	_, err := Start(s, "task-2-1", TransitionOptions{})
	mustCode(t, err, errcode.TaskBlocked)
	noErr(t, func() error { _, err := Start(s, "task-1-1", TransitionOptions{}); return err }())
	_, err = RemovePhase(s, "phase-1", false)
	e := mustCode(t, err, errcode.Conflict)
	if e.Details["field"] != "force" {
		t.Fatal(e.Details)
	}
	// phase-2 (pending only) goes without force, phase-1 → phase-3 re-linked.
	res := must[RemovePhaseResult](t)(RemovePhase(s, "phase-2", false))
	if len(res.Relinked) != 1 || res.Relinked[0] != (Link{Blocker: "phase-1", Blocked: "phase-3"}) || res.TasksRemoved != 3 {
		t.Fatalf("%+v", res)
	}
	if s.Has("task-2-1") || s.Has("verify-2-1") {
		t.Fatal("subtree not removed")
	}
	mustNoViolations(t, s, "remove phase")
	must[RemovePhaseResult](t)(RemovePhase(s, "phase-1", true))
	_, err = RemovePhase(s, "phase-1", true)
	mustCode(t, err, errcode.PhaseNotFound)
	_, err = RemovePhase(s, "task-3-1", true)
	mustCode(t, err, errcode.PhaseNotFound)
	mustNoViolations(t, s, "remove phase 2")
}

func TestMovePhase(t *testing.T) {
	s := twoPhases(t)
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Three"}))
	noErr(t, MovePhase(s, "phase-3", 0))
	if got := s.Root().Children.Slice(); !reflect.DeepEqual(got, []string{"phase-3", "phase-1", "phase-2"}) {
		t.Fatal(got)
	}
	mustCode(t, MovePhase(s, "phase-3", 3), errcode.InvalidPosition)
	mustCode(t, MovePhase(s, "phase-3", -1), errcode.InvalidPosition)
	mustCode(t, MovePhase(s, "phase-9", 0), errcode.PhaseNotFound)
	mustNoViolations(t, s, "move phase")
}

func TestMetadataUpdates(t *testing.T) {
	s := twoPhases(t)
	ch := must[[]string](t)(UpdateMetadata(s, "task-1-1", map[string]any{"title": "Renamed", "file_path": "a/b.go", "labels": map[string]string{"k": "v"}, "owners": []string{"me"}}))
	if !reflect.DeepEqual(ch, []string{"file_path", "labels", "owners", "title"}) || s.Node("task-1-1").Title != "Renamed" {
		t.Fatal(ch)
	}
	ch = must[[]string](t)(UpdateMetadata(s, "task-1-1", map[string]any{"file_path": "a/b.go", "labels": nil}))
	if !reflect.DeepEqual(ch, []string{"labels"}) {
		t.Fatal(ch)
	}
	_, err := UpdateMetadata(s, "task-1-1", map[string]any{"status": "completed"})
	mustCode(t, err, errcode.Validation)
	_, err = UpdateMetadata(s, "task-1-1", map[string]any{"complexity": "huge", "estimated_hours": "3"})
	mustCode(t, err, errcode.Validation) // two violations
	_, err = UpdateMetadata(s, "task-1-1", map[string]any{})
	mustCode(t, err, errcode.MissingRequired)
	_, err = UpdateMetadata(s, RootID, map[string]any{"x": 1})
	mustCode(t, err, errcode.TaskNotFound)
	_, err = UpdatePhaseMetadata(s, "phase-1", map[string]any{"purpose": "why", "estimated_hours": 4})
	noErr(t, err)
	_, err = UpdatePhaseMetadata(s, "task-1-1", map[string]any{"purpose": "why"})
	mustCode(t, err, errcode.PhaseNotFound)
	noErr(t, UpdateEstimate(s, "task-1-2", f64(1.5), "medium"))
	if h, _ := s.Node("task-1-2").MetaFloat("estimated_hours"); h != 1.5 {
		t.Fatal(h)
	}
	mustCode(t, UpdateEstimate(s, "task-1-2", nil, ""), errcode.MissingRequired)
	mustCode(t, UpdateEstimate(s, "task-1-2", f64(-1), ""), errcode.InvalidFormat)
	mustCode(t, UpdateEstimate(s, "task-1-2", nil, "xl"), errcode.InvalidFormat)
	mustNoViolations(t, s, "metadata")
}

func TestRequirements(t *testing.T) {
	s := twoPhases(t)
	r := must[Requirement](t)(AddRequirement(s, "task-1-1", "", "Handles empty input"))
	if r.ID != "req-1" || r.Type != "acceptance" {
		t.Fatal(r)
	}
	_, err := AddRequirement(s, "task-1-1", "technical", " handles EMPTY input ")
	mustCode(t, err, errcode.DuplicateEntry)
	_, err = AddRequirement(s, "task-1-1", "wish", "x")
	mustCode(t, err, errcode.InvalidFormat)
	_, err = AddRequirement(s, "task-1-1", "", "")
	mustCode(t, err, errcode.MissingRequired)
	for i := 2; i <= MaxRequirements; i++ {
		must[Requirement](t)(AddRequirement(s, "task-1-1", "technical", "req "+string(rune('A'+i%26))+strings.Repeat("x", i)))
	}
	_, err = AddRequirement(s, "task-1-1", "", "one too many")
	mustCode(t, err, errcode.Validation)
	if got := s.Node("task-1-1").Requirements(); len(got) != MaxRequirements || got[49].ID != "req-50" {
		t.Fatal(len(got))
	}
}

func TestSpecLists(t *testing.T) {
	s := newTestSpec(t)
	if n := must[int](t)(AddAssumption(s, "Users have accounts")); n != 1 {
		t.Fatal(n)
	}
	_, err := AddAssumption(s, "users have accounts")
	mustCode(t, err, errcode.DuplicateEntry)
	_, err = AddConstraint(s, "")
	mustCode(t, err, errcode.MissingRequired)
	must[int](t)(AddConstraint(s, "No new deps"))
	must[int](t)(AddQuestion(s, "Which DB?"))
	must[int](t)(AddSuccessCriterion(s, "p95 < 100ms"))
	must[int](t)(AddRisk(s, Risk{Description: "Data loss", Likelihood: "low", Impact: "high", Mitigation: "Backups"}))
	_, err = AddRisk(s, Risk{Description: "x", Likelihood: "extreme"})
	mustCode(t, err, errcode.InvalidFormat)
	rev := must[Revision](t)(AddRevision(s, Revision{Changelog: "Initial plan"}))
	if rev.Author != "specd" || rev.Date == "" || rev.Version == "" {
		t.Fatal(rev)
	}
	_, err = AddRevision(s, Revision{})
	mustCode(t, err, errcode.MissingRequired)
	if len(Assumptions(s)) != 1 || len(Constraints(s)) != 1 || len(Questions(s)) != 1 || len(SuccessCriteria(s)) != 1 ||
		len(Risks(s)) != 1 || Risks(s)[0].Impact != "high" || len(Revisions(s)) != 1 {
		t.Fatal("lists")
	}
	// Frontmatter.
	noErr(t, UpdateFrontmatter(s, "mission", "New mission"))
	noErr(t, UpdateFrontmatter(s, "title", "New title"))
	if s.Header.Title != "New title" || s.Root().Title != "New title" {
		t.Fatal("title")
	}
	noErr(t, UpdateFrontmatter(s, "objectives", []string{"a", "b"}))
	noErr(t, UpdateFrontmatter(s, "custom_key", map[string]any{"n": 1}))
	noErr(t, UpdateFrontmatter(s, "custom_key", nil))
	e := mustCode(t, UpdateFrontmatter(s, "assumptions", []string{"x"}), errcode.Validation)
	if e.Details["use_action"] != "assumption-add" {
		t.Fatal(e.Details)
	}
	mustCode(t, UpdateFrontmatter(s, "status", "done"), errcode.Validation)
	mustCode(t, UpdateFrontmatter(s, "estimated_hours", "3"), errcode.InvalidFormat)
	mustCode(t, UpdateFrontmatter(s, "objectives", "x"), errcode.InvalidFormat)
	mustCode(t, UpdateFrontmatter(s, "", "x"), errcode.MissingRequired)
	mustCode(t, UpdateFrontmatter(s, "title", ""), errcode.MissingRequired)
	mustNoViolations(t, s, "lists")
}

func TestFindReplace(t *testing.T) {
	s := twoPhases(t)
	_, err := UpdateMetadata(s, "task-1-1", map[string]any{"description": "Use the old API and the old client"})
	noErr(t, err)
	res := must[FindReplaceResult](t)(FindReplace(s, FindReplaceInput{Find: "old", Replace: "new"}))
	if res.Replacements != 2 || res.FieldsChanged != 1 || !reflect.DeepEqual(res.NodesChanged, []string{"task-1-1"}) {
		t.Fatalf("%+v", res)
	}
	res = must[FindReplaceResult](t)(FindReplace(s, FindReplaceInput{Find: `^(a|b)$`, Replace: "task $1", Regex: true, Scope: "titles"}))
	if res.Replacements != 2 || s.Node("task-1-1").Title != "task a" || len(res.Samples) != 2 {
		t.Fatalf("%+v", res)
	}
	res = must[FindReplaceResult](t)(FindReplace(s, FindReplaceInput{Find: "zzz", Replace: "y"}))
	if res.Replacements != 0 {
		t.Fatal(res)
	}
	_, err = FindReplace(s, FindReplaceInput{Find: "(", Regex: true})
	mustCode(t, err, errcode.InvalidRegex)
	_, err = FindReplace(s, FindReplaceInput{Find: strings.Repeat("a", 257), Regex: true})
	mustCode(t, err, errcode.InvalidRegex)
	_, err = FindReplace(s, FindReplaceInput{Find: "x", Scope: "body"})
	mustCode(t, err, errcode.InvalidFormat)
	_, err = FindReplace(s, FindReplaceInput{})
	mustCode(t, err, errcode.MissingRequired)
	_, err = FindReplace(s, FindReplaceInput{Find: "^.*$", Regex: true, Scope: "titles"})
	mustCode(t, err, errcode.Validation) // would blank titles
	before := docJSON(t, s)
	_, err = FindReplace(s, FindReplaceInput{Find: "", Regex: true})
	mustCode(t, err, errcode.MissingRequired)
	if docJSON(t, s) != before {
		t.Fatal("a refused find-replace changed the spec")
	}
	for i := 0; i < 30; i++ {
		must[string](t)(AddTask(s, "phase-2", TaskInput{Title: strings.Repeat("x", 40)}))
	}
	before = docJSON(t, s)
	_, err = FindReplace(s, FindReplaceInput{Find: "x", Replace: "y"})
	e := mustCode(t, err, errcode.Validation)
	if e.Details["replacements"].(int) != 1200 || docJSON(t, s) != before {
		t.Fatal("cap must refuse and change nothing")
	}
	mustNoViolations(t, s, "find replace")
}
