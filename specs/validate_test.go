package specs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func codes(r ValidationReport) map[string]int {
	out := map[string]int{}
	for _, d := range r.Diagnostics {
		out[d.Code]++
	}
	return out
}

func TestValidateBasicFoundrySpec(t *testing.T) {
	d := loadFixture(t, "foundry_basic.json")
	r := Validate(d)
	if !r.IsValid || r.ErrorCount != 0 || r.WarningCount != 0 {
		t.Fatalf("%+v", r)
	}
	if codes(r)["MISSING_ACCEPTANCE_CRITERIA"] != 1 {
		t.Fatal(codes(r))
	}
	fr := Fix(d, FixOptions{Clock: testClock()})
	if len(fr.Applied) != 0 {
		t.Fatalf("a valid spec needs no fixes: %+v", fr.Applied)
	}
}

func TestValidateQuirks(t *testing.T) {
	d := loadFixture(t, "foundry_quirks.json")
	before, _ := json.Marshal(d)
	r := Validate(d)
	after, _ := json.Marshal(d)
	if string(before) != string(after) {
		t.Fatal("Validate modified the document")
	}
	if r.IsValid {
		t.Fatal("quirks must be invalid")
	}
	want := []string{"INVALID_TIMESTAMP", "INVALID_METADATA_TYPE", "INVALID_FIELD_TYPE", "INVALID_STATUS", "INVALID_NODE_TYPE",
		"MISSING_NODE_FIELD", "EMPTY_TITLE", "DUPLICATE_CHILD", "MISSING_CHILD_NODE", "PARENT_CHILD_MISMATCH", "ORPHANED_NODES",
		"BIDIRECTIONAL_INCONSISTENCY", "SELF_DEPENDENCY", "MISSING_DEPENDENCY_TARGET", "INVALID_TASK_CATEGORY", "INVALID_ESTIMATE",
		"LEGACY_METADATA_FIELD", "MISSING_FILE_PATH", "INVALID_VERIFICATION_TYPE", "MISSING_VERIFICATION_TYPE",
		"TOTAL_TASKS_MISMATCH", "COMPLETED_TASKS_MISMATCH", "SPEC_ROLLUP_MISMATCH", "INVALID_JOURNAL_ENTRY", "MISSING_MISSION"}
	got := codes(r)
	for _, c := range want {
		if got[c] == 0 {
			t.Errorf("missing diagnostic %s", c)
		}
	}
	for _, diag := range r.Diagnostics {
		if diag.AutoFixable != (diag.FixID != "") || diag.Category == "" || diag.Location == "" || diag.Message == "" {
			t.Errorf("malformed diagnostic %+v", diag)
		}
		if diag.Code == "INVALID_STATUS" && diag.NodeID == "task-1-1" && !strings.Contains(diag.Message, "did you mean completed") {
			t.Errorf("did-you-mean: %s", diag.Message)
		}
	}
}

func TestFixQuirks(t *testing.T) {
	d := loadFixture(t, "foundry_quirks.json")
	orig, _ := json.Marshal(d)
	fr := Fix(d, FixOptions{Clock: testClock()})
	if b, _ := json.Marshal(d); string(b) != string(orig) {
		t.Fatal("Fix modified its input")
	}
	// No error is left: the orphan whose id names no existing parent
	// joins the first open phase (foundry's own fix keeps it under
	// spec-root, where next never looks).
	for _, sk := range fr.Skipped {
		if sk.Severity == SeverityError {
			t.Errorf("unexpected remaining error %+v", sk)
		}
	}
	f := fr.Document
	h := f.Hierarchy
	checks := []struct {
		what string
		ok   bool
	}{
		{"status synonyms", h["task-1-1"].Status == StatusCompleted && h["task-1-3"].Status == StatusPending && h["task-2-1"].Status == StatusCompleted},
		{"type synonyms", h["task-1-1"].Type == TypeTask && h["task-1-2-1"].Type == TypeSubtask && h["verify-1-1"].Type == TypeVerify},
		{"legacy verification auto", h["verify-1-1"].VerificationType() == "run-tests"},
		{"legacy verification test", h["verify-1-2"].VerificationType() == "run-tests"},
		{"missing verification type", h["verify-2-1"].VerificationType() == "manual"},
		{"details → description", h["task-1-1"].Description() == "legacy details field" && h["task-1-1"].Metadata["details"] == nil},
		{"category synonym", h["task-1-1"].TaskCategory() == "implementation"},
		{"estimate string", h["task-1-1"].Metadata["estimated_hours"] == 1.5},
		{"no invented file_path", h["task-1-1"].FilePath() == "" && h["task-1-3"].FilePath() == ""},
		{"group counts", h["group-1-1"].TotalTasks == 1 && reflect.DeepEqual(h["group-1-1"].Children.Slice(), []string{"task-1-3"})},
		{"subtask parent", h["task-1-2-1"].Parent == "task-1-2" && !containsString(h["phase-1"].Children.Slice(), "task-1-2-1")},
		{"listed orphan", containsString(h["phase-2"].Children.Slice(), "task-2-2")},
		{"inferred orphan", h["task-1-11"].Parent == "phase-1" && containsString(h["phase-1"].Children.Slice(), "task-1-11")},
		{"missing child removed", !containsString(h[RootID].Children.Slice(), "phase-missing")},
		{"reverse edges", containsString(h["task-1-1"].Dependencies.Blocks, "task-1-2") && containsString(h["verify-1-2"].Dependencies.BlockedBy, "verify-1-1")},
		{"legacy dependency list", containsString(h["task-1-2"].Dependencies.Blocks, "task-1-10") && containsString(h["task-1-10"].Dependencies.BlockedBy, "task-1-2")},
		{"self edge removed", !containsString(h["task-1-3"].Dependencies.BlockedBy, "task-1-3")},
		{"dangling removed", len(h["task-2-1"].Dependencies.BlockedBy) == 0 && len(h["task-1-2"].Dependencies.Depends) == 0},
		{"timestamp", f.Generated == "2025-10-30T08:47:12Z"},
		{"title from id", h["verify-1-2"].Title == "verify-1-2"},
		{"spec list", reflect.DeepEqual(f.Metadata["assumptions"], []any{"not a list"})},
		{"unknown keys kept", string(f.Extra["x_custom_field"]) == `{"kept":true}`},
		{"orphan moved into the open phase", h["task-3-1"].Parent == "phase-2" && containsString(h["phase-2"].Children.Slice(), "task-3-1") && !containsString(h[RootID].Children.Slice(), "task-3-1")},
		{"counts", h[RootID].TotalTasks == 11 && f.Status == StatusInProgress},
	}
	t.Log(h[RootID].TotalTasks, f.Status)
	for _, c := range checks {
		if !c.ok {
			t.Errorf("fix: %s", c.what)
		}
	}
	// Fix ids of applied fixes come from Validate's diagnostics.
	ids := map[string]bool{}
	for _, diag := range Validate(d).Diagnostics {
		ids[diag.FixID] = true
	}
	matched := 0
	for _, a := range fr.Applied {
		if ids[a.FixID] {
			matched++
		}
	}
	if matched < len(fr.Applied)/2 {
		t.Fatalf("only %d of %d applied fixes match diagnostics", matched, len(fr.Applied))
	}
	// Idempotent.
	if again := Fix(f, FixOptions{Clock: testClock()}); len(again.Applied) != 0 {
		t.Fatalf("second Fix applied %+v", again.Applied)
	}
	// The result is valid and keeps the invariants.
	if r := Validate(f); !r.IsValid {
		t.Fatalf("%+v", r.Diagnostics)
	}
	mustNoViolations(t, FromDocument(*f), "fixed quirks")
	// Natural order in the written hierarchy: task-1-2 before task-1-10.
	b, _ := json.Marshal(f)
	if strings.Index(string(b), `"task-1-2":`) > strings.Index(string(b), `"task-1-10":`) {
		t.Fatal("hierarchy not in natural order")
	}
}

func TestFixOnly(t *testing.T) {
	d := loadFixture(t, "foundry_quirks.json")
	fr := Fix(d, FixOptions{Only: []string{"INVALID_STATUS"}})
	for _, a := range fr.Applied {
		if a.Code != "INVALID_STATUS" {
			t.Fatalf("applied %s", a.Code)
		}
	}
	if len(fr.Applied) != 8 {
		t.Fatalf("applied %d", len(fr.Applied))
	}
	var reasons []string
	for _, s := range fr.Skipped {
		if s.Reason == "not selected by Only" {
			reasons = append(reasons, s.Code)
		}
	}
	if len(reasons) == 0 {
		t.Fatal("skipped fixes must say they were not selected")
	}
}

func TestFixMissingRootAndCycle(t *testing.T) {
	fr := Fix(loadFixture(t, "foundry_noroot.json"), FixOptions{Clock: testClock()})
	if !fr.Report.IsValid {
		t.Fatalf("%+v", fr.Report.Diagnostics)
	}
	s := FromDocument(*fr.Document)
	mustNoViolations(t, s, "noroot")
	if s.Header.TotalTasks != 1 || s.Root().Children.At(0) != "phase-1" {
		t.Fatal(s.Header)
	}
	fr = Fix(loadFixture(t, "foundry_cycle.json"), FixOptions{})
	if fr.Report.IsValid || len(fr.Skipped) != 1 || fr.Skipped[0].Code != "CYCLE_DETECTED" {
		t.Fatalf("%+v", fr.Skipped)
	}
}

func TestValidateEdgeCases(t *testing.T) {
	r := Validate(nil)
	if r.IsValid {
		t.Fatal("nil document")
	}
	fr := Fix(nil, FixOptions{Clock: testClock()})
	if fr.Document == nil {
		t.Fatal("Fix(nil)")
	}
	d := &Document{SpecID: "x-2025-01-01-001", Title: "x", Generated: "2025-01-01T00:00:00Z", LastUpdated: "2025-01-01T00:00:00Z",
		Metadata: map[string]any{"mission": "m"}, Hierarchy: map[string]*Node{RootID: nil, "phase-1": nil}}
	r = Validate(d)
	if codes(r)["INVALID_NODE"] != 2 {
		t.Fatal(codes(r))
	}
	fr = Fix(d, FixOptions{Clock: testClock()})
	if !fr.Report.IsValid {
		t.Fatalf("%+v", fr.Report.Diagnostics)
	}
	// Size caps.
	s := newTestSpec(t)
	must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "p"}))
	parent := "phase-1"
	for i := 0; i < 11; i++ {
		typ := TypeSubtask
		if i == 0 {
			typ = TypeTask
		}
		parent = must[string](t)(AddTask(s, parent, TaskInput{Title: "deep", Type: typ}))
	}
	doc := s.Document()
	doc.Journal = make([]JournalEntry, MaxJournal+1)
	for i := range doc.Journal {
		doc.Journal[i].EntryType = "note"
	}
	got := codes(Validate(&doc))
	if got["NESTING_TOO_DEEP"] != 1 || got["JOURNAL_TOO_LARGE"] != 1 {
		t.Fatal(got)
	}
}

func TestMapSynonyms(t *testing.T) {
	for in, want := range map[string]Status{"todo": StatusPending, "Done": StatusCompleted, "in-progress": StatusInProgress,
		"In Progress": StatusInProgress, "inprogress": StatusInProgress, "complete": StatusCompleted, "on hold": StatusBlocked} {
		if got, ok := MapStatus(in); !ok || got != want {
			t.Errorf("MapStatus(%q)=%q", in, got)
		}
	}
	if _, ok := MapStatus("banana"); ok {
		t.Error("banana")
	}
	for in, want := range map[string]NodeType{"Task": TypeTask, "sub-task": TypeSubtask, "verification": TypeVerify, "GROUP": TypeGroup} {
		if got, ok := MapNodeType(in); !ok || got != want {
			t.Errorf("MapNodeType(%q)=%q", in, got)
		}
	}
}

// TestDidYouMean: suggestions for mistyped statuses, as validate's
// INVALID_STATUS fix uses them. Every row the old Levenshtein copy answered
// keeps its answer; swapped letters now count once ("pnedign").
func TestDidYouMean(t *testing.T) {
	var statuses []string
	for _, s := range Statuses() {
		statuses = append(statuses, string(s))
	}
	for _, tc := range []struct {
		in      string
		options []string
		want    string
	}{
		{"complted", []string{"pending", "completed"}, "completed"},
		{"zzzzzz", []string{"pending"}, ""},
		{"pendng", statuses, "pending"},
		{"In Progres", statuses, "in_progress"},
		{"in-progess", statuses, "in_progress"},
		{"blokced", statuses, "blocked"},
		{"complete_", statuses, "completed"},
		{"pnedign", statuses, "pending"}, // two adjacent swaps: Levenshtein 4, OSA 2
		{"blcokde", statuses, "blocked"}, // likewise
		{"archive", statuses, "archived"},
		{"xyz", statuses, ""},
		{"", statuses, ""},
		{strings.Repeat("pending", 10), statuses, ""},
	} {
		if got := didYouMean(tc.in, tc.options); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFixturesAreFoundryShaped(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	noErr(t, err)
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		n++
		d := loadFixture(t, e.Name())
		if d.SpecID == "" || d.Hierarchy == nil {
			t.Errorf("%s: not a spec", e.Name())
		}
	}
	if n < 4 {
		t.Fatal("fixtures missing")
	}
}

// TestFixFoundryAutofixed: a spec written by foundry's own fix (subtasks and
// a verify node reset to spec-root, one subtask still listed by its old
// parent too) is put back where the ids say, and the fixed spec holds every
// invariant.
func TestFixFoundryAutofixed(t *testing.T) {
	fr := Fix(loadFixture(t, "foundry_autofixed.json"), FixOptions{Clock: testClock()})
	if !fr.Report.IsValid {
		t.Fatalf("still invalid: %+v", fr.Skipped)
	}
	h := fr.Document.Hierarchy
	for id, parent := range map[string]string{"task-3-1-1": "task-3-1", "task-3-1-2": "task-3-1", "verify-3-1": "phase-3"} {
		if h[id].Parent != parent {
			t.Errorf("%s under %s, want %s", id, h[id].Parent, parent)
		}
	}
	if got := strings.Join(h["task-3-1"].Children.Slice(), ","); got != "task-3-1-1,task-3-1-2" {
		t.Errorf("task-3-1 children %s", got)
	}
	if got := strings.Join(h["phase-3"].Children.Slice(), ","); got != "task-3-1,task-3-2,verify-3-1" {
		t.Errorf("phase-3 children %s", got)
	}
	if v := CheckInvariants(FromDocument(*fr.Document)); len(v) > 0 {
		t.Fatalf("invariants: %v", v)
	}
}

// TestValidateContextStops: under a done context ValidateContext answers
// the context's error; under a live one it reports what Validate does.
func TestValidateContextStops(t *testing.T) {
	d := loadFixture(t, "foundry_basic.json")
	r, err := ValidateContext(context.Background(), d)
	if err != nil || !reflect.DeepEqual(r, Validate(d)) {
		t.Fatalf("%+v, %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ValidateContext(ctx, d); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v", err)
	}
}
