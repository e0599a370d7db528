package tests

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mark3labs/mcp-go/client"
)

// answerSchemas caches server(action="schema")'s answer_schema per tool and
// action, read once per test binary from the first client that asks.
var answerSchemas struct {
	sync.Mutex
	byTool map[string]map[string]*jsonschema.Resolved
}

// checkAnswerSchema validates a happy-path answer's data against the
// answer_schema its action publishes (when its answer is typed), so that a
// typed answer and the schema generated from it cannot drift apart (a
// field tagged omitempty that the old map always wrote, a type that
// marshals differently).
func checkAnswerSchema(t *testing.T, c *client.Client, tool, action string, data any) {
	t.Helper()
	answerSchemas.Lock()
	if answerSchemas.byTool == nil {
		answerSchemas.byTool = map[string]map[string]*jsonschema.Resolved{}
	}
	schemas, ok := answerSchemas.byTool[tool]
	if !ok {
		schemas = map[string]*jsonschema.Resolved{}
		env := call(t, c, "server", map[string]any{"action": "schema", "tool_name": tool})
		raw, _ := json.Marshal(env["data"])
		var desc struct {
			Actions []struct {
				Name         string             `json:"name"`
				AnswerSchema *jsonschema.Schema `json:"answer_schema"`
			} `json:"actions"`
		}
		if err := json.Unmarshal(raw, &desc); err != nil {
			answerSchemas.Unlock()
			t.Fatalf("server schema %s: %v", tool, err)
		}
		for _, a := range desc.Actions {
			if a.AnswerSchema == nil {
				continue
			}
			rs, err := a.AnswerSchema.Resolve(nil)
			if err != nil {
				answerSchemas.Unlock()
				t.Fatalf("%s %s: answer_schema does not resolve: %v", tool, a.Name, err)
			}
			schemas[a.Name] = rs
		}
		answerSchemas.byTool[tool] = schemas
	}
	answerSchemas.Unlock()
	rs := schemas[action]
	if rs == nil {
		return
	}
	if err := rs.Validate(data); err != nil {
		raw, _ := json.Marshal(data)
		t.Errorf("%s %s: answer does not match its answer_schema: %v\nanswer: %.2000s", tool, action, err, raw)
	}
}
