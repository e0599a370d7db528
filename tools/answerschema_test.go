package tools

import (
	"testing"

	"github.com/specd/specd/core/mcptool"
)

// TestEveryTypedAnswerHasASchema: an action that declares a typed answer
// publishes a schema for it (answerSchema returns nil, silently, for a type
// jsonschema cannot describe), with at least one property.
func TestEveryTypedAnswerHasASchema(t *testing.T) {
	d := testDeps()
	d.Specs = declaredOnly{} // the spec tools are declared; no handler runs
	reg := New(d)
	typed := 0
	for _, tool := range reg.Tools() {
		for _, a := range tool.Actions {
			if a.Answer == nil {
				continue
			}
			typed++
			s := mcptool.AnswerSchema(a.Answer)
			if s == nil || len(s.Properties) == 0 {
				t.Errorf("%s %s: answer %T has no schema (%+v)", tool.Name, a.Name, a.Answer, s)
			}
		}
	}
	if typed == 0 {
		t.Fatal("no action declares a typed answer")
	}
}

// declaredOnly is a SpecRepo whose methods are never called: it lets New
// declare the spec tools without a store.
type declaredOnly struct{ SpecRepo }
