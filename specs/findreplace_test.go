package specs

import (
	"reflect"
	"strings"
	"testing"

	"github.com/specd/specd/core/errcode"
)

// TestFindReplaceRules pins each step of FindReplace: the spec's own fields,
// matches that change nothing, the title rule at spec level, the literal
// length rule, one entry per changed node, the sample cap and the scopes.
func TestFindReplaceRules(t *testing.T) {
	// build: a spec "Test spec" (description "Test description") with one
	// phase "Alpha" holding tasks; n extra tasks titled "x".
	build := func(t *testing.T, extra int) *Spec {
		t.Helper()
		s, err := NewSpec(NewSpecInput{Name: "Test spec", Mission: "test", Description: "Test description"}, testClock(), nil)
		noErr(t, err)
		p := must[PhaseResult](t)(AddPhase(s, PhaseInput{Title: "Alpha"}))
		id := must[string](t)(AddTask(s, p.PhaseID, TaskInput{Title: "old title"}))
		_, err = UpdateMetadata(s, id, map[string]any{"description": "old text"})
		noErr(t, err)
		for i := 0; i < extra; i++ {
			must[string](t)(AddTask(s, p.PhaseID, TaskInput{Title: "x"}))
		}
		return s
	}
	tests := []struct {
		name      string
		extra     int
		in        FindReplaceInput
		code      string // error code, "" for success
		want      FindReplaceResult
		title     string // the spec's title afterwards
		desc      string // the spec's description afterwards
		unchanged bool   // the document must stay byte-identical
	}{
		{
			name: "spec title and description",
			in:   FindReplaceInput{Find: "Test", Replace: "Demo"},
			want: FindReplaceResult{Replacements: 3, FieldsChanged: 3, NodesChanged: []string{"spec-root"}, Samples: []FindReplaceSample{
				{"", "title", "Test spec", "Demo spec"}, {"", "description", "Test description", "Demo description"},
				{"spec-root", "title", "Test spec", "Demo spec"},
			}},
			title: "Demo spec", desc: "Demo description",
		},
		{
			name:  "match that changes nothing is counted, not changed",
			in:    FindReplaceInput{Find: "old", Replace: "old"},
			want:  FindReplaceResult{Replacements: 2, NodesChanged: []string{}, Samples: []FindReplaceSample{}},
			title: "Test spec", desc: "Test description", unchanged: true,
		},
		{
			name: "node title and description listed once",
			in:   FindReplaceInput{Find: "old", Replace: "new"},
			want: FindReplaceResult{Replacements: 2, FieldsChanged: 2, NodesChanged: []string{"task-1-1"}, Samples: []FindReplaceSample{
				{"task-1-1", "title", "old title", "new title"}, {"task-1-1", "description", "old text", "new text"},
			}},
			title: "Test spec", desc: "Test description",
		},
		{
			name: "descriptions scope leaves titles",
			in:   FindReplaceInput{Find: "old", Replace: "new", Scope: "descriptions"},
			want: FindReplaceResult{Replacements: 1, FieldsChanged: 1, NodesChanged: []string{"task-1-1"}, Samples: []FindReplaceSample{
				{"task-1-1", "description", "old text", "new text"},
			}},
			title: "Test spec", desc: "Test description",
		},
		{
			name:  "samples stop at ten",
			extra: 12,
			in:    FindReplaceInput{Find: "x", Replace: "y", Scope: "titles"},
			want: FindReplaceResult{Replacements: 12, FieldsChanged: 12, NodesChanged: []string{
				"task-1-2", "task-1-3", "task-1-4", "task-1-5", "task-1-6", "task-1-7", "task-1-8", "task-1-9", "task-1-10", "task-1-11", "task-1-12", "task-1-13",
			}},
			title: "Test spec", desc: "Test description",
		},
		{
			name: "blanking the spec title is refused", in: FindReplaceInput{Find: "Test spec", Scope: "titles"},
			code: errcode.Validation, unchanged: true,
		},
		{
			name: "a long literal is a format error", in: FindReplaceInput{Find: strings.Repeat("a", 257)},
			code: errcode.InvalidFormat, unchanged: true,
		},
		{
			name: "ignore case: a long pattern is a format error", in: FindReplaceInput{Find: strings.Repeat("é", 257), IgnoreCase: true},
			code: errcode.InvalidFormat, unchanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := build(t, tt.extra)
			before := docJSON(t, s)
			res, err := FindReplace(s, tt.in)
			if tt.code != "" {
				e := mustCode(t, err, tt.code)
				if tt.code == errcode.Validation && !strings.Contains(e.Message, "the spec") {
					t.Errorf("message %q does not name the spec", e.Message)
				}
				if !reflect.DeepEqual(res, FindReplaceResult{NodesChanged: []string{}, Samples: []FindReplaceSample{}}) {
					t.Errorf("refused result %+v", res)
				}
			} else {
				noErr(t, err)
				if tt.want.Samples == nil { // the sample cap row: check the count only
					if len(res.Samples) != maxSamples {
						t.Errorf("%d samples, want %d", len(res.Samples), maxSamples)
					}
					res.Samples = nil
				}
				if !reflect.DeepEqual(res, tt.want) {
					t.Errorf("result\n got %+v\nwant %+v", res, tt.want)
				}
				if s.Header.Title != tt.title || s.Header.Metadata["description"] != tt.desc {
					t.Errorf("spec title %q description %v", s.Header.Title, s.Header.Metadata["description"])
				}
			}
			if tt.unchanged && docJSON(t, s) != before {
				t.Error("the document changed")
			}
			mustNoViolations(t, s, tt.name)
		})
	}
}
