package specs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// appended records the entries a domain function appends; its reads find
// nothing (the journal's own reads are tested with the store).
type appended struct{ entries []JournalEntry }

func (a *appended) Entries(uint64, int, func(*JournalEntry) bool) ([]JournalEntry, bool, error) {
	return nil, false, nil
}
func (a *appended) TaskEntries(string, uint64, int, func(*JournalEntry) bool) ([]JournalEntry, bool, error) {
	return nil, false, nil
}
func (a *appended) Append(e JournalEntry)  { a.entries = append(a.entries, e) }
func (a *appended) Records(string) Records { return nil }

func TestExcerpt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"ééééé", 3, "éé…"},
	} {
		if got := Excerpt(tc.in, tc.n); got != tc.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestPrepareHints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(s *Spec) (n, prev *Node)
		want  []string // substrings, in order
	}{
		{"pending task without file or criteria", func(s *Spec) (*Node, *Node) { return s.Node("task-1-1"), nil },
			[]string{"Start it before working", "No file_path", "No acceptance criteria"}},
		{"unfinished prerequisite", func(s *Spec) (*Node, *Node) {
			noErr(t, AddDependency(s, "task-1-1", "task-1-2", "blocks"))
			return s.Node("task-1-2"), s.Node("task-1-1")
		}, []string{"Unfinished prerequisites: task-1-1", "Start it before working"}},
		{"blocked", func(s *Spec) (*Node, *Node) {
			must[TransitionResult](t)(Block(s, "task-1-1", TransitionOptions{Reason: "waiting"}))
			return s.Node("task-1-1"), nil
		}, []string{"It is blocked (waiting)"}},
		{"completed", func(s *Spec) (*Node, *Node) {
			must[TransitionResult](t)(Start(s, "task-1-1", TransitionOptions{}))
			must[TransitionResult](t)(Complete(s, "task-1-1", TransitionOptions{}))
			return s.Node("task-1-1"), nil
		}, []string{"already completed"}},
		{"verify step", func(s *Spec) (*Node, *Node) { return s.Node("verify-1-1"), nil }, []string{"A verify step"}},
		{"previous sibling needs journaling", func(s *Spec) (*Node, *Node) {
			must[TransitionResult](t)(Start(s, "task-1-1", TransitionOptions{}))
			must[TransitionResult](t)(Complete(s, "task-1-1", TransitionOptions{}))
			s.Edit("task-1-1").SetMeta("needs_journaling", true)
			return s.Node("task-1-2"), s.Node("task-1-1")
		}, []string{"Start it", "previous sibling task-1-1 still needs a journal entry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := twoPhases(t)
			n, prev := tc.setup(s)
			got := prepareHints(n, CheckDeps(s, n), prev)
			i := 0
			for _, h := range got {
				if i < len(tc.want) && strings.Contains(h, tc.want[i]) {
					i++
				}
			}
			if i != len(tc.want) {
				t.Fatalf("hints %q lack %q (in order)", got, tc.want)
			}
		})
	}
}

func TestNothingNamesTheNextStep(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(s *Spec)
		kind   StepKind
		taskID string
	}{
		{"failed task first: its retry", func(s *Spec) {
			must[TransitionResult](t)(Start(s, "task-1-1", TransitionOptions{}))
			must[TransitionResult](t)(Fail(s, "task-1-1", TransitionOptions{Reason: "broke"}))
			for _, id := range []string{"task-1-2", "task-1-3"} {
				must[TransitionResult](t)(Block(s, id, TransitionOptions{Reason: "x"}))
			}
		}, StepRetry, "task-1-1"},
		{"blocked task: its check-deps", func(s *Spec) {
			for _, id := range []string{"task-1-1", "task-1-2", "task-1-3"} {
				must[TransitionResult](t)(Block(s, id, TransitionOptions{Reason: "x"}))
			}
		}, StepCheckDeps, "task-1-1"},
		{"in progress only: its info", func(s *Spec) {
			must[RemovePhaseResult](t)(RemovePhase(s, "phase-2", false))
			for _, id := range []string{"task-1-1", "task-1-2", "task-1-3"} {
				must[TransitionResult](t)(Start(s, id, TransitionOptions{}))
			}
		}, StepTaskInfo, "task-1-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := twoPhases(t)
			tc.setup(s)
			v := Next(s)
			if v.Found || v.Idle == nil || v.Idle.Next == nil {
				t.Fatalf("next: %+v", v)
			}
			if want := (NextStep{Kind: tc.kind, SpecID: s.Header.SpecID, TaskID: tc.taskID}); *v.Idle.Next != want {
				t.Fatalf("next step %+v, want %+v", *v.Idle.Next, want)
			}
		})
	}
}

// TestNextAndPrepareBatchShareFailedItems: an empty batch reports the
// failed tasks exactly as next does, retry steps included.
func TestNextAndPrepareBatchShareFailedItems(t *testing.T) {
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "One"}, []TaskInput{{Title: "a"}, {Type: TypeVerify, Title: "v"}}))
	must[TransitionResult](t)(Start(s, "task-1-1", TransitionOptions{}))
	must[TransitionResult](t)(Fail(s, "task-1-1", TransitionOptions{Reason: "broke"}))
	b := PrepareBatch(s, BatchOptions{MaxTasks: 3})
	n := Next(s)
	if len(b.Tasks) != 0 || b.Failed == nil || n.Idle == nil {
		t.Fatalf("batch %+v next %+v", b, n)
	}
	if !reflect.DeepEqual(b.Failed, n.Idle.Failed) || len(n.Idle.Failed) != 1 || n.Idle.Failed[0].TaskID != "task-1-1" ||
		RetryStep(s.Header.SpecID, n.Idle.Failed[0]) != (NextStep{Kind: StepRetry, SpecID: s.Header.SpecID, TaskID: "task-1-1"}) {
		t.Fatalf("batch failed %+v, next failed %+v", b.Failed, n.Idle.Failed)
	}
}

func TestClaimNextStartsAndJournals(t *testing.T) {
	s := twoPhases(t)
	j := &appended{}
	v, err := ClaimNext(s, j, TransitionOptions{Agent: "s1"})
	noErr(t, err)
	if !v.Found || !v.Claimed || v.Task.TaskID != "task-1-1" || s.Node("task-1-1").Status != StatusInProgress || len(j.entries) != 1 {
		t.Fatalf("claim: %+v, status %s, %d entries", v.Task, s.Node("task-1-1").Status, len(j.entries))
	}
}

// TestRowsNameTheirNodeTaskID: every row shape names its node task_id with
// the same value (one name for one thing across list, query, hierarchy,
// list-blocked and prepare-batch).
func TestRowsNameTheirNodeTaskID(t *testing.T) {
	s := twoPhases(t)
	must[TransitionResult](t)(Block(s, "task-1-2", TransitionOptions{Reason: "x"}))
	n := s.Node("task-1-2")
	for name, row := range map[string]any{
		"list": ListItemOf(n), "hierarchy": HierarchyNodeOf(n, 2, true), "blocked": BlockedItemOf(s, n),
		"batch": BatchTaskOf(s, n), "node": NodeOf(n), "ref": RefOf(n),
	} {
		b, _ := json.Marshal(row)
		var m map[string]any
		noErr(t, json.Unmarshal(b, &m))
		if m["task_id"] != "task-1-2" {
			t.Errorf("%s: task_id %v in %s", name, m["task_id"], b)
		}
		if _, ok := m["node_id"]; ok {
			t.Errorf("%s: also node_id in %s", name, b)
		}
	}
}

func TestBatchFiltersFilter(t *testing.T) {
	s := twoPhases(t)
	for _, tc := range []struct {
		name string
		f    BatchFilters
		code string
		want []string
	}{
		{"no filter", BatchFilters{}, errcode.MissingRequired, nil},
		{"bad pattern", BatchFilters{Pattern: "("}, errcode.InvalidRegex, nil},
		{"pattern over titles", BatchFilters{Pattern: "^[ab]$"}, "", []string{"task-1-1", "task-1-2"}},
		{"pattern over ids", BatchFilters{Pattern: "task-2-"}, "", []string{"task-2-1", "task-2-2"}},
		{"node type", BatchFilters{NodeType: "verify"}, "", []string{"verify-1-1", "verify-2-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tf, err := tc.f.Filter()
			if tc.code != "" {
				e := mustCode(t, err, tc.code)
				if e.Details["field"] != "pattern" {
					t.Fatalf("details %v", e.Details)
				}
				return
			}
			noErr(t, err)
			ids, tooMany := MatchTasks(s, RootID, tf, MaxBatchMatches)
			if tooMany || !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("matched %v (too many %v), want %v", ids, tooMany, tc.want)
			}
		})
	}
}

func TestUpdateMetadataBatchCountsChanges(t *testing.T) {
	s := twoPhases(t)
	f := BatchFilters{Parent: "phase-1", NodeType: "task"}
	tf := must[TaskFilter](t)(f.Filter())
	s.Edit("task-1-1").SetMeta("owner", "bob")
	b := must[MetadataBatch](t)(UpdateMetadataBatch(s, "phase-1", f, tf, map[string]any{"owner": "bob"}))
	if b.MatchedCount != 3 || b.UpdatedCount != 2 || b.Filters != f {
		t.Fatalf("batch %+v", b)
	}
}

func TestEditDependencyDefaultsToBlocks(t *testing.T) {
	s := twoPhases(t)
	v := must[DependencyView](t)(EditDependency(s, AddDependency, "task-1-1", "task-1-2", ""))
	if v.DependencyType != "blocks" || !reflect.DeepEqual(v.TaskDependencies.Blocks, []string{"task-1-2"}) ||
		v.TargetDependencies == nil || !reflect.DeepEqual(v.TargetDependencies.BlockedBy, []string{"task-1-1"}) {
		t.Fatalf("%+v", v)
	}
	if _, err := EditDependency(s, RemoveDependency, "task-1-1", "task-9-9", ""); err == nil {
		t.Fatal("an unknown target removed")
	}
}

func TestCompleteBatchReportsEachOutcome(t *testing.T) {
	s := twoPhases(t)
	for _, id := range []string{"task-1-1", "task-1-2"} {
		must[TransitionResult](t)(Start(s, id, TransitionOptions{}))
	}
	j := &appended{}
	b := CompleteBatch(s, j, []Completion{
		{TaskID: "task-1-1", Success: true, Note: "done"},
		{TaskID: "task-1-2", Success: false, Note: "broke"},
		{TaskID: "task-9-9", Success: true},
	}, TransitionOptions{})
	if b.CompletedCount != 1 || b.FailedCount != 1 || b.ErrorCount != 1 || len(j.entries) != 2 {
		t.Fatalf("counts %+v, %d entries", b, len(j.entries))
	}
	for i, want := range []CompletionResult{
		{TaskID: "task-1-1", Success: true, OK: true, From: StatusInProgress, Status: StatusCompleted},
		{TaskID: "task-1-2", OK: true, From: StatusInProgress, Status: StatusFailed, RetryCount: new(1)},
		{TaskID: "task-9-9", Success: true, ErrorCode: errcode.TaskNotFound},
	} {
		got := b.Results[i]
		got.Error = ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("result %d: %+v, want %+v", i, got, want)
		}
	}
}

func TestFrontmatterValue(t *testing.T) {
	for _, tc := range []struct {
		key, in string
		want    any
		code    string
	}{
		{"estimated_hours", " 2.5 ", 2.5, ""},
		{"actual_hours", "two", nil, errcode.InvalidFormat},
		{"objectives", `["a","b"]`, []any{"a", "b"}, ""},
		{"objectives", `a, b`, nil, errcode.InvalidFormat},
		{"mission", "Ship it", "Ship it", ""},
	} {
		got, err := FrontmatterValue(tc.key, tc.in)
		if tc.code != "" {
			if e := mustCode(t, err, tc.code); e.Details["field"] != "value" {
				t.Errorf("%s %q: details %v", tc.key, tc.in, e.Details)
			}
			continue
		}
		noErr(t, err)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q = %#v, want %#v", tc.key, tc.in, got, tc.want)
		}
	}
}

func TestAuthoringViews(t *testing.T) {
	s := twoPhases(t)
	a := must[AddedAssumption](t)(AddTaggedAssumption(s, "tech", "Go 1.26"))
	if a.Assumption != "[tech] Go 1.26" || a.Count != 1 {
		t.Fatalf("assumption %+v", a)
	}
	m := must[MovedPhase](t)(MovePhaseView(s, "phase-2", 0))
	if !reflect.DeepEqual(m.Phases, []string{"phase-2", "phase-1"}) || m.Position != 0 {
		t.Fatalf("moved %+v", m)
	}
	if names := TemplateNames(); len(names) != len(TemplateCatalogue()) || names[0] != "empty" {
		t.Fatalf("templates %v", names)
	}
	sp, entries, err := CreateSpec(NewSpecInput{Name: "New one"}, testClock(), nil, "alice")
	noErr(t, err)
	if len(entries) != 1 || entries[0].Author != "alice" || entries[0].Content != "Created "+sp.Header.Title+"." {
		t.Fatalf("entries %+v", entries)
	}
}

func TestCheckBatchIDs(t *testing.T) {
	for _, tc := range []struct {
		ids      []string
		code     string
		received any
	}{
		{nil, errcode.MissingRequired, nil},
		{[]string{"task-1-1", "task-1-2", "task-1-1"}, errcode.InvalidFormat, "task-1-1"},
		{[]string{"task-1-1", "task-1-2"}, "", nil},
	} {
		err := CheckBatchIDs(tc.ids)
		if tc.code == "" {
			noErr(t, err)
			continue
		}
		if e := mustCode(t, err, tc.code); e.Details["field"] != "task_ids" || e.Details["received"] != tc.received {
			t.Errorf("%v: details %v", tc.ids, e.Details)
		}
	}
}
