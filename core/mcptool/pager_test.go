package mcptool

import (
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestPage covers the pager every paged action uses: default and given
// limits, a cursor that resumes after the last key, a cursor from another
// listing refused with a recovery that restarts this one.
func TestPage(t *testing.T) {
	restart := map[string]any{"action": "list", "spec_id": "s"}
	first, err := OpenPage(&Request{Args: Args{}}, "task", "list", "s", core.PageTasks, restart, "pending")
	if err != nil || first.After != "" || first.Limit != core.PageTasks.Default {
		t.Fatalf("first page: %+v %v", first, err)
	}
	if c := first.Cursor("task-1-3", false); c != "" {
		t.Fatalf("last page has a cursor %q", c)
	}
	next := first.Cursor("task-1-3", true)
	second, err := OpenPage(&Request{Args: Args{"cursor": next, "limit": float64(7)}}, "task", "list", "s", core.PageTasks, restart, "pending")
	if err != nil || second.After != "task-1-3" || second.Limit != 7 {
		t.Fatalf("second page: %+v %v", second, err)
	}
	// Same cursor, other filter: refused, and the recovery restarts the listing.
	_, err = OpenPage(&Request{Args: Args{"cursor": next}}, "task", "list", "s", core.PageTasks, restart, "completed")
	e := core.AsError(err)
	if e == nil || e.Code != errcode.InvalidCursor {
		t.Fatalf("cursor of another filter: %v", err)
	}
	p := e.Payload("r")
	rec, _ := p["recovery"].(map[string]any)
	if rec["suggested_tool"] != "task" || rec["suggested_args"].(map[string]any)["action"] != "list" {
		t.Fatalf("recovery %v", rec)
	}
	restart["action"] = "mutated"
	if _, args := second.Restart(); args["action"] != "list" {
		t.Fatalf("Restart shares the caller's map: %v", args)
	}
}

// TestPageNumbersAndContinue: AfterNumber reads a numeric key (0 on the
// first page) and refuses any other with the restart call; ContinueWith
// keeps the base call, the cursor and only the listed arguments given.
func TestPageNumbersAndContinue(t *testing.T) {
	restart := map[string]any{"action": "history", "spec_id": "s"}
	tests := []struct {
		name  string
		after string
		want  uint64
		code  string
	}{
		{"first page", "", 0, ""},
		{"a version", "42", 42, ""},
		{"not a number", "task-1", 0, errcode.InvalidCursor},
		{"negative", "-3", 0, errcode.InvalidCursor},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Page{After: tt.after, tool: "spec", restart: restart}
			n, err := p.AfterNumber()
			if e := core.AsError(err); n != tt.want || (e == nil) != (tt.code == "") || (e != nil && (e.Code != tt.code || e.Recovery == nil || e.Recovery.Tool != "spec")) {
				t.Fatalf("AfterNumber = %d, %v", n, err)
			}
		})
	}
	base := map[string]any{"action": "list", "spec_id": "s"}
	cont := ContinueWith("journal", base, Args{"limit": float64(5), "spec_id": "s", "other": true}, "task_id", "limit")
	tool, args := cont("c1")
	want := map[string]any{"action": "list", "spec_id": "s", "cursor": "c1", "limit": float64(5)}
	if tool != "journal" || len(args) != len(want) || args["cursor"] != "c1" || args["limit"] != float64(5) || args["action"] != "list" {
		t.Fatalf("ContinueWith = %s %v; want journal %v", tool, args, want)
	}
	if _, ok := base["cursor"]; ok {
		t.Fatalf("ContinueWith changed its base: %v", base)
	}
}

// TestAnswerSchema: a typed answer publishes its schema from the Go type.
func TestAnswerSchema(t *testing.T) {
	type row struct {
		ID     string `json:"task_id"`
		Status string `json:"status,omitempty"`
	}
	type answer struct {
		Rows  []row `json:"tasks"`
		Count int   `json:"count"`
	}
	s := AnswerSchema(answer{})
	if s == nil || s.Properties["tasks"] == nil || s.Properties["count"].Type != "integer" {
		t.Fatalf("schema %+v", s)
	}
	if items := s.Properties["tasks"].Items; items == nil || items.Properties["task_id"] == nil {
		t.Fatalf("items %+v", s.Properties["tasks"])
	}
	if AnswerSchema(nil) != nil {
		t.Fatal("nil answer has a schema")
	}
	// An embedded pointer struct is an optional part: its fields are not
	// required, at the top and inside list items.
	type outcome struct {
		ExitCode int `json:"exit_code"`
	}
	type withOutcome struct {
		Recorded bool `json:"recorded"`
		*outcome
	}
	type rows struct {
		Items []withOutcome `json:"items"`
	}
	for _, sc := range []*jsonschema.Schema{AnswerSchema(withOutcome{}), AnswerSchema(rows{}).Properties["items"].Items} {
		if !slices.Contains(sc.Required, "recorded") || slices.Contains(sc.Required, "exit_code") || sc.Properties["exit_code"] == nil {
			t.Fatalf("embedded pointer fields: required %v, properties %v", sc.Required, sc.Properties)
		}
	}
}
