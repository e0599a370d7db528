package specs

import (
	"reflect"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestTransitionTable(t *testing.T) {
	type step struct {
		action string
		opts   TransitionOptions
		code   string // expected error code, "" = success
		status Status // status after a success
	}
	run := func(s *Spec, id string, st step) (TransitionResult, error) {
		switch st.action {
		case "start":
			return Start(s, id, st.opts)
		case "complete":
			return Complete(s, id, st.opts)
		case "block":
			return Block(s, id, st.opts)
		case "unblock":
			return Unblock(s, id, st.opts)
		case "reopen":
			return Reopen(s, id, st.opts)
		case "fail":
			return Fail(s, id, st.opts)
		}
		panic(st.action)
	}
	why := TransitionOptions{Reason: "because"}
	cases := map[string][]step{
		"happy path":          {{"start", TransitionOptions{Agent: "a"}, "", StatusInProgress}, {"complete", TransitionOptions{}, "", StatusCompleted}},
		"complete pending":    {{"complete", TransitionOptions{}, "", StatusCompleted}},
		"strict pending":      {{"complete", TransitionOptions{Strict: true}, errcode.InvalidTransition, ""}},
		"complete twice":      {{"complete", TransitionOptions{}, "", StatusCompleted}, {"complete", TransitionOptions{}, "", StatusCompleted}},
		"block unblock":       {{"block", why, "", StatusBlocked}, {"start", TransitionOptions{}, errcode.InvalidTransition, ""}, {"complete", TransitionOptions{}, errcode.InvalidTransition, ""}, {"unblock", TransitionOptions{Resolution: "fixed"}, "", StatusPending}},
		"block needs reason":  {{"block", TransitionOptions{}, errcode.MissingRequired, ""}},
		"bad blocker type":    {{"block", TransitionOptions{Reason: "x", BlockerType: "weather"}, errcode.InvalidFormat, ""}},
		"unblock pending":     {{"unblock", TransitionOptions{}, errcode.InvalidTransition, ""}},
		"reopen":              {{"complete", TransitionOptions{}, "", StatusCompleted}, {"reopen", TransitionOptions{}, errcode.MissingRequired, ""}, {"reopen", why, "", StatusPending}},
		"reopen pending":      {{"reopen", why, errcode.InvalidTransition, ""}},
		"fail retry":          {{"start", TransitionOptions{}, "", StatusInProgress}, {"fail", why, "", StatusFailed}, {"start", TransitionOptions{}, "", StatusInProgress}, {"fail", why, "", StatusFailed}, {"reopen", why, "", StatusPending}},
		"fail pending":        {{"fail", why, errcode.InvalidTransition, ""}},
		"start completed":     {{"complete", TransitionOptions{}, "", StatusCompleted}, {"start", TransitionOptions{}, errcode.InvalidTransition, ""}},
		"session conflict":    {{"start", TransitionOptions{Agent: "a"}, "", StatusInProgress}, {"start", TransitionOptions{Agent: "b"}, errcode.Conflict, ""}, {"start", TransitionOptions{Agent: "a"}, "", StatusInProgress}},
		"block in progress":   {{"start", TransitionOptions{}, "", StatusInProgress}, {"block", why, "", StatusBlocked}},
		"reopen in progress":  {{"start", TransitionOptions{}, "", StatusInProgress}, {"reopen", why, "", StatusPending}},
		"complete after fail": {{"start", TransitionOptions{}, "", StatusInProgress}, {"fail", why, "", StatusFailed}, {"complete", TransitionOptions{}, errcode.InvalidTransition, ""}},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			s := twoPhases(t)
			for i, st := range steps {
				before := docJSON(t, s)
				res, err := run(s, "task-1-1", st)
				if st.code != "" {
					e := mustCode(t, err, st.code)
					if st.code == errcode.InvalidTransition {
						if _, ok := e.Details["allowed"].([]string); !ok {
							t.Fatalf("step %d: details.allowed missing: %v", i, e.Details)
						}
					}
					if docJSON(t, s) != before {
						t.Fatalf("step %d: failed transition changed the spec", i)
					}
					continue
				}
				noErr(t, err)
				if got := s.Node("task-1-1").Status; got != st.status {
					t.Fatalf("step %d %s: status %s want %s", i, st.action, got, st.status)
				}
				if res.Entry == nil && len(res.Warnings) == 0 {
					t.Fatalf("step %d: no entry and no warning", i)
				}
				if res.Entry != nil && (res.Entry.TaskID != "task-1-1" || res.Entry.Timestamp == "" || res.Entry.EntryType == "") {
					t.Fatalf("step %d: entry %+v", i, res.Entry)
				}
				mustNoViolations(t, s, name)
			}
		})
	}
}

func TestTransitionDetails(t *testing.T) {
	s := twoPhases(t)
	// Blocked by dependencies.
	_, err := Start(s, "task-2-1", TransitionOptions{})
	e := mustCode(t, err, errcode.TaskBlocked)
	if !reflect.DeepEqual(e.Details["blocked_by"], []string{"phase-1"}) {
		t.Fatal(e.Details)
	}
	_, err = Complete(s, "task-2-1", TransitionOptions{})
	mustCode(t, err, errcode.TaskBlocked)
	res, err := Complete(s, "task-2-1", TransitionOptions{Force: true})
	noErr(t, err)
	if len(res.Warnings) != 1 || res.Entry.Metadata["forced"] != true {
		t.Fatalf("%+v", res)
	}
	// Parents cannot transition.
	_, err = Start(s, "phase-1", TransitionOptions{})
	e = mustCode(t, err, errcode.InvalidTransition)
	if len(e.Details["allowed"].([]string)) != 0 {
		t.Fatal(e.Details)
	}
	_, err = Complete(s, RootID, TransitionOptions{})
	mustCode(t, err, errcode.InvalidTransition)
	_, err = Start(s, "nope", TransitionOptions{})
	mustCode(t, err, errcode.TaskNotFound)
	// Start/complete timing and fields.
	res, err = Start(s, "task-1-1", TransitionOptions{Agent: "sess-1"})
	noErr(t, err)
	n := s.Node("task-1-1")
	if n.StartedBy() != "sess-1" || n.MetaString("started_at") == "" || res.Entry.Author != "sess-1" {
		t.Fatal(n.Metadata)
	}
	_, err = Start(s, "task-1-1", TransitionOptions{Agent: "sess-2"})
	e = mustCode(t, err, errcode.Conflict)
	if e.Details["started_by"] != "sess-1" || e.Details["started_at"] == "" {
		t.Fatal(e.Details)
	}
	res, err = Start(s, "task-1-1", TransitionOptions{Agent: "sess-1"})
	noErr(t, err)
	if res.Entry != nil || len(res.Warnings) != 1 {
		t.Fatal("same session start must warn")
	}
	res, err = Complete(s, "task-1-1", TransitionOptions{Note: "done well", Author: "bob"})
	noErr(t, err)
	n = s.Node("task-1-1")
	// The test clock moves one minute per call: started, then completed two ticks later.
	if h, _ := n.MetaFloat("actual_hours"); h <= 0 || h > 1 {
		t.Fatalf("actual_hours %v", n.Metadata["actual_hours"])
	}
	if !n.NeedsJournaling() || n.MetaString("completed_at") == "" || res.Entry.Content != "done well" || res.Entry.Author != "bob" {
		t.Fatal(n.Metadata)
	}
	if got := Unjournaled(s); !reflect.DeepEqual(got, []string{"task-1-1", "task-2-1"}) {
		t.Fatal(got)
	}
	noErr(t, MarkJournaled(s, "task-1-1"))
	if s.Node("task-1-1").NeedsJournaling() || s.Node("task-1-1").MetaString("journaled_at") == "" {
		t.Fatal("journaled")
	}
	// Explicit actual hours; reopen clears completion fields.
	_, err = Reopen(s, "task-1-1", TransitionOptions{Reason: "regression"})
	noErr(t, err)
	n = s.Node("task-1-1")
	for _, k := range []string{"completed_at", "needs_journaling", "journaled_at", "started_at", "started_by"} {
		if _, ok := n.Metadata[k]; ok {
			t.Fatalf("%s not cleared", k)
		}
	}
	_, err = Complete(s, "task-1-1", TransitionOptions{ActualHours: f64(2.345)})
	noErr(t, err)
	if h, _ := s.Node("task-1-1").MetaFloat("actual_hours"); h != 2.35 && h != 2.34 {
		t.Fatal(h)
	}
	_, err = Complete(s, "task-1-2", TransitionOptions{ActualHours: f64(-1)})
	mustCode(t, err, errcode.InvalidFormat)
	// Block metadata and unblock history.
	_, err = Block(s, "task-1-2", TransitionOptions{Reason: "waiting for API key", BlockerType: "resource", Ticket: "OPS-1"})
	noErr(t, err)
	n = s.Node("task-1-2")
	if n.MetaString("blocker_type") != "resource" || n.MetaString("blocker_ticket") != "OPS-1" || n.MetaString("blocked_at") == "" {
		t.Fatal(n.Metadata)
	}
	_, err = Unblock(s, "task-1-2", TransitionOptions{Resolution: "key arrived"})
	noErr(t, err)
	n = s.Node("task-1-2")
	rb, _ := n.Metadata["resolved_blockers"].([]any)
	if len(rb) != 1 || rb[0].(map[string]any)["resolution"] != "key arrived" || n.MetaString("blocker_type") != "" {
		t.Fatal(n.Metadata)
	}
	// Fail counts retries.
	_, err = Start(s, "task-1-2", TransitionOptions{})
	noErr(t, err)
	_, err = Fail(s, "task-1-2", TransitionOptions{Reason: "flaky"})
	noErr(t, err)
	if c, _ := s.Node("task-1-2").MetaInt("retry_count"); c != 1 {
		t.Fatal(c)
	}
	mustNoViolations(t, s, "details")
}

func TestUpdateStatusDispatch(t *testing.T) {
	s := twoPhases(t)
	for _, st := range []struct {
		to   Status
		opts TransitionOptions
		code string
	}{
		{StatusInProgress, TransitionOptions{}, ""},
		{StatusBlocked, TransitionOptions{Reason: "x"}, ""},
		{StatusPending, TransitionOptions{}, ""}, // unblock
		{StatusCompleted, TransitionOptions{}, ""},
		{StatusPending, TransitionOptions{}, errcode.MissingRequired}, // reopen needs reason
		{StatusPending, TransitionOptions{Reason: "again"}, ""},
		{StatusFailed, TransitionOptions{}, errcode.InvalidTransition},
		{StatusArchived, TransitionOptions{}, errcode.InvalidTransition},
		{"done", TransitionOptions{}, errcode.InvalidFormat},
	} {
		_, err := UpdateStatus(s, "task-1-1", st.to, st.opts)
		if core.CodeOf(err) != st.code {
			t.Fatalf("→%s: %v want %q", st.to, err, st.code)
		}
		if st.code == "" && s.Node("task-1-1").Status != st.to {
			t.Fatalf("→%s: got %s", st.to, s.Node("task-1-1").Status)
		}
	}
	mustNoViolations(t, s, "update status")
}

func TestRollupsAndPhaseCompletion(t *testing.T) {
	s := twoPhases(t)
	for _, id := range []string{"task-1-1", "task-1-2"} {
		_, err := Complete(s, id, TransitionOptions{})
		noErr(t, err)
	}
	p := s.Node("phase-1")
	if p.Status != StatusInProgress || p.CompletedTasks != 2 || p.TotalTasks != 4 || s.Header.ProgressPercentage != 28 {
		t.Fatalf("%+v %d", p, s.Header.ProgressPercentage)
	}
	if s.Header.CurrentPhase != "phase-1" {
		t.Fatal(s.Header.CurrentPhase)
	}
	for _, id := range []string{"task-1-3", "verify-1-1"} {
		_, err := Complete(s, id, TransitionOptions{})
		noErr(t, err)
	}
	p = s.Node("phase-1")
	if p.Status != StatusCompleted || p.MetaString("completed_at") == "" || !p.NeedsJournaling() {
		t.Fatalf("phase completion: %+v", p)
	}
	if s.Header.CurrentPhase != "phase-2" || s.Header.Status != StatusInProgress || s.Header.ProgressPercentage != 57 {
		t.Fatalf("%+v", s.Header)
	}
	_, err := Reopen(s, "task-1-1", TransitionOptions{Reason: "bug"})
	noErr(t, err)
	if p := s.Node("phase-1"); p.Status != StatusInProgress || p.MetaString("completed_at") != "" {
		t.Fatalf("phase un-completion: %+v", p)
	}
	// Full recompute agrees with the incremental one.
	before := docJSON(t, s)
	RecomputeAll(s)
	if docJSON(t, s) != before {
		t.Fatal("RecomputeAll disagrees with incremental rollups")
	}
	mustNoViolations(t, s, "rollups")
}

// TestTransitionsRespectTheHolder: every transition of a task another
// session holds is CONFLICT (with started_by, started_at, task_id) and
// changes nothing; TakeOver allows it; callers without a session are not
// refused.
func TestTransitionsRespectTheHolder(t *testing.T) {
	tests := []struct {
		name string
		do   func(s *Spec, o TransitionOptions) (TransitionResult, error)
	}{
		{"start", func(s *Spec, o TransitionOptions) (TransitionResult, error) { return Start(s, "task-1-1", o) }},
		{"complete", func(s *Spec, o TransitionOptions) (TransitionResult, error) { return Complete(s, "task-1-1", o) }},
		{"block", func(s *Spec, o TransitionOptions) (TransitionResult, error) {
			o.Reason = "x"
			return Block(s, "task-1-1", o)
		}},
		{"reopen", func(s *Spec, o TransitionOptions) (TransitionResult, error) {
			o.Reason = "x"
			return Reopen(s, "task-1-1", o)
		}},
		{"fail", func(s *Spec, o TransitionOptions) (TransitionResult, error) { return Fail(s, "task-1-1", o) }},
		{"update-status", func(s *Spec, o TransitionOptions) (TransitionResult, error) {
			return UpdateStatus(s, "task-1-1", StatusCompleted, o)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := twoPhases(t)
			_, err := Start(s, "task-1-1", TransitionOptions{Agent: "a"})
			noErr(t, err)
			before := docJSON(t, s)
			_, err = tt.do(s, TransitionOptions{Agent: "b"})
			e := mustCode(t, err, errcode.Conflict)
			if e.Details["started_by"] != "a" || e.Details["started_at"] == "" || e.Details["task_id"] != "task-1-1" {
				t.Fatalf("details %v", e.Details)
			}
			if docJSON(t, s) != before {
				t.Fatal("a refused transition changed the spec")
			}
			if _, err := tt.do(s, TransitionOptions{Agent: "b", TakeOver: true}); err != nil {
				t.Fatalf("with TakeOver: %v", err)
			}
			if tt.name == "start" && s.Node("task-1-1").StartedBy() != "b" {
				t.Fatalf("start with TakeOver must move the claim, started_by %q", s.Node("task-1-1").StartedBy())
			}
		})
	}
	// Blocked while held: unblock by another session is CONFLICT; no
	// session (the domain's own callers) is not refused.
	s := twoPhases(t)
	_, err := Start(s, "task-1-1", TransitionOptions{Agent: "a"})
	noErr(t, err)
	_, err = Block(s, "task-1-1", TransitionOptions{Agent: "a", Reason: "x"})
	noErr(t, err)
	_, err = Unblock(s, "task-1-1", TransitionOptions{Agent: "b"})
	mustCode(t, err, errcode.Conflict)
	_, err = Unblock(s, "task-1-1", TransitionOptions{})
	noErr(t, err)
	if n := s.Node("task-1-1"); n.Status != StatusPending || n.StartedBy() != "" {
		t.Fatalf("unblock must release the claim: %s %q", n.Status, n.StartedBy())
	}
}

// TestUpdateStatusNote: foundry's note is the journal content of start and
// complete and the default reason elsewhere; blocked without a reason or a
// note is blocked with the reason "blocked"; reopen still needs one.
func TestUpdateStatusNote(t *testing.T) {
	s := twoPhases(t)
	for _, st := range []struct {
		to        Status
		opts      TransitionOptions
		code      string
		content   string // the journal entry's content
		blockerOf string // blocker_description after the step
	}{
		{StatusInProgress, TransitionOptions{Note: "picking it up"}, "", "picking it up", ""},
		{StatusBlocked, TransitionOptions{}, "", DefaultBlockedReason, DefaultBlockedReason},
		{StatusPending, TransitionOptions{Note: "unblocked by infra"}, "", "", ""},
		{StatusBlocked, TransitionOptions{Note: "waiting on review"}, "", "waiting on review", "waiting on review"},
		{StatusPending, TransitionOptions{}, "", "", ""},
		{StatusBlocked, TransitionOptions{Reason: "api down", Note: "ignored for the reason"}, "", "api down", "api down"},
		{StatusPending, TransitionOptions{}, "", "", ""},
		{StatusCompleted, TransitionOptions{Note: "shipped"}, "", "shipped", ""},
		{StatusPending, TransitionOptions{}, errcode.MissingRequired, "", ""},
		{StatusPending, TransitionOptions{Note: "redo"}, "", "redo", ""},
	} {
		res, err := UpdateStatus(s, "task-1-1", st.to, st.opts)
		if core.CodeOf(err) != st.code {
			t.Fatalf("→%s %+v: %v want %q", st.to, st.opts, err, st.code)
		}
		if st.code != "" {
			continue
		}
		if st.content != "" && (res.Entry == nil || res.Entry.Content != st.content) {
			t.Errorf("→%s %+v: entry %+v, want content %q", st.to, st.opts, res.Entry, st.content)
		}
		if st.blockerOf != "" && s.Node("task-1-1").MetaString("blocker_description") != st.blockerOf {
			t.Errorf("→%s: blocker_description %q, want %q", st.to, s.Node("task-1-1").MetaString("blocker_description"), st.blockerOf)
		}
	}
	mustNoViolations(t, s, "update status with notes")
}
