package tools

import (
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestTaskAnswersPublishSchemas: every task and verification action
// declares its typed answer, and the schema generated from it names the
// fields the answer carries, embedded parts (Written, NextTask, …)
// included.
func TestTaskAnswersPublishSchemas(t *testing.T) {
	tool := taskTool(&Deps{})
	for _, a := range tool.Actions {
		if a.Answer == nil {
			t.Errorf("task %s declares no answer", a.Name)
			continue
		}
		if answerSchema(a.Answer) == nil {
			t.Errorf("task %s: no schema for %T", a.Name, a.Answer)
		}
	}
	props := func(action string, path ...string) []string {
		a, _ := tool.action(action)
		s := answerSchema(a.Answer)
		for _, p := range path {
			if s = s.Properties[p]; s != nil && s.Items != nil {
				s = s.Items
			}
			if s == nil {
				t.Fatalf("%s: no %v in the schema", action, path)
			}
		}
		return propNames(s)
	}
	for _, tc := range []struct {
		action string
		path   []string
		want   []string
	}{
		{"next", nil, []string{"spec_id", "version", "dry_run", "found", "claimed", "task_id", "metadata", "blocked", "failed", "next_call"}},
		{"prepare", nil, []string{"spec_id", "found", "spec_complete", "task", "dependencies", "context", "hints", "blocked"}},
		{"hierarchy", []string{"nodes"}, []string{"task_id", "depth", "child_count", "metadata", "dependencies"}},
		{"list", []string{"tasks"}, []string{"task_id", "title", "type", "status", "parent", "file_path"}},
		{"check-deps", []string{"blocked_by"}, []string{"task_id", "blocking", "inherited_from"}},
		{"start", nil, []string{"spec_id", "version", "task_id", "from", "to", "status", "task", "progress", "phase"}},
	} {
		got := props(tc.action, tc.path...)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s %v: schema lacks %s (has %v)", tc.action, tc.path, w, got)
			}
		}
	}
}

func propNames(s *jsonschema.Schema) []string {
	var out []string
	for k := range s.Properties {
		out = append(out, k)
	}
	return out
}
