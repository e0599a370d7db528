package mcptool

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

func TestLegacyResult(t *testing.T) {
	call := core.NewCall("task", "list", time.Now, func() string { return "0196a0b0-0000-7000-8000-000000000001" })
	total := 3
	cases := []struct {
		name    string
		env     core.Envelope
		want    string
		isError bool
	}{
		{"success", call.Success(map[string]any{"spec_id": "s", "found": true}), `{"found":true,"spec_id":"s"}`, false},
		{"empty data", call.Success(nil), `{}`, false},
		{"paged", call.Success(map[string]any{"tasks": []any{"a"}}, core.WithPagination("c1", 1, &total)), `{"cursor":"c1","has_more":true,"tasks":["a"]}`, false},
		{"last page", call.Success(map[string]any{"tasks": []any{}}, core.WithPagination("", 1, nil)), `{"cursor":null,"has_more":false,"tasks":[]}`, false},
		{"failure", call.Failure(core.NewError(errcode.FeatureDisabled, "task reset-batch is off.", nil)), `{"error":"task reset-batch is off.","error_code":"FEATURE_DISABLED"}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := LegacyResult(c.env)
			if res.StructuredContent != nil || res.IsError != c.isError || len(res.Content) != 1 {
				t.Fatalf("%+v", res)
			}
			got := res.Content[0].(mcp.TextContent).Text
			var a, b any
			if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(c.want), &b) != nil {
				t.Fatalf("not JSON: %s", got)
			}
			ga, _ := json.Marshal(a)
			gb, _ := json.Marshal(b)
			if string(ga) != string(gb) {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}
