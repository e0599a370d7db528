package tools

// Happy-path examples of the task and verification tools, on the contract
// test's fresh fixture (see examples.go). Actions that need state a fresh
// fixture lacks (reopen and unblock need a finished or blocked task,
// remove-dependency an edge between placeholders, execute a server started
// with --enable-verification-execute) have no example and are covered by
// tools/task_test.go and tests/task_e2e_test.go.

var taskExamples = map[string]map[string]any{
	"next":            {"spec_id": "$spec_id", "claim": true},
	"prepare":         {"spec_id": "$spec_id"},
	"info":            {"spec_id": "$spec_id", "task_id": "$task_id"},
	"check-deps":      {"spec_id": "$spec_id", "task_id": "$task_id"},
	"start":           {"spec_id": "$spec_id", "task_id": "$task_id"},
	"complete":        {"spec_id": "$spec_id", "task_id": "$task_id", "completion_note": "done"},
	"update-status":   {"spec_id": "$spec_id", "task_id": "$task_id", "status": "in_progress"},
	"block":           {"spec_id": "$spec_id", "task_id": "$task_id", "reason": "waiting for review", "blocker_type": "resource", "ticket": "T-1"},
	"list-blocked":    {"spec_id": "$spec_id"},
	"add":             {"spec_id": "$spec_id", "parent": "$phase_id", "title": "Extra task", "file_path": "c.go", "task_category": "implementation"},
	"remove":          {"spec_id": "$spec_id", "task_id": "$task_id_2"},
	"move":            {"spec_id": "$spec_id", "task_id": "$task_id_2", "position": 0},
	"add-dependency":  {"spec_id": "$spec_id", "task_id": "$task_id", "target_id": "$task_id_2"},
	"add-requirement": {"spec_id": "$spec_id", "task_id": "$task_id", "text": "Handles empty input", "requirement_type": "acceptance"},
	"update-estimate": {"spec_id": "$spec_id", "task_id": "$task_id", "estimated_hours": 2, "complexity": "low"},
	"update-metadata": {"spec_id": "$spec_id", "task_id": "$task_id", "description": "Do a, carefully", "metadata": map[string]any{"owners": []any{"alice"}}},
	"metadata-batch":  {"spec_id": "$spec_id", "parent": "$phase_id", "node_type": "task", "updates": map[string]any{"owners": []any{"bob"}}},
	"progress":        {"spec_id": "$spec_id"},
	"list":            {"spec_id": "$spec_id", "limit": 10},
	"query":           {"spec_id": "$spec_id", "status": "pending"},
	"hierarchy":       {"spec_id": "$spec_id", "max_depth": 3},
	"prepare-batch":   {"spec_id": "$spec_id", "max_tasks": 2},
	"start-batch":     {"spec_id": "$spec_id", "task_ids": []any{"$task_id", "$task_id_2"}},
	"complete-batch":  {"spec_id": "$spec_id", "completions": []any{map[string]any{"task_id": "$task_id", "success": true, "note": "ok"}}},
	"reset-batch":     {"spec_id": "$spec_id", "threshold_hours": 1},
}

var verificationExamples = map[string]map[string]any{
	"add": {"spec_id": "$spec_id", "verify_id": "$verify_id", "result": "PASSED", "output": "ok  ./...", "notes": "all green"},
}
