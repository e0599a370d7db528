package tools

import (
	"fmt"
	"strings"

	"github.com/specd/specd/specs"
)

// The texts of the MCP prompts start_feature, complete_phase and
// review_spec (prompts.go publishes them). Each is built from the spec alone (no clock, no ids, no
// server state), so the same spec version always gives the same text, and
// names the tool calls to make with the spec's own ids. Lists are cut at
// promptListMax items with a line saying how many more there are and which
// call pages through them, so a 10,000-task spec still gives a short text.

// promptListMax bounds every list a prompt text shows.
const promptListMax = 25

// startFeaturePrompt is the start_feature text: what the spec is for, where
// it stands, the task to take first, and the claim → work → journal →
// complete loop.
func startFeaturePrompt(s *specs.Spec) string {
	var b strings.Builder
	h := s.Header
	fmt.Fprintf(&b, "Start working on the feature %q (spec %s).\n", h.Title, h.SpecID)
	writeSpecIntro(&b, s)
	b.WriteString("\nPhases:\n")
	writePhases(&b, s)
	b.WriteString("\n")
	next := specs.NextTask(s)
	if next.Found {
		fmt.Fprintf(&b, "First task: %s %q (%s).\n", next.TaskID, next.Node.Title, next.PhaseID)
		writeTaskDetail(&b, next.Node)
	} else {
		fmt.Fprintf(&b, "No task can be started now: %s.\n", next.Hint)
	}
	if h.Lifecycle == specs.LifecyclePending {
		fmt.Fprintf(&b, "\nThe spec is still pending: move it to active first with lifecycle(action=\"activate\", spec_id=%q).\n", h.SpecID)
	}
	fmt.Fprintf(&b, `
How to work:
1. Claim the next task: task(action="next", spec_id=%[1]q, claim=true) starts it atomically, so no other agent takes it.
2. Do the work the task describes; meet its acceptance criteria.
3. Record decisions and deviations as you go: journal(action="add", spec_id=%[1]q, task_id=<task>, entry_type="decision", title=..., content=...).
4. Complete it: task(action="complete", spec_id=%[1]q, task_id=<task>, completion_note=...).
5. Repeat from 1 until task next answers found=false; then use the complete_phase prompt for the phase's checks.
`, h.SpecID)
	return b.String()
}

// completePhasePrompt is the complete_phase text for phaseID: the phase's
// unfinished work and verify steps, and the calls that close the phase.
// Errors: PHASE_NOT_FOUND (field phase_id, with the phases as candidates)
// when phaseID is not a phase of s.
func completePhasePrompt(s *specs.Spec, phaseID string) (string, error) {
	phase := s.Node(phaseID)
	if phase == nil || phase.Type != specs.TypePhase {
		return "", specs.PhaseNotFound(s, "phase_id", phaseID)
	}
	h := s.Header
	var b strings.Builder
	fmt.Fprintf(&b, "Complete phase %s %q of spec %s (%q).\n", phase.ID, phase.Title, h.SpecID, h.Title)
	fmt.Fprintf(&b, "Phase status: %s, %d of %d tasks completed.\n", phase.Status, phase.CompletedTasks, phase.TotalTasks)
	if d := phase.Description(); d != "" {
		fmt.Fprintf(&b, "Goal: %s\n", d)
	}
	if bl := specs.Blockers(s, phase.ID); len(bl) > 0 {
		fmt.Fprintf(&b, "The phase waits on unfinished prerequisites: %s.\n", strings.Join(bl, ", "))
	}
	open, verify := phaseOpenWork(s, phase.ID)
	listTasks := fmt.Sprintf("task(action=\"list\", spec_id=%q)", h.SpecID)
	writeOpenTasks(&b, s, open, listTasks)
	writeOpenVerifies(&b, verify, listTasks)
	fmt.Fprintf(&b, `
To close the phase:
1. Finish each unfinished task: task(action="start", ...), do the work, task(action="complete", spec_id=%[1]q, task_id=<task>, completion_note=...).
2. Run each verify step's command (or check it by hand for a manual step) and record the result: verification(action="add", spec_id=%[1]q, verify_id=<verify>, result="PASSED"|"FAILED"|"PARTIAL", output=...); then complete it with task(action="complete", ...).
3. Journal what the phase decided or changed: journal(action="list-unjournaled", spec_id=%[1]q) lists completed nodes that still need an entry; add one with journal(action="add", spec_id=%[1]q, task_id=<task>, entry_type="decision", title=...).
4. Check the result: task(action="progress", spec_id=%[1]q, node_id=%[2]q) should show every task completed.
`, h.SpecID, phase.ID)
	return b.String(), nil
}

// phaseOpenWork are the work leaves of phase phaseID not completed yet,
// in execution order: its tasks (open) and its verify steps (verify).
func phaseOpenWork(s *specs.Spec, phaseID string) (open, verify []*specs.Node) {
	for n := range specs.ExecutionOrder(s, phaseID) {
		if !n.IsWorkLeaf() || n.Status == specs.StatusCompleted {
			continue
		}
		if n.Type == specs.TypeVerify {
			verify = append(verify, n)
		} else {
			open = append(open, n)
		}
	}
	return open, verify
}

// writeOpenTasks writes a phase's unfinished tasks, each with the
// prerequisites it waits on (listTasks pages through them all), or that
// every task is completed.
func writeOpenTasks(b *strings.Builder, s *specs.Spec, open []*specs.Node, listTasks string) {
	if len(open) == 0 {
		b.WriteString("\nEvery task of the phase is completed.\n")
		return
	}
	b.WriteString("\nUnfinished tasks, in execution order:\n")
	writeNodeList(b, open, listTasks, func(n *specs.Node) string {
		line := fmt.Sprintf("%s %q [%s]", n.ID, n.Title, n.Status)
		if bl := specs.Blockers(s, n.ID); len(bl) > 0 {
			line += " waiting on " + strings.Join(bl, ", ")
		}
		return line
	})
}

// writeOpenVerifies writes a phase's verify steps still to pass, each with
// its command and last result when it has them (listTasks pages through
// them all), or that none is left open.
func writeOpenVerifies(b *strings.Builder, verify []*specs.Node, listTasks string) {
	if len(verify) == 0 {
		b.WriteString("\nNo verify step is left open.\n")
		return
	}
	b.WriteString("\nVerify steps still to pass:\n")
	writeNodeList(b, verify, listTasks, func(n *specs.Node) string {
		line := fmt.Sprintf("%s %q [%s, %s]", n.ID, n.Title, n.VerificationType(), n.Status)
		if c := n.MetaString("command"); c != "" {
			line += " command: " + c
		}
		if r := n.MetaString("last_result"); r != "" {
			line += " last result: " + r
		}
		return line
	})
}

// reviewSpecPrompt is the review_spec text: the spec's intent, structure
// and state, what looks unfinished or risky, and the checks to run.
func reviewSpecPrompt(s *specs.Spec) string {
	h := s.Header
	var b strings.Builder
	fmt.Fprintf(&b, "Review the spec %s (%q) against its intent, and report what is missing, wrong or risky.\n", h.SpecID, h.Title)
	writeSpecIntro(&b, s)
	writeHeaderLists(&b, h)
	b.WriteString("\nPhases:\n")
	writePhases(&b, s)
	blocked, failed, unjournaled := reviewConcerns(s)
	writeNodeSection(&b, "Blocked", blocked, fmt.Sprintf("task(action=\"list-blocked\", spec_id=%q)", h.SpecID), func(n *specs.Node) string {
		return fmt.Sprintf("%s %q: %s", n.ID, n.Title, orDash(n.MetaString("blocker_description")))
	})
	writeNodeSection(&b, "Failed", failed, fmt.Sprintf("task(action=\"list\", spec_id=%q)", h.SpecID), func(n *specs.Node) string {
		return fmt.Sprintf("%s %q: %s", n.ID, n.Title, orDash(n.MetaString("failure_reason")))
	})
	writeNodeSection(&b, "Completed without a journal entry yet", unjournaled, fmt.Sprintf("journal(action=\"list-unjournaled\", spec_id=%q)", h.SpecID), func(n *specs.Node) string {
		return fmt.Sprintf("%s %q", n.ID, n.Title)
	})
	fmt.Fprintf(&b, `
Review checklist:
1. Does every phase serve the mission, and does every task have a clear description, acceptance criteria and (for implementation work) a file_path?
2. Are the dependencies right (nothing started before what it needs; nothing blocked for no reason)? task(action="check-deps", spec_id=%[1]q, task_id=<task>) and spec(action="analyze-deps", spec_id=%[1]q) help.
3. Does each phase end with verify steps that would catch a wrong result?
4. Run spec(action="validate", spec_id=%[1]q) and spec(action="completeness-check", spec_id=%[1]q); fix what they report (spec(action="fix", spec_id=%[1]q, dry_run=true) shows the automatic fixes first).
5. Record the review's conclusions: journal(action="add", spec_id=%[1]q, entry_type="note", title="Review", content=...).
`, h.SpecID)
	return b.String()
}

// reviewHeaderLists are the spec metadata lists review_spec shows, in
// order.
var reviewHeaderLists = []string{"assumptions", "constraints", "success_criteria", "open_questions"}

// writeHeaderLists writes each of the spec's reviewHeaderLists it has, under
// its name with spaces ("open questions:").
func writeHeaderLists(b *strings.Builder, h specs.Header) {
	for _, key := range reviewHeaderLists {
		if items := h.MetaStrings(key); len(items) > 0 {
			fmt.Fprintf(b, "\n%s:\n", strings.ReplaceAll(key, "_", " "))
			writeStrings(b, items)
		}
	}
}

// reviewConcerns are the nodes review_spec points at, in execution order:
// the blocked ones (the root aside), the failed ones, and the completed
// ones that still need a journal entry.
func reviewConcerns(s *specs.Spec) (blocked, failed, unjournaled []*specs.Node) {
	for n := range specs.ExecutionOrder(s, specs.RootID) {
		switch {
		case n.Status == specs.StatusBlocked && n.ID != specs.RootID:
			blocked = append(blocked, n)
		case n.Status == specs.StatusFailed:
			failed = append(failed, n)
		}
		if n.Status == specs.StatusCompleted && n.NeedsJournaling() {
			unjournaled = append(unjournaled, n)
		}
	}
	return blocked, failed, unjournaled
}

// writeNodeSection writes a titled writeNodeList of nodes, nothing when
// there is none.
func writeNodeSection(b *strings.Builder, title string, nodes []*specs.Node, more string, line func(*specs.Node) string) {
	if len(nodes) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	writeNodeList(b, nodes, more, line)
}

// writeSpecIntro writes the spec's mission, description, objectives and
// progress.
func writeSpecIntro(b *strings.Builder, s *specs.Spec) {
	h := s.Header
	if m := metaString(h.Metadata, "mission"); m != "" {
		fmt.Fprintf(b, "Mission: %s\n", m)
	}
	if d := metaString(h.Metadata, "description"); d != "" {
		fmt.Fprintf(b, "Description: %s\n", d)
	}
	if obj := h.MetaStrings("objectives"); len(obj) > 0 {
		b.WriteString("Objectives:\n")
		writeStrings(b, obj)
	}
	fmt.Fprintf(b, "State: lifecycle %s, status %s, %d of %d tasks completed (%d%%), version %d.\n",
		orDash(string(h.Lifecycle)), h.Status, h.CompletedTasks, h.TotalTasks, h.ProgressPercentage, h.Version)
}

// writePhases writes one line per phase (the first promptListMax).
func writePhases(b *strings.Builder, s *specs.Spec) {
	phases := specs.Phases(s)
	if len(phases) == 0 {
		fmt.Fprintf(b, "- none yet: add one with authoring(action=\"phase-add\", spec_id=%q, title=...)\n", s.Header.SpecID)
		return
	}
	writeNodeList(b, phases, fmt.Sprintf("task(action=\"progress\", spec_id=%q)", s.Header.SpecID), func(p *specs.Node) string {
		return fmt.Sprintf("%s %q [%s] %d/%d tasks", p.ID, p.Title, p.Status, p.CompletedTasks, p.TotalTasks)
	})
}

// writeTaskDetail writes a task's description, file and acceptance
// criteria, when it has them.
func writeTaskDetail(b *strings.Builder, n *specs.Node) {
	if d := n.Description(); d != "" {
		fmt.Fprintf(b, "  Description: %s\n", d)
	}
	if f := n.FilePath(); f != "" {
		fmt.Fprintf(b, "  File: %s\n", f)
	}
	if ac := n.MetaStrings("acceptance_criteria"); len(ac) > 0 {
		b.WriteString("  Acceptance criteria:\n")
		for i, c := range ac {
			if i == promptListMax {
				fmt.Fprintf(b, "  - … and %d more\n", len(ac)-i)
				break
			}
			fmt.Fprintf(b, "  - %s\n", c)
		}
	}
}

// writeNodeList writes one "- line" per node, the first promptListMax of
// them, then how many more there are and the call that lists them all.
func writeNodeList(b *strings.Builder, nodes []*specs.Node, more string, line func(*specs.Node) string) {
	for i, n := range nodes {
		if i == promptListMax {
			fmt.Fprintf(b, "- … and %d more (%s lists them)\n", len(nodes)-i, more)
			return
		}
		fmt.Fprintf(b, "- %s\n", line(n))
	}
}

func writeStrings(b *strings.Builder, items []string) {
	for i, s := range items {
		if i == promptListMax {
			fmt.Fprintf(b, "- … and %d more\n", len(items)-i)
			return
		}
		fmt.Fprintf(b, "- %s\n", s)
	}
}

func metaString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
