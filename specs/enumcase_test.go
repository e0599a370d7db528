package specs

import (
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestNestedEnumsAnyCase: enum values inside task inputs and metadata
// objects are stored in their canonical spelling whatever their case;
// unknown values are still refused.
func TestNestedEnumsAnyCase(t *testing.T) {
	s := twoPhases(t)
	id := must[string](t)(AddTask(s, "phase-1", TaskInput{Type: "Research", Title: "Look", Complexity: "High",
		TaskCategory: "Research", BlockingMode: "HARD", Metadata: map[string]any{"complexity": "LOW"}}))
	n := s.Node(id)
	if n.Type != TypeResearch || n.MetaString("complexity") != "high" || n.MetaString("task_category") != "research" || n.MetaString("blocking_mode") != "hard" {
		t.Errorf("add: type %s metadata %v", n.Type, n.Metadata)
	}
	res := must[PhaseResult](t)(AddPhaseBulk(s, PhaseInput{Title: "Bulk", MetadataDefaults: map[string]any{"task_category": "Implementation"}},
		[]TaskInput{{Type: "TASK", Title: "a", Complexity: "Medium"}, {Type: "Verify", Title: "check", VerificationType: "Run-Tests", Command: "go test"}}))
	a, v := s.Node(res.TaskIDs[0]), s.Node(res.VerifyIDs[0])
	if a.Type != TypeTask || a.MetaString("complexity") != "medium" || a.MetaString("task_category") != "implementation" {
		t.Errorf("bulk task: %s %v", a.Type, a.Metadata)
	}
	if v.Type != TypeVerify || v.MetaString("verification_type") != "run-tests" {
		t.Errorf("bulk verify: %s %v", v.Type, v.Metadata)
	}
	changed := must[[]string](t)(UpdateMetadata(s, res.TaskIDs[0], map[string]any{"complexity": "LOW", "task_category": "Refactoring"}))
	if len(changed) != 2 || s.Node(res.TaskIDs[0]).MetaString("complexity") != "low" || s.Node(res.TaskIDs[0]).MetaString("task_category") != "refactoring" {
		t.Errorf("update: %v %v", changed, s.Node(res.TaskIDs[0]).Metadata)
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"unknown complexity", func() error { _, err := AddTask(s, "phase-1", TaskInput{Title: "x", Complexity: "Huge"}); return err }()},
		{"unknown type", func() error { _, err := AddTask(s, "phase-1", TaskInput{Title: "x", Type: "Epic"}); return err }()},
		{"unknown metadata enum", func() error {
			_, err := UpdateMetadata(s, res.TaskIDs[0], map[string]any{"complexity": "Huge"})
			return err
		}()},
	} {
		mustCode(t, c.err, errcode.InvalidFormat)
	}
	mustNoViolations(t, s, "any-case enums")
}
