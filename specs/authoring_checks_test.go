package specs

import (
	"fmt"
	"strings"
	"testing"
)

// violationLines renders violations one per line (code field message
// received) for exact comparison.
func violationLines(vs []fieldViolation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s %s %q %#v\n", v.Code, v.Field, v.Message, v.Received)
	}
	return b.String()
}

// TestCheckMetadataUpdatePins pins checkMetadataUpdate's violations for
// every kind of key, valid and invalid, in their sorted-key order.
func TestCheckMetadataUpdatePins(t *testing.T) {
	cases := []struct {
		name    string
		updates map[string]any
		want    string
	}{
		{"valid", map[string]any{"title": "T", "task_category": "decision", "file_path": "a/b.go", "estimated_hours": 2.5,
			"actual_hours": 1, "owners": []string{"a"}, "acceptance_criteria": []any{"x"}, "free": "x", "complexity": nil}, ""},
		{"reserved", map[string]any{"status": "completed", "started_at": nil}, "@reserved"},
		{"bad", map[string]any{"title": "  ", "complexity": 3, "blocking_mode": "never", "file_path": "../x",
			"estimated_hours": "2", "actual_hours": -1.0, "owners": "me", "acceptance_criteria": []any{"a", 2}}, "@bad"},
		{"nontext", map[string]any{"title": 7, "file_path": 7, "verification_type": "tests", "estimated_hours": true}, "@nontext"},
	}
	for _, c := range cases {
		got := violationLines(checkMetadataUpdate(c.updates))
		if want := pinned(c.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

// TestValidateTaskInputPins pins validateTaskInput's violations, field by
// field, with and without a prefix.
func TestValidateTaskInputPins(t *testing.T) {
	h := -1.0
	long := strings.Repeat("x", 501)
	cases := []struct {
		name   string
		in     TaskInput
		prefix string
		want   string
	}{
		{"valid task", TaskInput{Title: "T", FilePath: "a/b.go", AcceptanceCriteria: []string{"ok"}}, "", ""},
		{"valid verify", TaskInput{Type: TypeVerify, Title: "T", Command: "go test", Expected: "pass", VerificationType: "run-tests"}, "", ""},
		{"valid research", TaskInput{Type: TypeResearch, Title: "T", BlockingMode: "hard", Query: "q"}, "", ""},
		{"everything wrong", TaskInput{Type: "epic", Title: " ", TaskCategory: "x", Complexity: "y", VerificationType: "z",
			BlockingMode: "w", EstimatedHours: &h, FilePath: "/abs", AcceptanceCriteria: []string{"ok", " "}}, "tasks[3].", "@everything"},
		{"long title and paths", TaskInput{Title: long, FilePath: "c:\\x"}, "", "@long"},
		{"fields of other types", TaskInput{Type: TypeSubtask, Title: "T", Command: "x", ResearchType: "y", FilePath: "a\\..\\b"}, "", "@other"},
		{"nul path", TaskInput{Title: "T", FilePath: "a\x00b"}, "", "@nul"},
		{"backslash root", TaskInput{Title: "T", FilePath: "\\a"}, "", "@backslash"},
	}
	for _, c := range cases {
		got := violationLines(validateTaskInput(c.in, c.prefix))
		if want := pinned(c.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
	}
}

// pinned is want, or the pinnedChecks entry it names ("@name").
func pinned(want string) string {
	if strings.HasPrefix(want, "@") {
		return pinnedChecks[want]
	}
	return want
}

// pinnedChecks are the expected renderings, as the code before its
// refactor produced them.
var pinnedChecks = map[string]string{
	"@reserved":   "VALIDATION_ERROR started_at \"started_at cannot be set directly (set by task start)\" <nil>\nVALIDATION_ERROR status \"status cannot be set directly (use task update-status)\" <nil>\n",
	"@bad":        "INVALID_FORMAT acceptance_criteria \"acceptance_criteria must be a list of strings\" \"[a 2]\"\nINVALID_FORMAT actual_hours \"actual_hours must be a number between 0 and 100000\" -1\nINVALID_FORMAT blocking_mode \"blocking_mode must be one of none, soft, hard\" \"never\"\nINVALID_FORMAT complexity \"complexity must be one of low, medium, high\" \"3\"\nINVALID_FORMAT estimated_hours \"estimated_hours must be a number\" \"2\"\nINVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"../x\"\nINVALID_FORMAT owners \"owners must be a list of strings\" \"me\"\nINVALID_FORMAT title \"title must be a non-blank string\" \"  \"\n",
	"@nontext":    "INVALID_FORMAT estimated_hours \"estimated_hours must be a number\" \"true\"\nINVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"7\"\nINVALID_FORMAT title \"title must be a non-blank string\" \"7\"\nINVALID_FORMAT verification_type \"verification_type must be one of run-tests, fidelity, manual\" \"tests\"\n",
	"@everything": "INVALID_FORMAT tasks[3].task_type \"task_type must be one of task, subtask, verify, research\" \"epic\"\nMISSING_REQUIRED tasks[3].title \"title is required and must not be blank\" <nil>\nINVALID_FORMAT tasks[3].task_category \"tasks[3].task_category must be one of investigation, implementation, refactoring, decision, research\" \"x\"\nINVALID_FORMAT tasks[3].complexity \"tasks[3].complexity must be one of low, medium, high\" \"y\"\nINVALID_FORMAT tasks[3].verification_type \"tasks[3].verification_type must be one of run-tests, fidelity, manual\" \"z\"\nINVALID_FORMAT tasks[3].blocking_mode \"tasks[3].blocking_mode must be one of none, soft, hard\" \"w\"\nINVALID_FORMAT tasks[3].estimated_hours \"tasks[3].estimated_hours must be a number between 0 and 100000\" -1\nINVALID_FORMAT tasks[3].file_path \"file_path must be a repo-relative path without '..'\" \"/abs\"\nINVALID_FORMAT tasks[3].acceptance_criteria[1] \"acceptance criteria must not be blank\" \"\"\nINVALID_FORMAT tasks[3].verification_type \"verification fields apply to verify nodes only\" \"epic\"\nINVALID_FORMAT tasks[3].blocking_mode \"research fields apply to research nodes only\" \"epic\"\n",
	"@long":       "INVALID_FORMAT title \"title must be at most 500 characters\" \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…\"\nINVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"c:\\\\x\"\n",
	"@other":      "INVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"a\\\\..\\\\b\"\nINVALID_FORMAT verification_type \"verification fields apply to verify nodes only\" \"subtask\"\nINVALID_FORMAT blocking_mode \"research fields apply to research nodes only\" \"subtask\"\n",
	"@nul":        "INVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"a\\x00b\"\n",
	"@backslash":  "INVALID_FORMAT file_path \"file_path must be a repo-relative path without '..'\" \"\\\\a\"\n",
}
