package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestSpecResourcesAndCompletion(t *testing.T) {
	t.Parallel()
	connections(t, func(t *testing.T, c *client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		id := data(call(t, c, "authoring", map[string]any{"action": "spec-create", "name": "Resource demo", "template": "feature"}))["spec_id"].(string)
		call(t, c, "journal", map[string]any{"action": "add", "spec_id": id, "title": "hello"})

		read := func(uri string) map[string]any {
			t.Helper()
			req := mcp.ReadResourceRequest{}
			req.Params.URI = uri
			res, err := c.ReadResource(ctx, req)
			if err != nil {
				t.Fatalf("read %s: %v", uri, err)
			}
			text := res.Contents[0].(mcp.TextResourceContents).Text
			var m map[string]any
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatalf("%s is not JSON: %v", uri, err)
			}
			return m
		}
		list := read("specd://specs")
		if len(list["specs"].([]any)) != 1 {
			t.Fatalf("specs resource: %v", list)
		}
		doc := read("specd://specs/" + id)
		if doc["spec_id"] != id || doc["hierarchy"] == nil {
			t.Fatalf("spec resource: %v", doc)
		}
		j := read("specd://specs/" + id + "/journal")
		if len(j["entries"].([]any)) < 2 {
			t.Fatalf("journal resource: %v", j)
		}
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "specd://specs/nope-2026-01-01-001"
		if _, err := c.ReadResource(ctx, req); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("missing spec resource: %v", err)
		}
		comp := mcp.CompleteRequest{}
		comp.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: "specd://specs/{spec_id}"}
		comp.Params.Argument.Name = "spec_id"
		comp.Params.Argument.Value = "resource"
		got, err := c.Complete(ctx, comp)
		if err != nil {
			t.Fatalf("complete: %v", err)
		}
		if len(got.Completion.Values) != 1 || got.Completion.Values[0] != id {
			t.Fatalf("completion: %+v", got.Completion)
		}
	})
}
