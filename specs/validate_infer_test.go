package specs

import "testing"

// TestInferTypeAndParent pins the id-based guesses the fixes use for a
// node's missing type and parent.
func TestInferTypeAndParent(t *testing.T) {
	d := &Document{Hierarchy: map[string]*Node{
		RootID: {ID: RootID}, "phase-1": {ID: "phase-1"}, "task-1-2": {ID: "task-1-2"},
		"": {ID: ""},
	}}
	cases := []struct {
		id     string
		typ    NodeType
		parent string
	}{
		{RootID, TypeSpec, ""},
		{"phase-3", TypePhase, RootID},
		{"verify-1-1", TypeVerify, "phase-1"},
		{"research-1-4", TypeResearch, "phase-1"},
		{"group-1-1", TypeGroup, "phase-1"},
		{"subtask-1-2-1", TypeSubtask, ""}, // its guess, subtask-1-2, does not exist
		{"task-1-2", TypeTask, "phase-1"},
		{"task-1-2-3", TypeSubtask, "task-1-2"},
		{"task-1-2-3-4", TypeSubtask, ""},
		{"task-x", TypeTask, ""},
		{"task-1", TypeTask, ""},
		{"task-2-1", TypeTask, ""},
		{"task-1-a", TypeTask, ""},
		{"item-1-2", "", "phase-1"},
		{"plain", "", ""},
	}
	for _, tc := range cases {
		if got := inferType(tc.id); got != tc.typ {
			t.Errorf("inferType(%q) = %q, want %q", tc.id, got, tc.typ)
		}
		if got := inferParent(d, tc.id, inferType(tc.id)); got != tc.parent {
			t.Errorf("inferParent(%q) = %q, want %q", tc.id, got, tc.parent)
		}
	}
	noRoot := &Document{Hierarchy: map[string]*Node{"phase-1": {ID: "phase-1"}}}
	if got := inferParent(noRoot, "phase-2", TypePhase); got != "" {
		t.Errorf("inferParent without a root = %q, want none", got)
	}
	if got := inferParent(d, "x-1", TypeGroup); got != "" {
		t.Errorf("inferParent(x-1) = %q, want none", got)
	}
}

// TestSpecRiskDiagnostics pins which metadata.risks entries Validate
// reports as INVALID_RISK.
func TestSpecRiskDiagnostics(t *testing.T) {
	risks := []any{
		map[string]any{"description": "ok", "likelihood": "low", "impact": "high"},
		map[string]any{"description": "only a description"},
		"not an object",
		map[string]any{"description": "  "},
		map[string]any{"description": "bad level", "impact": "huge"},
		map[string]any{"description": "nil level", "likelihood": nil},
	}
	doc := &Document{Metadata: map[string]any{"mission": "m", "risks": risks}}
	var got []string
	for _, dg := range Validate(doc).Diagnostics {
		if dg.Code == "INVALID_RISK" {
			got = append(got, dg.Location)
		}
	}
	want := []string{"metadata.risks[2]", "metadata.risks[3]", "metadata.risks[4]", "metadata.risks[5]"}
	if len(got) != len(want) {
		t.Fatalf("INVALID_RISK at %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("INVALID_RISK at %v, want %v", got, want)
		}
	}
}
