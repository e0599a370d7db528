package tools

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/specd/specd/core/mcptool"
)

// TestTaskAnswersPublishSchemas: every task and verification action
// declares its typed answer, and the schema generated from it names the
// fields the answer carries, embedded parts (Mutation, NextTask, …)
// included.
func TestTaskAnswersPublishSchemas(t *testing.T) {
	tool := taskTool(&Deps{})
	for _, a := range tool.Actions {
		if a.Answer == nil {
			t.Errorf("task %s declares no answer", a.Name)
			continue
		}
		if mcptool.AnswerSchema(a.Answer) == nil {
			t.Errorf("task %s: no schema for %T", a.Name, a.Answer)
		}
	}
	props := func(action string, path ...string) []string {
		a, _ := tool.Action(action)
		s := mcptool.AnswerSchema(a.Answer)
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

// TestTaskPagesShrinkToTheBudget: a typed task page over the token budget
// keeps a prefix of its nodes (content_fidelity partial, the rest named
// node:<id>), and its cursor resumes right after the last node kept, so
// following cursors still shows every node exactly once.
func TestTaskPagesShrinkToTheBudget(t *testing.T) {
	for _, action := range []string{"hierarchy", "list"} {
		t.Run(action, func(t *testing.T) {
			h := newTaskHarness(t)
			h.d.TokenBudget = map[string]int{"hierarchy": 900, "list": 400}[action]
			h.reg = New(h.d)
			key := map[string]string{"hierarchy": "nodes", "list": "tasks"}[action]
			var seen []string
			cursor, partial := "", false
			for page := 0; page < 50; page++ {
				args := map[string]any{"action": action, "limit": 100, "max_depth": 3, "include_metadata": true}
				if action == "list" {
					args = map[string]any{"action": action, "limit": 100}
				}
				if cursor != "" {
					args["cursor"] = cursor
				}
				env := h.call("s1", "task", args)
				if env["success"] != true {
					t.Fatalf("page %d: %s", page, compact(env))
				}
				meta := env["meta"].(map[string]any)
				if meta["content_fidelity"] == "partial" {
					partial = true
					dropped, _ := meta["dropped_content_ids"].([]any)
					if len(dropped) == 0 || !strings.HasPrefix(dropped[0].(string), "node:") {
						t.Fatalf("dropped %v", dropped)
					}
				}
				d := env["data"].(map[string]any)
				items := d[key].([]any)
				if int(d["count"].(float64)) != len(items) {
					t.Fatalf("count %v for %d items", d["count"], len(items))
				}
				for _, it := range items {
					seen = append(seen, it.(map[string]any)["task_id"].(string))
				}
				p, _ := meta["pagination"].(map[string]any)
				if c, _ := p["cursor"].(string); c != "" {
					cursor = c
					continue
				}
				break
			}
			if !partial {
				t.Fatal("the budget never cut a page: make it smaller")
			}
			want := 14 // every node down to depth 3
			if action == "list" {
				want = 12
			}
			if len(seen) != want || len(uniq(seen)) != want {
				t.Errorf("pages showed %d nodes (%d distinct), want %d: %v", len(seen), len(uniq(seen)), want, seen)
			}
		})
	}
}

func uniq(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
}
