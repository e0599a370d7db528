package specs

import (
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core/errcode"
)

// walkFixture is:
//
//	phase-1: task-1-1 (a.go), task-1-2 (b.go), task-1-3 (no file_path),
//	         task-1-4 (pkg/x.go), task-1-5 (pkg), verify-1-1, verify-1-2
//	phase-2: task-2-1 with subtask task-2-1-1, task-2-2, verify-2-1, verify-2-2
func walkFixture(t *testing.T) *Spec {
	t.Helper()
	s, err := NewSpec(NewSpecInput{Name: "Walk"}, testClock(), func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AddPhaseBulk(s, PhaseInput{Title: "One", TestCommand: "go test ./...", VerifyScaffold: true}, []TaskInput{
		{Title: "A", FilePath: "a.go"}, {Title: "B", FilePath: "b.go"}, {Title: "C"},
		{Title: "D", FilePath: "pkg/x.go"}, {Title: "E", FilePath: "pkg"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddPhaseBulk(s, PhaseInput{Title: "Two", VerifyScaffold: true}, []TaskInput{{Title: "F", FilePath: "f.go"}, {Title: "F1", Type: TypeSubtask}, {Title: "G", FilePath: "g.go"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := MoveLifecycle(s, LifecycleActive, false); err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(seq func(func(*Node, int) bool)) string {
	var out []string
	for n := range seq {
		out = append(out, n.ID)
	}
	return strings.Join(out, ",")
}

func TestWalkResumesAnywhereInExecutionOrder(t *testing.T) {
	s := walkFixture(t)
	var want []string
	for n := range ExecutionOrder(s, RootID) {
		if n.ID != RootID {
			want = append(want, n.ID)
		}
	}
	seq, ok := WalkFrom(s, RootID, "", 0)
	if !ok {
		t.Fatal("walk from the root failed")
	}
	var got []string
	var depths []int
	for n, d := range seq {
		got = append(got, n.ID)
		depths = append(depths, d)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("walk %v\nwant %v", got, want)
	}
	for i, id := range got {
		if real, _ := Depth(s, id); real != depths[i] {
			t.Errorf("%s depth %d, real %d", id, depths[i], real)
		}
		seq, ok := WalkFrom(s, RootID, id, 0)
		if !ok {
			t.Fatalf("resume after %s failed", id)
		}
		if rest := ids(seq); rest != strings.Join(want[i+1:], ",") {
			t.Errorf("after %s: %v, want %v", id, rest, want[i+1:])
		}
	}
	// max_depth 2 prunes subtasks; scope limits to a phase.
	seq, _ = WalkFrom(s, RootID, "task-2-1", 2)
	if rest := ids(seq); rest != "task-2-2,verify-2-1,verify-2-2" {
		t.Errorf("depth-limited resume: %v", rest)
	}
	if _, ok := WalkFrom(s, "phase-1", "task-2-1", 0); ok {
		t.Error("resuming from a node outside the scope must fail")
	}
	if _, ok := WalkFrom(s, RootID, "task-9-9", 0); ok {
		t.Error("resuming from a missing node must fail")
	}
}

func TestListingPages(t *testing.T) {
	s := walkFixture(t)
	query := func(parent string, f TaskFilter) Listing {
		l, ok := QueryListing(s, parent, f)
		if !ok {
			t.Fatalf("query listing under %q refused", parent)
		}
		return l
	}
	for _, tc := range []struct {
		name  string
		l     Listing
		want  string
		more  bool
		stale bool
	}{
		{"tasks only, first page", Listing{Limit: 3, Keep: func(n *Node, _ int) bool { return IsTaskNode(n) }}, "task-1-1,task-1-2,task-1-3", true, false},
		{"resume into the next phase", Listing{After: "verify-1-2", Limit: 2, Keep: func(n *Node, _ int) bool { return IsTaskNode(n) }}, "task-2-1,task-2-1-1", true, false},
		{"last page has no more", Listing{After: "task-2-2", Limit: 5}, "verify-2-1,verify-2-2", false, false},
		{"depth 1 is the phases", Listing{MaxDepth: 1, Limit: 10}, "phase-1,phase-2", false, false},
		{"query: a parent's children of any type", query("task-2-1", TaskFilter{}).with(10), "task-2-1-1", false, false},
		{"query: node_type without parent", query("", TaskFilter{NodeType: "phase"}).with(10), "phase-1,phase-2", false, false},
		{"query: status", query("", TaskFilter{Status: "pending"}).with(2), "task-1-1,task-1-2", true, false},
		{"stale cursor", Listing{After: "task-9-9", Limit: 3}, "", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := tc.l.Page(s)
			if ok == tc.stale {
				t.Fatalf("ok %v, want %v", ok, !tc.stale)
			}
			var got []string
			for _, n := range p.Nodes {
				got = append(got, n.ID)
			}
			if strings.Join(got, ",") != tc.want || p.More != tc.more {
				t.Errorf("page %v more %v, want %s more %v", got, p.More, tc.want, tc.more)
			}
		})
	}
	if _, ok := QueryListing(s, "task-9-9", TaskFilter{}); ok {
		t.Error("a query under a missing parent must be refused")
	}
}

func (l Listing) with(limit int) Listing { l.Limit = limit; return l }

func TestSelectBatch(t *testing.T) {
	s := walkFixture(t)
	if err := AddDependency(s, "task-1-1", "task-1-2", "blocks"); err != nil {
		t.Fatal(err)
	}
	sel := SelectBatch(s, BatchOptions{MaxTasks: 5})
	var got []string
	for _, n := range sel.Selected {
		got = append(got, n.ID)
	}
	// task-1-2 waits on task-1-1 (not actionable); task-1-3 has no
	// file_path; task-1-5 (pkg) contains task-1-4's pkg/x.go.
	if strings.Join(got, ",") != "task-1-1,task-1-4" || sel.StoppedBy != BatchStopExhausted {
		t.Errorf("selected %v stopped by %s", got, sel.StoppedBy)
	}
	var skipped []string
	for _, sk := range sel.Skipped {
		skipped = append(skipped, sk.TaskID+": "+sk.Reason)
	}
	if strings.Join(skipped, "; ") != "task-1-3: no file_path: it runs alone; task-1-5: file_path overlaps task-1-4" {
		t.Errorf("skipped %v", skipped)
	}
	if sel := SelectBatch(s, BatchOptions{MaxTasks: 1}); len(sel.Selected) != 1 || sel.StoppedBy != BatchStopMaxTasks {
		t.Errorf("max 1: %d selected, stopped by %s", len(sel.Selected), sel.StoppedBy)
	}
	one := func(*Node) int { return 100 }
	if sel := SelectBatch(s, BatchOptions{MaxTasks: 5, TokenBudget: 150, Tokens: one}); len(sel.Selected) != 1 || sel.StoppedBy != BatchStopTokenBudget {
		t.Errorf("budget: %d selected, stopped by %s", len(sel.Selected), sel.StoppedBy)
	}
}

func TestCheckDepsInheritsFromAncestors(t *testing.T) {
	s := walkFixture(t)
	// phase-2 is blocked by phase-1 (AddPhaseBulk chains phases).
	if err := AddDependency(s, "task-2-2", "task-2-1-1", "blocks"); err != nil {
		t.Fatal(err)
	}
	dc := CheckDeps(s, s.Node("task-2-1-1"))
	if dc.CanStart || len(dc.BlockedBy) != 2 {
		t.Fatalf("check %+v", dc)
	}
	own, inherited := dc.BlockedBy[0], dc.BlockedBy[1]
	if own.TaskID != "task-2-2" || own.InheritedFrom != "" || !own.Blocking {
		t.Errorf("own prerequisite %+v", own)
	}
	if inherited.TaskID != "phase-1" || inherited.InheritedFrom != "phase-2" || !inherited.Blocking {
		t.Errorf("inherited prerequisite %+v", inherited)
	}
}

func TestResetStale(t *testing.T) {
	s := walkFixture(t)
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Clock = func() time.Time { return now }
	for _, id := range []string{"task-1-1", "task-1-2"} {
		if _, err := Start(s, id, TransitionOptions{Agent: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Node("task-1-2").Metadata["started_at"] = FormatTime(now.Add(-30 * time.Hour))
	reset, entries, err := ResetStale(s, now, 24, TransitionOptions{Agent: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reset) != 1 || reset[0].TaskID != "task-1-2" || reset[0].HoursInProgress == nil || *reset[0].HoursInProgress != 30 || len(entries) != 1 {
		t.Fatalf("reset %+v entries %d", reset, len(entries))
	}
	if s.Node("task-1-2").Status != StatusPending || s.Node("task-1-1").Status != StatusInProgress {
		t.Error("only the stale task goes back to pending")
	}
}

func TestBatchTransitions(t *testing.T) {
	s := walkFixture(t)
	_, err := StartAll(s, []string{"task-1-1", "task-9-9"}, TransitionOptions{Agent: "a"})
	e := mustCode(t, err, errcode.TaskNotFound)
	if e.Details["failed_task_id"] != "task-9-9" || e.Details["field"] != "task_ids" {
		t.Errorf("details %v", e.Details)
	}
	s = walkFixture(t)
	trs, err := StartAll(s, []string{"task-1-1", "task-1-2"}, TransitionOptions{Agent: "a"})
	if err != nil || len(trs) != 2 || trs[1].TaskID != "task-1-2" {
		t.Fatalf("start all: %v %v", trs, err)
	}
	out := CompleteAll(s, []Completion{{TaskID: "task-1-1", Success: true}, {TaskID: "task-9-9", Success: true}, {TaskID: "task-1-2", Note: "broke"}},
		TransitionOptions{Agent: "a", Force: true})
	if out[0].Err != nil || out[0].Result.To != StatusCompleted || out[1].Err == nil || out[2].Err != nil || out[2].Result.To != StatusFailed {
		t.Errorf("complete all: %+v", out)
	}
	if rc, _ := s.Node("task-1-2").MetaInt("retry_count"); rc != 1 {
		t.Errorf("retry_count %d", rc)
	}
	_, err = UpdateMetadataAll(s, []string{"task-1-3", "task-9-9"}, map[string]any{"owner": "x"})
	if e := mustCode(t, err, errcode.TaskNotFound); e.Details["failed_task_id"] != "task-9-9" {
		t.Errorf("details %v", e.Details)
	}
}

func TestTreeHelpers(t *testing.T) {
	s := walkFixture(t)
	for _, tc := range []struct {
		id       string
		position int
		phase    string
		task     bool
	}{
		{"task-1-2", 1, "phase-1", true},
		{"task-2-1-1", 0, "phase-2", true},
		{"phase-2", 1, "phase-2", false},
		{"verify-2-2", 3, "phase-2", true},
		{"task-9-9", -1, "", false},
	} {
		n := s.Node(tc.id)
		phase := ""
		if p := PhaseOf(s, n); p != nil {
			phase = p.ID
		}
		if got := Position(s, tc.id); got != tc.position || phase != tc.phase || (n != nil && IsTaskNode(n) != tc.task) {
			t.Errorf("%s: position %d phase %q", tc.id, got, phase)
		}
	}
	var phases []string
	for _, p := range Phases(s) {
		phases = append(phases, p.ID)
	}
	if strings.Join(phases, ",") != "phase-1,phase-2" {
		t.Errorf("phases %v", phases)
	}
}
