package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/mcptool"
	"github.com/specd/specd/core/store/bucketstore"
	"github.com/specd/specd/core/store/storetest"
	"github.com/specd/specd/specs"
	"github.com/specd/specd/specs/specstore"
)

type taskHarness struct {
	t      *testing.T
	reg    *mcptool.Registry
	d      *Deps
	st     *specstore.Repo // over a real bbolt store in t.TempDir()
	eng    bucketstore.Store
	mu     sync.Mutex
	now    time.Time
	specID string
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// newTaskHarness stores the fixture spec:
//
//	phase-1: task-1-1 (a.go), task-1-2 (b.go), task-1-3 (no file_path),
//	         task-1-4 (pkg/x.go), task-1-5 (pkg), verify-1-1 → verify-1-2
//	phase-2 (blocked by phase-1): task-2-1 with subtask task-2-1-1, task-2-2
func newTaskHarness(t *testing.T) *taskHarness {
	t.Helper()
	eng := storetest.Open(t)
	h := &taskHarness{t: t, st: specstore.New(eng, nil), eng: eng, now: t0}
	clock := func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	hdr, err := h.st.CreateSpec(context.Background(), specs.RepoWriteOptions{Action: "test.fixture"}, func(exists func(string) bool) (*specs.Spec, []specs.JournalEntry, error) {
		sp, err := specs.NewSpec(specs.NewSpecInput{Name: "Fixture"}, core.Clock(clock), exists)
		if err != nil {
			return nil, nil, err
		}
		return sp, nil, fixturePlan(sp)
	})
	must(err)
	h.specID = hdr.SpecID
	h.d = &Deps{Store: fakeStore{}, Specs: h.st, Version: "test", Started: t0, Workspace: t.TempDir(),
		Runtime: mcptool.Runtime{Deadline: 5 * time.Second, Now: clock}}
	h.reg = New(h.d)
	return h
}

// fixturePlan adds the fixture's phases to sp and activates it.
func fixturePlan(sp *specs.Spec) error {
	_, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "One", TestCommand: "go test ./...", VerifyScaffold: true}, []specs.TaskInput{
		{Title: "A", FilePath: "a.go"}, {Title: "B", FilePath: "b.go"}, {Title: "C"},
		{Title: "D", FilePath: "pkg/x.go"}, {Title: "E", FilePath: "pkg"},
	})
	if err != nil {
		return err
	}
	if _, err := specs.AddPhaseBulk(sp, specs.PhaseInput{Title: "Two", VerifyScaffold: true}, []specs.TaskInput{{Title: "F", FilePath: "f.go"}, {Title: "F1", Type: specs.TypeSubtask}, {Title: "G", FilePath: "g.go"}}); err != nil {
		return err
	}
	_, err = specs.MoveLifecycle(sp, specs.LifecycleActive, false)
	return err
}

// view runs fn over the stored spec and its journal, oldest entry first
// (for assertions), in one read transaction of the real store.
func (h *taskHarness) view(fn func(sp *specs.Spec, journal []specs.JournalEntry)) {
	h.t.Helper()
	err := h.st.ReadSpec(context.Background(), h.specID, func(sp *specs.Spec, j specs.JournalReader) error {
		newest, _, err := j.Entries(0, 100_000, nil)
		if err != nil {
			return err
		}
		journal := make([]specs.JournalEntry, 0, len(newest))
		for i := len(newest) - 1; i >= 0; i-- {
			journal = append(journal, newest[i])
		}
		fn(sp, journal)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *taskHarness) advance(d time.Duration) { h.mu.Lock(); h.now = h.now.Add(d); h.mu.Unlock() }

// holder is the started_by a claim of session sess records.
func holder(sess string) string { return mcptool.HolderOf(mcptool.Session{ID: sess}) }

// call dispatches tool/action as session sess and returns the envelope as
// decoded JSON (what a client sees).
func (h *taskHarness) call(sess, tool string, args map[string]any) map[string]any {
	h.t.Helper()
	tl, ok := h.reg.Tool(tool)
	if !ok {
		h.t.Fatalf("no tool %s", tool)
	}
	if _, ok := args["spec_id"]; !ok {
		args["spec_id"] = h.specID
	}
	// Arguments as a client sends them: JSON numbers are float64.
	raw, _ := json.Marshal(args)
	var wire map[string]any
	if err := json.Unmarshal(raw, &wire); err != nil {
		h.t.Fatal(err)
	}
	env := h.reg.Dispatch(context.Background(), tl, wire, mcptool.Session{ID: sess}, h.d.Runtime)
	b, err := json.Marshal(env)
	if err != nil {
		h.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

// ok calls and fails the test unless the call succeeded; it returns data.
func (h *taskHarness) ok(sess, tool string, args map[string]any) map[string]any {
	h.t.Helper()
	env := h.call(sess, tool, args)
	if env["success"] != true {
		h.t.Fatalf("%s %v failed: %s", tool, args, compact(env["data"]))
	}
	return env["data"].(map[string]any)
}

// fail calls and fails the test unless the call failed with code; it
// returns data.
func (h *taskHarness) fail(code, sess, tool string, args map[string]any) map[string]any {
	h.t.Helper()
	env := h.call(sess, tool, args)
	d, _ := env["data"].(map[string]any)
	if env["success"] != false || d["error_code"] != code {
		h.t.Fatalf("%s %v: want %s, got %s", tool, args, code, compact(env))
	}
	return d
}

func (h *taskHarness) invariants() {
	h.t.Helper()
	h.view(func(sp *specs.Spec, _ []specs.JournalEntry) {
		for _, v := range specs.CheckInvariants(sp) {
			h.t.Errorf("invariant: %s", v)
		}
	})
}

func (h *taskHarness) node(id string) *specs.Node {
	var out *specs.Node
	h.view(func(sp *specs.Spec, _ []specs.JournalEntry) { out = sp.Node(id).Clone() })
	return out
}

func compact(v any) string { b, _ := json.Marshal(v); return string(b) }

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func ids(items any, key string) []string {
	var out []string
	for _, it := range items.([]any) {
		out = append(out, it.(map[string]any)[key].(string))
	}
	return out
}

func TestTaskListPagesCoverEveryTaskOnceAndCursorsAreBound(t *testing.T) {
	h := newTaskHarness(t)
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"action": "list", "limit": 3}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := h.call("s1", "task", args)
		if env["success"] != true {
			t.Fatalf("page %d: %s", page, compact(env))
		}
		seen = append(seen, ids(env["data"].(map[string]any)["tasks"], "task_id")...)
		p := env["meta"].(map[string]any)["pagination"].(map[string]any)
		if p["cursor"] == nil {
			if p["has_more"] != false {
				t.Fatal("last page must say has_more false")
			}
			break
		}
		cursor = p["cursor"].(string)
		if page == 1 { // insertions between pages do not disturb paging
			h.ok("s1", "task", map[string]any{"action": "add", "parent": "phase-2", "title": "late", "position": 0})
		}
	}
	want := "task-1-1,task-1-2,task-1-3,task-1-4,task-1-5,verify-1-1,verify-1-2,task-2-3,task-2-1,task-2-1-1,task-2-2,verify-2-1,verify-2-2"
	if strings.Join(seen, ",") != want {
		t.Fatalf("pages: %v\nwant %s", seen, want)
	}
	// A cursor of another listing, a corrupt one, and one whose node is gone.
	env := h.call("s1", "task", map[string]any{"action": "list", "limit": 2})
	cur := env["meta"].(map[string]any)["pagination"].(map[string]any)["cursor"].(string)
	d := h.fail("INVALID_CURSOR", "s1", "task", map[string]any{"action": "query", "status": "pending", "cursor": cur})
	if d["recovery"].(map[string]any)["suggested_args"].(map[string]any)["action"] != "query" {
		t.Errorf("recovery must restart the listing: %s", compact(d))
	}
	h.fail("INVALID_CURSOR", "s1", "task", map[string]any{"action": "list", "cursor": "not-a-cursor"})
	h.ok("s1", "task", map[string]any{"action": "remove", "task_id": "task-1-2"})
	h.fail("INVALID_CURSOR", "s1", "task", map[string]any{"action": "list", "cursor": cur})
	// Over the maximum is clamped with a warning, as foundry does.
	env = h.call("s1", "task", map[string]any{"action": "list", "limit": 101})
	meta := env["meta"].(map[string]any)
	if meta["pagination"].(map[string]any)["page_size"] != float64(100) || fmt.Sprint(meta["warnings"]) != "[limit 101 is over the maximum; 100 was used.]" {
		t.Errorf("limit 101 must be clamped to 100 with a warning: %s", compact(meta))
	}
	h.fail("INVALID_FORMAT", "s1", "task", map[string]any{"action": "list", "limit": 0})
}

func TestTaskQueryAndHierarchy(t *testing.T) {
	h := newTaskHarness(t)
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-2"})
	d := h.ok("s1", "task", map[string]any{"action": "query", "status": "in_progress"})
	if got := ids(d["tasks"], "task_id"); strings.Join(got, ",") != "task-1-2" {
		t.Errorf("query status: %v", got)
	}
	d = h.ok("s1", "task", map[string]any{"action": "query", "parent": "task-2-1"})
	if got := ids(d["tasks"], "task_id"); strings.Join(got, ",") != "task-2-1-1" {
		t.Errorf("query parent (direct children): %v", got)
	}
	d = h.ok("s1", "task", map[string]any{"action": "query", "node_type": "verify", "limit": 100})
	if got := ids(d["tasks"], "task_id"); len(got) != 4 {
		t.Errorf("query node_type: %v", got)
	}
	d = h.fail("TASK_NOT_FOUND", "s1", "task", map[string]any{"action": "query", "parent": "task-2-9"})
	if fm := strs(d["recovery"].(map[string]any)["fuzzy_matches"]); len(fm) == 0 {
		t.Errorf("no fuzzy matches: %s", compact(d))
	}
	// Real depth: phases 1, tasks 2, subtasks 3 (foundry counted dashes).
	d = h.ok("s1", "task", map[string]any{"action": "hierarchy", "max_depth": 2, "limit": 100})
	for _, n := range d["nodes"].([]any) {
		m := n.(map[string]any)
		if m["depth"].(float64) > 2 || m["task_id"] == "task-2-1-1" {
			t.Errorf("hierarchy max_depth 2 shows %v", m)
		}
	}
	d = h.ok("s1", "task", map[string]any{"action": "hierarchy", "max_depth": 3, "limit": 100, "include_metadata": true})
	found := false
	for _, n := range d["nodes"].([]any) {
		m := n.(map[string]any)
		if m["task_id"] == "task-2-1-1" {
			found = m["depth"].(float64) == 3 && m["metadata"] != nil
		}
	}
	if !found {
		t.Errorf("hierarchy max_depth 3 must show the subtask at depth 3 with metadata: %s", compact(d))
	}
}

func TestTaskTransitionsAndTheirErrors(t *testing.T) {
	h := newTaskHarness(t)
	// Unknown task: TASK_NOT_FOUND with fuzzy matches and a list recovery.
	d := h.fail("TASK_NOT_FOUND", "s1", "task", map[string]any{"action": "start", "task_id": "task-1-9"})
	rec := d["recovery"].(map[string]any)
	if rec["suggested_tool"] != "task" || rec["suggested_args"].(map[string]any)["action"] != "list" || len(strs(rec["fuzzy_matches"])) == 0 {
		t.Errorf("TASK_NOT_FOUND recovery: %s", compact(d))
	}
	// Blocked by an inherited prerequisite (phase-2 waits for phase-1).
	d = h.fail("TASK_BLOCKED", "s1", "task", map[string]any{"action": "start", "task_id": "task-2-2"})
	if strs(d["details"].(map[string]any)["blocked_by"])[0] != "phase-1" || d["recovery"].(map[string]any)["suggested_args"].(map[string]any)["action"] != "check-deps" {
		t.Errorf("TASK_BLOCKED: %s", compact(d))
	}
	// A parent's status is computed.
	h.fail("INVALID_TRANSITION", "s1", "task", map[string]any{"action": "complete", "task_id": "phase-1"})
	// start: s1 starts; s1 again → warning; s2 → CONFLICT with started_by.
	d = h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	if d["status"] != "in_progress" || d["task"].(map[string]any)["metadata"].(map[string]any)["started_by"] != holder("s1") {
		t.Fatalf("start: %s", compact(d))
	}
	env := h.call("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	if env["success"] != true || len(env["meta"].(map[string]any)["warnings"].([]any)) != 1 {
		t.Errorf("same-session start must succeed with a warning: %s", compact(env))
	}
	d = h.fail("CONFLICT", "s2", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	if det := d["details"].(map[string]any); det["started_by"] != holder("s1") || det["started_at"] == "" {
		t.Errorf("CONFLICT details: %s", compact(d))
	}
	// Illegal move: unblock a task that is not blocked → allowed list.
	d = h.fail("INVALID_TRANSITION", "s1", "task", map[string]any{"action": "unblock", "task_id": "task-1-1"})
	if allowed := strs(d["details"].(map[string]any)["allowed"]); strings.Join(allowed, ",") != "complete,block,reopen,fail" {
		t.Errorf("allowed from in_progress: %v", allowed)
	}
	// block → unblock keeps the blocker in resolved_blockers; journal entries.
	h.ok("s1", "task", map[string]any{"action": "block", "task_id": "task-1-2", "reason": "needs API key", "blocker_type": "resource", "ticket": "OPS-1"})
	d = h.ok("s1", "task", map[string]any{"action": "list-blocked"})
	if b := d["tasks"].([]any); len(b) != 1 || b[0].(map[string]any)["blocker_ticket"] != "OPS-1" {
		t.Errorf("list-blocked: %s", compact(d))
	}
	h.ok("s1", "task", map[string]any{"action": "unblock", "task_id": "task-1-2", "resolution": "key issued"})
	if rb, _ := h.node("task-1-2").Meta("resolved_blockers"); len(rb.([]any)) != 1 {
		t.Errorf("resolved_blockers: %v", rb)
	}
	// complete with a note; reopen needs a reason; update-status routes.
	h.advance(90 * time.Minute)
	d = h.ok("s1", "task", map[string]any{"action": "complete", "task_id": "task-1-1", "completion_note": "wrote a.go"})
	// The answer leaves the task node out (the agent just worked on it)
	// and names the next call; the node is stored with its hours.
	hours, _ := h.node("task-1-1").Meta("actual_hours")
	journaling, _ := h.node("task-1-1").Meta("needs_journaling")
	if hours != 1.5 || journaling != true || d["task"] != nil || d["next_calls"] == nil || d["progress"].(map[string]any)["completed_tasks"] != 1.0 {
		t.Errorf("complete: %s (actual_hours %v, needs_journaling %v)", compact(d), hours, journaling)
	}
	env = h.call("s1", "task", map[string]any{"action": "complete", "task_id": "task-1-1"})
	if env["success"] != true || env["meta"].(map[string]any)["warnings"] == nil {
		t.Errorf("completing a completed task: success with a warning: %s", compact(env))
	}
	h.fail("MISSING_REQUIRED", "s1", "task", map[string]any{"action": "update-status", "task_id": "task-1-1", "status": "pending"})
	h.ok("s1", "task", map[string]any{"action": "update-status", "task_id": "task-1-1", "status": "pending", "reason": "redo"})
	h.ok("s1", "task", map[string]any{"action": "update-status", "task_id": "task-1-1", "status": "blocked", "reason": "x"})
	if h.node("task-1-1").Status != specs.StatusBlocked {
		t.Error("update-status blocked did not block")
	}
	h.ok("s1", "task", map[string]any{"action": "update-status", "task_id": "task-1-1", "status": "pending"}) // unblock
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	h.fail("MISSING_REQUIRED", "s1", "task", map[string]any{"action": "reopen", "task_id": "task-1-1"})
	h.ok("s1", "task", map[string]any{"action": "reopen", "task_id": "task-1-1", "reason": "x"})
	h.view(func(_ *specs.Spec, journal []specs.JournalEntry) {
		var titles []string
		for _, e := range journal {
			if e.TaskID == "task-1-1" {
				titles = append(titles, strings.SplitN(e.Title, ":", 2)[0])
			}
		}
		want := "Task Started,Task Completed,Task Reopened,Task Blocked,Task Unblocked,Task Started,Task Reopened"
		if strings.Join(titles, ",") != want {
			t.Errorf("journal of task-1-1: %v\nwant %s", titles, want)
		}
	})
	h.invariants()
}

func TestTaskNextExplainsWhenNothingIsActionable(t *testing.T) {
	h := newTaskHarness(t)
	d := h.ok("s1", "task", map[string]any{"action": "next"})
	if d["found"] != true || d["task_id"] != "task-1-1" || d["claimed"] != false {
		t.Fatalf("next: %s", compact(d))
	}
	// Claim everything claimable in phase-1 from two sessions: each claim is
	// a different task.
	claimed := map[string]string{}
	for i := 0; i < 5; i++ {
		sess := []string{"s1", "s2"}[i%2]
		d = h.ok(sess, "task", map[string]any{"action": "next", "claim": true})
		id := d["task_id"].(string)
		if d["claimed"] != true || d["status"] != "in_progress" || claimed[id] != "" {
			t.Fatalf("claim %d: %s (claimed %v)", i, compact(d), claimed)
		}
		claimed[id] = sess
	}
	// Verify nodes wait for the phase's other work; phase-2 waits for
	// phase-1: found=false, in_progress lists who holds what, blocked lists
	// what waits on what; a warning says so. Not an error.
	env := h.call("s3", "task", map[string]any{"action": "next", "claim": true})
	d = env["data"].(map[string]any)
	if env["success"] != true || d["found"] != false || d["spec_complete"] != false || d["claimed"] != false {
		t.Fatalf("nothing actionable: %s", compact(env))
	}
	if len(d["in_progress"].([]any)) != 5 || d["in_progress"].([]any)[0].(map[string]any)["started_by"] == "" {
		t.Errorf("in_progress: %s", compact(d["in_progress"]))
	}
	waiting := map[string][]string{}
	for _, b := range d["blocked"].([]any) {
		m := b.(map[string]any)
		waiting[m["task_id"].(string)] = strs(m["waiting_on"])
	}
	if strings.Join(waiting["task-2-2"], ",") != "phase-1" || strings.Join(waiting["verify-1-2"], ",") != "verify-1-1" {
		t.Errorf("blocked: %v", waiting)
	}
	if w := env["meta"].(map[string]any)["warning_details"].([]any); w[0].(map[string]any)["code"] != "NO_ACTIONABLE_TASK" {
		t.Errorf("warning: %v", w)
	}
	// Finish everything: spec_complete.
	for {
		d = h.ok("s1", "task", map[string]any{"action": "next", "claim": true})
		if d["found"] != true {
			for id := range claimed {
				h.ok(claimed[id], "task", map[string]any{"action": "complete", "task_id": id})
				delete(claimed, id)
			}
			if d = h.ok("s1", "task", map[string]any{"action": "next"}); d["found"] != true {
				break
			}
			continue
		}
		h.ok("s1", "task", map[string]any{"action": "complete", "task_id": d["task_id"]})
	}
	if d["spec_complete"] != true || d["next_call"].(map[string]any)["tool"] != "lifecycle" {
		t.Errorf("spec_complete: %s", compact(d))
	}
	d = h.ok("s1", "task", map[string]any{"action": "progress"})
	if d["percentage"] != 100.0 || d["remaining_tasks"] != 0.0 || len(d["phases"].([]any)) != 2 {
		t.Errorf("progress: %s", compact(d))
	}
	h.invariants()
}

func TestTaskPrepareBundle(t *testing.T) {
	h := newTaskHarness(t)
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	h.ok("s1", "task", map[string]any{"action": "complete", "task_id": "task-1-1", "completion_note": "the a.go part is done"})
	for i := 0; i < 4; i++ {
		h.ok("s1", "journal", map[string]any{"action": "add", "title": fmt.Sprintf("note %d", i), "task_id": "task-1-2", "content": "c"})
	}
	d := h.ok("s1", "task", map[string]any{"action": "prepare", "task_id": "task-1-2"})
	ctx := d["context"].(map[string]any)
	prev := ctx["previous_sibling"].(map[string]any)
	if prev["task_id"] != "task-1-1" || prev["journal_excerpt"].(map[string]any)["content"] != "the a.go part is done" {
		t.Errorf("previous sibling: %s", compact(prev))
	}
	if j := ctx["journal"].([]any); len(j) != 3 || j[0].(map[string]any)["title"] != "note 3" {
		t.Errorf("last 3 entries newest first: %s", compact(j))
	}
	if ph := ctx["phase"].(map[string]any); ph["phase_id"] != "phase-1" || ph["completed_tasks"] != 1.0 || ph["total_tasks"] != 7.0 {
		t.Errorf("phase: %s", compact(ph))
	}
	if ctx["parent"] != nil {
		t.Errorf("a phase child has no parent task: %v", ctx["parent"])
	}
	if d["dependencies"].(map[string]any)["can_start"] != true || len(d["hints"].([]any)) == 0 {
		t.Errorf("deps/hints: %s", compact(d))
	}
	// Default task = next; a subtask's parent task is in the bundle.
	d = h.ok("s1", "task", map[string]any{"action": "prepare"})
	if d["task_id"] != "task-1-2" {
		t.Errorf("prepare without task_id: %s", d["task_id"])
	}
	d = h.ok("s1", "task", map[string]any{"action": "prepare", "task_id": "task-2-1-1"})
	ctx = d["context"].(map[string]any)
	if ctx["parent"].(map[string]any)["task_id"] != "task-2-1" || d["dependencies"].(map[string]any)["can_start"] != false {
		t.Errorf("subtask bundle: %s", compact(d))
	}
	dep := d["dependencies"].(map[string]any)["blocked_by"].([]any)[0].(map[string]any)
	if dep["task_id"] != "phase-1" || dep["inherited_from"] != "phase-2" || dep["blocking"] != true {
		t.Errorf("inherited prerequisite: %s", compact(dep))
	}
	h.fail("TASK_NOT_FOUND", "s1", "task", map[string]any{"action": "prepare", "task_id": "nope"})
}

func TestTaskPlanEdits(t *testing.T) {
	h := newTaskHarness(t)
	// add goes before the trailing verify nodes unless position says otherwise.
	d := h.ok("s1", "task", map[string]any{"action": "add", "parent": "phase-1", "title": "New", "file_path": "n.go", "acceptance_criteria": []any{"works"}})
	if d["task_id"] != "task-1-6" || d["position"] != 5.0 {
		t.Errorf("add: %s", compact(d))
	}
	d = h.ok("s1", "task", map[string]any{"action": "add", "parent": "phase-1", "title": "First", "position": 0, "task_type": "task"})
	if d["position"] != 0.0 || h.node("phase-1").Children.At(0) != d["task_id"] {
		t.Errorf("add at 0 (first, as in foundry): %s", compact(d))
	}
	h.fail("INVALID_PARENT", "s1", "task", map[string]any{"action": "add", "parent": "phase-1", "title": "x", "task_type": "subtask"})
	h.fail("PHASE_NOT_FOUND", "s1", "task", map[string]any{"action": "add", "parent": "phase-7", "title": "x"})
	// dry_run changes nothing and says what would change.
	before := h.node(specs.RootID)
	d = h.ok("s1", "task", map[string]any{"action": "add", "parent": "phase-1", "title": "Dry", "dry_run": true})
	if d["dry_run"] != true || len(d["changes"].([]any)) == 0 || h.node(specs.RootID).TotalTasks != before.TotalTasks {
		t.Errorf("dry run: %s", compact(d))
	}
	// expected_version: the version last read succeeds, an older one is
	// VERSION_CONFLICT (naming both versions, suggesting the re-read) and
	// changes nothing.
	v := h.ok("s1", "task", map[string]any{"action": "info", "task_id": "task-1-1"})["version"].(float64)
	d = h.fail("VERSION_CONFLICT", "s1", "task", map[string]any{"action": "update-estimate", "task_id": "task-1-1", "estimated_hours": 3, "expected_version": v - 1})
	if det := d["details"].(map[string]any); det["current_version"] != v || det["expected_version"] != v-1 {
		t.Errorf("VERSION_CONFLICT details: %s", compact(d))
	}
	if rec := d["recovery"].(map[string]any); rec["suggested_tool"] != "spec" || rec["suggested_args"].(map[string]any)["action"] != "get" {
		t.Errorf("VERSION_CONFLICT recovery: %s", compact(d))
	}
	if n := h.node("task-1-1"); n.MetaString("estimated_hours") != "" || n.Metadata["estimated_hours"] != nil {
		t.Errorf("a refused update changed the task: %v", n.Metadata)
	}
	d = h.ok("s1", "task", map[string]any{"action": "update-estimate", "task_id": "task-1-1", "estimated_hours": 3, "expected_version": v})
	if d["version"] != v+1 {
		t.Errorf("update with the current version: %s", compact(d))
	}
	h.fail("VERSION_CONFLICT", "s1", "task", map[string]any{"action": "update-estimate", "task_id": "task-1-1", "estimated_hours": 4, "expected_version": v})
	// Dependencies: both halves, cycles refused with the cycle, self edges.
	d = h.ok("s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-1-1", "target_id": "task-1-2"})
	if strs(d["target_dependencies"].(map[string]any)["blocked_by"])[0] != "task-1-1" {
		t.Errorf("add-dependency: %s", compact(d))
	}
	d = h.fail("CIRCULAR_DEPENDENCY", "s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-1-2", "target_id": "task-1-1"})
	if len(strs(d["details"].(map[string]any)["cycle"])) < 3 {
		t.Errorf("cycle: %s", compact(d))
	}
	h.fail("CIRCULAR_DEPENDENCY", "s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-2-1", "target_id": "task-1-3"}) // phase-2 waits for phase-1
	h.fail("SELF_REFERENCE", "s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-1-1", "target_id": "task-1-1"})
	h.fail("DEPENDENCY_NOT_FOUND", "s1", "task", map[string]any{"action": "remove-dependency", "task_id": "task-1-3", "target_id": "task-1-1"})
	h.ok("s1", "task", map[string]any{"action": "remove-dependency", "task_id": "task-1-2", "target_id": "task-1-1", "dependency_type": "blocked_by"})
	if n := h.node("task-1-1"); len(n.Dependencies.Blocks) != 0 {
		t.Errorf("remove-dependency left %v", n.Dependencies.Blocks)
	}
	// move, requirements, estimates, metadata.
	d = h.ok("s1", "task", map[string]any{"action": "move", "task_id": "task-2-2", "parent": "phase-1", "position": 1})
	if d["parent"] != "phase-1" || d["position"] != 1.0 || h.node("phase-1").Children.At(1) != "task-2-2" {
		t.Errorf("move: %s", compact(d))
	}
	d = h.ok("s1", "task", map[string]any{"action": "add-requirement", "task_id": "task-1-1", "text": "fast", "requirement_type": "technical"})
	if d["requirement"].(map[string]any)["id"] != "req-1" {
		t.Errorf("add-requirement: %s", compact(d))
	}
	h.fail("DUPLICATE_ENTRY", "s1", "task", map[string]any{"action": "add-requirement", "task_id": "task-1-1", "text": "FAST"})
	h.fail("MISSING_REQUIRED", "s1", "task", map[string]any{"action": "update-estimate", "task_id": "task-1-1"})
	d = h.ok("s1", "task", map[string]any{"action": "update-metadata", "task_id": "task-1-1", "status_note": "halfway", "metadata": map[string]any{"labels": map[string]any{"area": "io"}}})
	if strings.Join(strs(d["changed"]), ",") != "labels,status_note" {
		t.Errorf("update-metadata: %s", compact(d))
	}
	h.fail("VALIDATION_ERROR", "s1", "task", map[string]any{"action": "update-metadata", "task_id": "task-1-1", "metadata": map[string]any{"started_at": "x"}})
	// remove needs cascade for a parent.
	h.fail("VALIDATION_ERROR", "s1", "task", map[string]any{"action": "remove", "task_id": "task-2-1"})
	d = h.ok("s1", "task", map[string]any{"action": "remove", "task_id": "task-2-1", "cascade": true})
	if strings.Join(strs(d["removed"]), ",") != "task-2-1,task-2-1-1" {
		t.Errorf("remove cascade: %s", compact(d))
	}
	h.invariants()
}

func TestTaskMetadataBatch(t *testing.T) {
	h := newTaskHarness(t)
	d := h.ok("s1", "task", map[string]any{"action": "metadata-batch", "parent": "phase-1", "pattern": "^[AB]$", "updates": map[string]any{"owners": []any{"ann"}}})
	if d["matched_count"] != 2.0 || strings.Join(ids(d["nodes"], "task_id"), ",") != "task-1-1,task-1-2" {
		t.Errorf("metadata-batch: %s", compact(d))
	}
	if o := h.node("task-1-2").MetaStrings("owners"); len(o) != 1 || o[0] != "ann" {
		t.Errorf("owners: %v", o)
	}
	h.fail("MISSING_REQUIRED", "s1", "task", map[string]any{"action": "metadata-batch", "updates": map[string]any{"x": 1}})
	h.fail("INVALID_REGEX_PATTERN", "s1", "task", map[string]any{"action": "metadata-batch", "pattern": "(", "updates": map[string]any{"x": 1}})
	h.fail("PAYLOAD_TOO_LARGE", "s1", "task", map[string]any{"action": "metadata-batch", "pattern": strings.Repeat("a", 257), "updates": map[string]any{"x": 1}})
	// All or nothing: one invalid update rejects the whole call.
	h.fail("INVALID_FORMAT", "s1", "task", map[string]any{"action": "metadata-batch", "node_type": "task", "updates": map[string]any{"complexity": "huge"}})
	if h.node("task-1-1").MetaString("complexity") != "" {
		t.Error("a rejected batch changed a node")
	}
	// More than 100 matches is refused.
	for i := 0; i < 100; i++ {
		h.ok("s1", "task", map[string]any{"action": "add", "parent": "phase-2", "title": fmt.Sprintf("bulk %d", i)})
	}
	d = h.fail("VALIDATION_ERROR", "s1", "task", map[string]any{"action": "metadata-batch", "node_type": "task", "updates": map[string]any{"x": 1}})
	if d["details"].(map[string]any)["limit"] != 100.0 {
		t.Errorf("limit: %s", compact(d))
	}
}

func TestTaskBatches(t *testing.T) {
	h := newTaskHarness(t)
	// prepare-batch: a.go, b.go independent; task-1-3 has no file_path
	// (runs alone, skipped); pkg/x.go and pkg overlap.
	d := h.ok("s1", "task", map[string]any{"action": "prepare-batch", "max_tasks": 5})
	if got := strs(d["task_ids"]); strings.Join(got, ",") != "task-1-1,task-1-2,task-1-4" {
		t.Fatalf("prepare-batch: %v (%s)", got, compact(d["skipped"]))
	}
	reasons := map[string]string{}
	for _, s := range d["skipped"].([]any) {
		m := s.(map[string]any)
		reasons[m["task_id"].(string)] = m["reason"].(string)
	}
	if !strings.Contains(reasons["task-1-3"], "no file_path") || !strings.Contains(reasons["task-1-5"], "overlaps task-1-4") {
		t.Errorf("skipped: %v", reasons)
	}
	// A direct dependency separates tasks too.
	h.ok("s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-1-4", "target_id": "task-2-2", "dependency_type": "depends"})
	h.ok("s1", "task", map[string]any{"action": "add-dependency", "task_id": "task-1-2", "target_id": "task-1-4", "dependency_type": "depends"})
	d = h.ok("s1", "task", map[string]any{"action": "prepare-batch", "max_tasks": 5})
	if got := strs(d["task_ids"]); strings.Join(got, ",") != "task-1-1,task-1-2,task-1-5" {
		t.Errorf("prepare-batch with an edge: %v", got)
	}
	d = h.ok("s1", "task", map[string]any{"action": "prepare-batch", "max_tasks": 3, "token_budget": 100})
	if d["stopped_by"] != "token_budget" || d["count"].(float64) >= 3 {
		t.Errorf("token budget: %s", compact(d))
	}
	// start-batch is all or nothing.
	d = h.fail("TASK_BLOCKED", "s1", "task", map[string]any{"action": "start-batch", "task_ids": []any{"task-1-1", "task-2-2"}})
	if d["details"].(map[string]any)["failed_task_id"] != "task-2-2" || h.node("task-1-1").Status != specs.StatusPending {
		t.Fatalf("start-batch must change nothing on failure: %s", compact(d))
	}
	h.fail("INVALID_FORMAT", "s1", "task", map[string]any{"action": "start-batch", "task_ids": []any{"task-1-1", "task-1-1"}})
	d = h.ok("s1", "task", map[string]any{"action": "start-batch", "task_ids": []any{"task-1-1", "task-1-2", "task-1-5"}})
	if d["count"] != 3.0 {
		t.Fatalf("start-batch: %s", compact(d))
	}
	h.fail("CONFLICT", "s2", "task", map[string]any{"action": "start-batch", "task_ids": []any{"task-1-4", "task-1-5"}})
	if h.node("task-1-4").Status != specs.StatusPending {
		t.Error("a conflicting start-batch started a task")
	}
	// complete-batch: per task; failure → failed with retry_count + 1; an
	// item that cannot move is reported and the rest applied.
	env := h.call("s1", "task", map[string]any{"action": "complete-batch", "completions": []any{
		map[string]any{"task_id": "task-1-1", "success": true, "note": "done"},
		map[string]any{"task_id": "task-1-2", "success": false, "note": "tests fail"},
		map[string]any{"task_id": "task-1-3", "success": false},
		map[string]any{"task_id": "task-1-99", "success": true},
	}})
	d = env["data"].(map[string]any)
	if env["success"] != true || d["completed_count"] != 1.0 || d["failed_count"] != 1.0 || d["error_count"] != 2.0 {
		t.Fatalf("complete-batch: %s", compact(env))
	}
	res := d["results"].([]any)
	if res[1].(map[string]any)["retry_count"] != 1.0 || res[2].(map[string]any)["error_code"] != "INVALID_TRANSITION" || res[3].(map[string]any)["error_code"] != "TASK_NOT_FOUND" {
		t.Errorf("results: %s", compact(res))
	}
	if w := env["meta"].(map[string]any)["warning_details"].([]any); w[0].(map[string]any)["code"] != "PARTIAL_FAILURE" {
		t.Errorf("warning: %v", w)
	}
	if n := h.node("task-1-2"); n.Status != specs.StatusFailed || n.MetaString("failure_reason") != "tests fail" {
		t.Errorf("failed task: %s %v", n.Status, n.Metadata)
	}
	h.fail("UNKNOWN_PARAMETER", "s1", "task", map[string]any{"action": "complete-batch", "completions": []any{map[string]any{"task_id": "task-1-1", "success": true, "notes": "x"}}})
	h.fail("MISSING_REQUIRED", "s1", "task", map[string]any{"action": "complete-batch", "completions": []any{map[string]any{"task_id": "task-1-1"}}})
	// A failed task can be retried: next offers it again.
	// reset-batch: only tasks in progress at least threshold_hours.
	h.advance(2 * time.Hour)
	h.ok("s2", "task", map[string]any{"action": "start", "task_id": "task-1-4"})
	d = h.ok("s1", "task", map[string]any{"action": "reset-batch", "threshold_hours": 1})
	if got := ids(d["reset"], "task_id"); strings.Join(got, ",") != "task-1-5" {
		t.Errorf("reset-batch: %v", got)
	}
	if n := h.node("task-1-5"); n.Status != specs.StatusPending || n.StartedBy() != "" {
		t.Errorf("reset task: %s %v", n.Status, n.Metadata)
	}
	if h.node("task-1-4").Status != specs.StatusInProgress {
		t.Error("reset-batch reset a fresh claim")
	}
	h.invariants()
}

func TestVerificationAddKeepsTenResults(t *testing.T) {
	h := newTaskHarness(t)
	for i := 0; i < 12; i++ {
		h.ok("s1", "verification", map[string]any{"action": "add", "verify_id": "verify-1-1", "result": []string{"FAILED", "PARTIAL", "PASSED"}[i%3], "output": fmt.Sprint("run ", i)})
	}
	n := h.node("verify-1-1")
	hist := n.Metadata["verification_history"].([]any)
	if len(hist) != 10 || hist[0].(map[string]any)["output"] != "run 2" || n.MetaString("last_result") != "PASSED" {
		t.Errorf("history: %d, first %v, last_result %s", len(hist), hist[0], n.MetaString("last_result"))
	}
	if hist[9].(map[string]any)["command"] != "go test ./..." {
		t.Errorf("command defaults to the node's: %v", hist[9])
	}
	if n.Status != specs.StatusPending {
		t.Error("recording a result must not change the status")
	}
	if d := h.ok("s1", "verification", map[string]any{"action": "add", "verify_id": "verify-1-1", "result": "passed"}); d["result"] != "PASSED" {
		t.Errorf("result in another case is the declared value: %s", compact(d))
	}
	h.fail("INVALID_FORMAT", "s1", "verification", map[string]any{"action": "add", "verify_id": "verify-1-1", "result": "passd"})
	h.fail("VALIDATION_ERROR", "s1", "verification", map[string]any{"action": "add", "verify_id": "task-1-1", "result": "PASSED"})
	d := h.fail("TASK_NOT_FOUND", "s1", "verification", map[string]any{"action": "add", "verify_id": "verify-1-9", "result": "PASSED"})
	if d["details"].(map[string]any)["field"] != "verify_id" {
		t.Errorf("field: %s", compact(d))
	}
	h.fail("PAYLOAD_TOO_LARGE", "s1", "verification", map[string]any{"action": "add", "verify_id": "verify-1-1", "result": "PASSED", "output": strings.Repeat("x", 10_001)})
}

func TestTruncateTailKeepsTheEnd(t *testing.T) {
	out, cut := specs.TruncateTail(strings.Repeat("é", 20_000)+"SUMMARY", 10_000)
	if !cut || !strings.HasSuffix(out, "SUMMARY") || !strings.HasPrefix(out, specs.TruncationMarker) || len([]rune(out)) != 10_000 {
		t.Errorf("truncated to %d runes, cut=%v", len([]rune(out)), cut)
	}
	if out, cut := specs.TruncateTail("short", 10_000); cut || out != "short" {
		t.Error("short output must be kept as is")
	}
}

func TestVerificationExecute(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh -c")
	}
	h := newTaskHarness(t)
	// Off by default: FEATURE_DISABLED naming the feature and the option.
	d := h.fail("FEATURE_DISABLED", "s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-1"})
	if d["details"].(map[string]any)["feature"] != "verification_execute" || d["feature"] != "verification_execute" ||
		!strings.Contains(d["remediation"].(string), "--enable-verification-execute") {
		t.Errorf("disabled: %s", compact(d))
	}
	h.d.VerificationExecute = true
	setCmd := func(cmd string) {
		h.ok("s1", "task", map[string]any{"action": "update-metadata", "task_id": "verify-1-1", "command": cmd})
	}
	// The workspace root is the working directory; the environment is
	// PATH, HOME and LANG only, plus the call's SPECD_RUN_ID (procrun's
	// mark for the call's processes).
	t.Setenv("SPECD_SECRET_FOR_TEST", "leak")
	if err := os.WriteFile(filepath.Join(h.d.Workspace, "marker.txt"), []byte("here"), 0o644); err != nil {
		t.Fatal(err)
	}
	setCmd(`cat marker.txt; echo; env | sort | cut -d= -f1 | tr '\n' ' '`)
	d = h.ok("s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-1", "record": true})
	out := d["output"].(string)
	if d["result"] != "PASSED" || d["exit_code"] != 0.0 || !strings.HasPrefix(out, "here") || strings.Contains(out, "SPECD_SECRET") {
		t.Errorf("execute: %s", compact(d))
	}
	for _, k := range strings.Fields(strings.SplitN(out, "\n", 2)[1]) {
		if k != "PATH" && k != "HOME" && k != "LANG" && k != "SPECD_RUN_ID" && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
			t.Errorf("unexpected environment variable %s", k) // sh itself may add PWD, SHLVL, _
		}
	}
	if n := h.node("verify-1-1"); n.MetaString("last_result") != "PASSED" {
		t.Errorf("not recorded: %v", n.Metadata)
	}
	// A failing command: FAILED with its exit code; output truncated, tail kept.
	setCmd(`i=0; while [ $i -lt 3000 ]; do echo "line $i of noisy output"; i=$((i+1)); done; echo FINAL; exit 3`)
	d = h.ok("s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-1", "record": true})
	out = d["output"].(string)
	if d["result"] != "FAILED" || d["exit_code"] != 3.0 || d["output_truncated"] != true || !strings.HasSuffix(out, "FINAL\n") || len([]rune(out)) > 10_000 {
		t.Errorf("failing: result %v exit %v truncated %v len %d", d["result"], d["exit_code"], d["output_truncated"], len([]rune(out)))
	}
	// A timeout kills the command and its children, quickly. Without
	// record (default false, as in foundry-mcp) nothing is stored.
	setCmd(`sleep 30 & sleep 30; echo never`)
	start := time.Now()
	d = h.ok("s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-1", "timeout_seconds": 1})
	if d["timed_out"] != true || d["result"] != "FAILED" || d["exit_code"] != nil || d["recorded"] != false || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %s after %s", compact(d), time.Since(start))
	}
	if hist := h.node("verify-1-1").Metadata["verification_history"].([]any); len(hist) != 2 {
		t.Errorf("execute without record must not record (history %d)", len(hist))
	}
	// dry_run runs nothing.
	d = h.ok("s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-1", "dry_run": true})
	if d["executed"] != false || d["dry_run"] != true {
		t.Errorf("dry run: %s", compact(d))
	}
	// A manual verify node has nothing to run.
	h.fail("VALIDATION_ERROR", "s1", "verification", map[string]any{"action": "execute", "verify_id": "verify-1-2"})
}

// TestActionDeadlineExtendsTheRuntimeDeadline: an action's own Deadline
// replaces a shorter runtime deadline, never a longer one.
func TestActionDeadlineExtendsTheRuntimeDeadline(t *testing.T) {
	var got time.Duration
	h := func(ctx context.Context, r *mcptool.Request) mcptool.Result {
		dl, _ := ctx.Deadline()
		got = time.Until(dl)
		return mcptool.OK(map[string]any{})
	}
	tool := testTool(h)
	reg := &mcptool.Registry{}
	reg.Add(tool)
	for _, tc := range []struct{ action, runtime, want time.Duration }{
		{0, time.Second, time.Second},
		{time.Hour, time.Second, time.Hour},
		{time.Millisecond, time.Second, time.Second},
	} {
		tool.Actions[0].Deadline = tc.action
		reg.Dispatch(context.Background(), tool, map[string]any{"action": "do-it"}, mcptool.Session{}, mcptool.Runtime{Deadline: tc.runtime})
		if got > tc.want || got < tc.want-time.Second/2 {
			t.Errorf("action %s runtime %s: deadline in %s, want %s", tc.action, tc.runtime, got, tc.want)
		}
	}
}

// TestNextAndPrepareBatchAgreeOnFailedTasks: next and prepare-batch apply
// one rule (specs.Actionable). A failed task is not actionable for either;
// next's explanation names it with the call that retries it, and that call,
// run as given, makes both offer it again.
func TestNextAndPrepareBatchAgreeOnFailedTasks(t *testing.T) {
	h := newTaskHarness(t)
	agree := func(when string) map[string]any {
		t.Helper()
		next := h.ok("s1", "task", map[string]any{"action": "next"})
		batch := h.ok("s1", "task", map[string]any{"action": "prepare-batch", "max_tasks": 1})
		first := ""
		if ids := strs(batch["task_ids"]); len(ids) > 0 {
			first = ids[0]
		}
		if got, _ := next["task_id"].(string); got != first {
			t.Fatalf("%s: next offers %q, prepare-batch %q", when, got, first)
		}
		return next
	}
	agree("fresh spec")
	// task-1-1 fails (complete-batch failure); every other work leaf of
	// phase-1 is completed.
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	h.ok("s1", "task", map[string]any{"action": "complete-batch", "completions": []any{map[string]any{"task_id": "task-1-1", "success": false, "note": "tests fail"}}})
	agree("task-1-1 failed")
	for _, id := range []string{"task-1-2", "task-1-3", "task-1-4", "task-1-5"} {
		h.ok("s1", "task", map[string]any{"action": "start", "task_id": id})
		h.ok("s1", "task", map[string]any{"action": "complete", "task_id": id})
	}
	d := agree("only the failed task left in phase-1")
	if d["found"] != false {
		t.Fatalf("a failed task must not be offered: %s", compact(d))
	}
	failed, _ := d["failed"].([]any)
	if len(failed) != 1 {
		t.Fatalf("next must list the failed task: %s", compact(d))
	}
	f := failed[0].(map[string]any)
	if f["task_id"] != "task-1-1" || f["retry_count"] != 1.0 || f["failure_reason"] != "tests fail" || !strings.Contains(d["hint"].(string), "task-1-1") {
		t.Errorf("failed entry and hint: %s", compact(d))
	}
	// The retry call and next_call are the same call, runnable as given.
	nc := d["next_call"].(map[string]any)
	if compact(nc) != compact(f["retry"]) {
		t.Errorf("next_call %s is not the failed task's retry %s", compact(nc), compact(f["retry"]))
	}
	args := nc["args"].(map[string]any)
	h.ok("s2", nc["tool"].(string), args)
	if d := agree("after the retry call"); d["task_id"] != "task-1-1" {
		t.Errorf("after the retry call next offers %v", d["task_id"])
	}
	if n := h.node("task-1-1"); n.Status != specs.StatusPending {
		t.Errorf("retried task is %s", n.Status)
	}
}

// TestTransitionsOfAnotherSessionsTaskConflict: every transition of a task
// that another session started is CONFLICT naming started_by and
// started_at, unless force:true; the holder itself and force succeed.
func TestTransitionsOfAnotherSessionsTaskConflict(t *testing.T) {
	h := newTaskHarness(t)
	d := h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	startedAt := d["task"].(map[string]any)["metadata"].(map[string]any)["started_at"]
	h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-2"})
	conflict := func(args map[string]any) {
		t.Helper()
		d := h.fail("CONFLICT", "s2", "task", args)
		det := d["details"].(map[string]any)
		if det["started_by"] != holder("s1") || det["started_at"] != startedAt || det["task_id"] != "task-1-1" {
			t.Errorf("%v: details %s", args, compact(det))
		}
		if rec := d["recovery"].(map[string]any); rec["suggested_tool"] != "task" {
			t.Errorf("%v: recovery %s", args, compact(rec))
		}
	}
	for _, args := range []map[string]any{
		{"action": "start", "task_id": "task-1-1"},
		{"action": "complete", "task_id": "task-1-1", "completion_note": "not mine"},
		{"action": "block", "task_id": "task-1-1", "reason": "x"},
		{"action": "reopen", "task_id": "task-1-1", "reason": "x"},
		{"action": "update-status", "task_id": "task-1-1", "status": "completed"},
		{"action": "update-status", "task_id": "task-1-1", "status": "pending", "reason": "x"},
		{"action": "start-batch", "task_ids": []any{"task-1-1"}},
	} {
		conflict(args)
	}
	// complete-batch reports the item as CONFLICT and applies the rest.
	env := h.call("s2", "task", map[string]any{"action": "complete-batch", "completions": []any{
		map[string]any{"task_id": "task-1-1", "success": false, "note": "not mine"}}})
	if res := env["data"].(map[string]any)["results"].([]any)[0].(map[string]any); res["error_code"] != "CONFLICT" {
		t.Errorf("complete-batch item: %s", compact(res))
	}
	if n := h.node("task-1-1"); n.Status != specs.StatusInProgress || n.StartedBy() != holder("s1") {
		t.Fatalf("a refused transition changed the task: %s %v", n.Status, n.Metadata)
	}
	// A task blocked while s1 held it is still s1's.
	h.ok("s1", "task", map[string]any{"action": "block", "task_id": "task-1-2", "reason": "waiting"})
	h.fail("CONFLICT", "s2", "task", map[string]any{"action": "unblock", "task_id": "task-1-2"})
	h.ok("s2", "task", map[string]any{"action": "unblock", "task_id": "task-1-2", "force": true})
	if n := h.node("task-1-2"); n.Status != specs.StatusPending || n.StartedBy() != "" {
		t.Errorf("unblock must release the claim: %s %v", n.Status, n.Metadata)
	}
	// force: complete-batch and complete take over.
	env = h.call("s2", "task", map[string]any{"action": "complete-batch", "force": true, "completions": []any{
		map[string]any{"task_id": "task-1-1", "success": false, "note": "taken over"}}})
	if res := env["data"].(map[string]any)["results"].([]any)[0].(map[string]any); res["ok"] != true {
		t.Errorf("complete-batch with force: %s", compact(res))
	}
	h.ok("s2", "task", map[string]any{"action": "start", "task_id": "task-1-1"})
	conflictAgain := h.fail("CONFLICT", "s1", "task", map[string]any{"action": "complete", "task_id": "task-1-1"})
	if conflictAgain["details"].(map[string]any)["started_by"] != holder("s2") {
		t.Errorf("holder after restart: %s", compact(conflictAgain))
	}
	d = h.ok("s1", "task", map[string]any{"action": "start", "task_id": "task-1-1", "force": true})
	if d["task"].(map[string]any)["metadata"].(map[string]any)["started_by"] != holder("s1") {
		t.Errorf("start with force must take the task over: %s", compact(d))
	}
	h.ok("s2", "task", map[string]any{"action": "complete", "task_id": "task-1-1", "force": true})
	h.invariants()
}
