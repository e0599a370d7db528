package tools

import "github.com/specd/specd/core/mcptool"

// foundryCategories are foundry-mcp's tool categories (server tools'
// category filter), by tool name; a tool not named is "general".
var foundryCategories = map[string]string{
	"spec": "specs", "authoring": "specs", "task": "tasks", "journal": "journal",
	"lifecycle": "lifecycle", "verification": "verification", "health": "health",
	"server": "server", "research": "research", "plan": "planning", "pr": "workflow",
	"error": "observability", "environment": "environment", "test": "testing", "review": "review",
}

// toolCategory is the category of the tool named name.
func toolCategory(name string) string {
	if c, ok := foundryCategories[name]; ok {
		return c
	}
	return "general"
}

// toolTags are t's tags: "unified" (every foundry tool has it) and "read"
// when every action it offers is read-only.
func toolTags(t *mcptool.Tool) []string {
	tags := []string{"unified"}
	if ro := t.Annotations().ReadOnlyHint; ro != nil && *ro {
		tags = append(tags, "read")
	}
	return tags
}
