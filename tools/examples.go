package tools

// Happy-path examples the contract test calls for every action. "$spec_id",
// "$phase_id", "$task_id", "$task_id_2" and "$verify_id" refer to a fresh
// fixture spec with one phase of two tasks and its verify scaffold.

var authoringExamples = map[string]map[string]any{
	"spec-update-frontmatter": {"spec_id": "$spec_id", "key": "mission", "value": "Ship the contract"},
	"phase-add":               {"spec_id": "$spec_id", "title": "Second phase", "purpose": "more"},
	"phase-add-bulk": {"spec_id": "$spec_id", "phase": map[string]any{"title": "Bulk phase"},
		"tasks": []any{map[string]any{"title": "Bulk task", "task_category": "implementation", "file_path": "c.go"}}},
	"phase-remove":          {"spec_id": "$spec_id", "phase_id": "$phase_id", "force": true},
	"phase-move":            {"spec_id": "$spec_id", "phase_id": "$phase_id", "position": 0},
	"phase-update-metadata": {"spec_id": "$spec_id", "phase_id": "$phase_id", "metadata": map[string]any{"purpose": "why"}},
	"assumption-add":        {"spec_id": "$spec_id", "text": "Go 1.26 is available"},
	"assumption-list":       {"spec_id": "$spec_id"},
	"constraint-add":        {"spec_id": "$spec_id", "text": "No network at run time"},
	"constraint-list":       {"spec_id": "$spec_id"},
	"risk-add":              {"spec_id": "$spec_id", "description": "Lock contention", "likelihood": "medium", "impact": "high", "mitigation": "short transactions"},
	"risk-list":             {"spec_id": "$spec_id"},
	"question-add":          {"spec_id": "$spec_id", "text": "Which clients matter most?"},
	"question-list":         {"spec_id": "$spec_id"},
	"success-criterion-add": {"spec_id": "$spec_id", "text": "p50 under 1 ms"},
	"success-criteria-list": {"spec_id": "$spec_id"},
	"revision-add":          {"spec_id": "$spec_id", "changelog": "First review"},
	"spec-find-replace":     {"spec_id": "$spec_id", "find": "task", "replace": "job", "dry_run": true},
	"spec-rollback":         {"spec_id": "$spec_id", "version": 1},
}

var lifecycleExamples = map[string]map[string]any{
	"move":     {"spec_id": "$spec_id", "to_folder": "active"},
	"activate": {"spec_id": "$spec_id"},
	"complete": {"spec_id": "$spec_id", "force": true},
	"archive":  {"spec_id": "$spec_id"},
	"state":    {"spec_id": "$spec_id"},
}

var journalExamples = map[string]map[string]any{
	"add":              {"spec_id": "$spec_id", "title": "Chose bbolt", "entry_type": "decision", "content": "embedded, transactional"},
	"list":             {"spec_id": "$spec_id", "limit": 10},
	"list-unjournaled": {"spec_id": "$spec_id"},
}

var specExamples = map[string]map[string]any{
	"find":                {"query": "contract"},
	"get":                 {"spec_id": "$spec_id"},
	"list":                {"status": "active", "limit": 5},
	"validate":            {"spec_id": "$spec_id"},
	"fix":                 {"spec_id": "$spec_id", "dry_run": true},
	"schema":              {},
	"history":             {"spec_id": "$spec_id", "limit": 5},
	"export":              {"path": "exported-specs", "spec_id": "$spec_id"},
	"import":              {"path": "exported-specs", "dry_run": true},
	"stats":               {"spec_id": "$spec_id"},
	"analyze-deps":        {"spec_id": "$spec_id", "bottleneck_threshold": 1},
	"completeness-check":  {"spec_id": "$spec_id"},
	"duplicate-detection": {"spec_id": "$spec_id", "threshold": 0.5},
	"diff":                {"spec_id": "$spec_id"},
}
