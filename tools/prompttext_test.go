package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
	"github.com/specd/specd/specs"
)

// promptSpec is a spec with two phases: phase-1 has task-1-1 (in progress),
// task-1-2 (blocked by a decision) and 30 more tasks; phase-2 waits on
// phase-1.
func promptSpec(t *testing.T) *specs.Spec {
	t.Helper()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := specs.NewSpec(specs.NewSpecInput{Name: "Test spec", Mission: "test"}, func() time.Time { at = at.Add(time.Minute); return at }, nil)
	if err != nil {
		t.Fatal(err)
	}
	p1 := promptMust[specs.PhaseResult](t)(specs.AddPhase(s, specs.PhaseInput{Title: "Build", Description: "the core"}))
	promptMust[specs.PhaseResult](t)(specs.AddPhase(s, specs.PhaseInput{Title: "Ship"}))
	first := promptMust[string](t)(specs.AddTask(s, p1.PhaseID, specs.TaskInput{Title: "Write the parser", Description: "parse specs",
		FilePath: "parse/parse.go", AcceptanceCriteria: []string{"round-trips foundry files"}}))
	second := promptMust[string](t)(specs.AddTask(s, p1.PhaseID, specs.TaskInput{Title: "Pick a format"}))
	for i := range 30 {
		promptMust[string](t)(specs.AddTask(s, p1.PhaseID, specs.TaskInput{Title: fmt.Sprintf("Chore %d", i)}))
	}
	promptMust[specs.TransitionResult](t)(specs.Start(s, first, specs.TransitionOptions{Agent: "a"}))
	promptMust[specs.TransitionResult](t)(specs.Block(s, second, specs.TransitionOptions{Reason: "waiting for the team", BlockerType: "decision"}))
	return s
}

func TestPromptTexts(t *testing.T) {
	s := promptSpec(t)
	id := s.Header.SpecID
	phase := func(id string) func(*specs.Spec) (string, error) {
		return func(s *specs.Spec) (string, error) { return completePhasePrompt(s, id) }
	}
	plain := func(f func(*specs.Spec) string) func(*specs.Spec) (string, error) {
		return func(s *specs.Spec) (string, error) { return f(s), nil }
	}
	cases := []struct {
		name    string
		build   func(*specs.Spec) (string, error)
		want    []string
		notWant []string
	}{
		{"start_feature", plain(startFeaturePrompt), []string{
			`Start working on the feature "Test spec" (spec ` + id + `)`,
			"Mission: test",
			`phase-1 "Build" [in_progress] 0/34 tasks`,
			`phase-2 "Ship" [pending]`,
			`First task: task-1-3 "Chore 0" (phase-1)`,
			`task(action="next", spec_id="` + id + `", claim=true)`,
			`lifecycle(action="activate", spec_id="` + id + `")`,
		}, nil},
		{"complete_phase", phase("phase-1"), []string{
			`Complete phase phase-1 "Build" of spec ` + id,
			"Goal: the core",
			`task-1-1 "Write the parser" [in_progress]`,
			`task-1-2 "Pick a format" [blocked]`,
			"- … and 7 more (task(action=\"list\", spec_id=\"" + id + "\") lists them)",
			`verify-1-1 "Run tests" [manual, pending]`,
			`verification(action="add", spec_id="` + id + `"`,
			`task(action="progress", spec_id="` + id + `", node_id="phase-1")`,
		}, []string{"Chore 29"}},
		{"complete_phase waiting", phase("phase-2"), []string{
			"waits on unfinished prerequisites: phase-1",
			"Every task of the phase is completed.",
		}, nil},
		{"review_spec", plain(reviewSpecPrompt), []string{
			"Review the spec " + id,
			"Blocked:\n- task-1-2 \"Pick a format\": waiting for the team",
			`spec(action="validate", spec_id="` + id + `")`,
		}, []string{"Failed:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, err := c.build(s)
			if err != nil {
				t.Fatal(err)
			}
			again, err := c.build(s)
			if err != nil {
				t.Fatal(err)
			}
			if text != again {
				t.Fatalf("not deterministic:\n%s\n---\n%s", text, again)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(text, w) {
					t.Errorf("unexpected %q in:\n%s", w, text)
				}
			}
		})
	}
}

func TestCompletePhasePromptUnknownPhase(t *testing.T) {
	s := promptSpec(t)
	for _, id := range []string{"phase-9", "task-1-1", "spec-root"} {
		_, err := completePhasePrompt(s, id)
		e := core.AsError(err)
		if e == nil || e.Code != errcode.PhaseNotFound || e.Details["field"] != "phase_id" {
			t.Fatalf("%s: %v", id, err)
		}
		if id == "phase-9" && strings.Join(e.Matches(), ",") != "phase-1,phase-2" {
			t.Fatalf("%s: fuzzy matches %v", id, e.Matches())
		}
	}
}

func promptMust[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return v
	}
}
