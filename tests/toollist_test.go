package tests

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// maxToolListBytes is the ceiling of tools/list with every tool (README "The
// tool list is lean"): the JSON of the tools array an agent carries in its
// context. The autonomy sessions (foundry's 31 session parameters on
// task and the review tool, about 2.5 KB even without descriptions or
// bounds) raised it from 20 000.
const maxToolListBytes = 23_000

// listTools is tools/list through c.
func listTools(t *testing.T, c *client.Client) []mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestToolListSize prints the size of tools/list with every tool (bytes and
// bytes/4 tokens, per tool: description, input and output schema) and fails
// above maxToolListBytes.
func TestToolListSize(t *testing.T) {
	t.Parallel()
	c, reg := inProcess(t, newDeps(t, true), protocols[0])
	listed := listTools(t, c)
	if len(listed) != len(reg.Tools()) {
		t.Fatalf("tools/list has %d tools, want all %d", len(listed), len(reg.Tools()))
	}
	all, err := json.Marshal(listed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed {
		raw, _ := json.Marshal(tool)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		t.Logf("%-13s %6d bytes (description %5d, inputSchema %5d, outputSchema %4d)",
			tool.Name, len(raw), len(tool.Description), len(m["inputSchema"]), len(m["outputSchema"]))
	}
	t.Logf("tools/list: %d tools, %d bytes ≈ %d tokens (ceiling %d bytes)", len(listed), len(all), len(all)/4, maxToolListBytes)
	if len(all) > maxToolListBytes {
		t.Fatalf("tools/list is %d bytes, over the %d-byte ceiling", len(all), maxToolListBytes)
	}
	ro := newDeps(t, true)
	ro.ReadOnly = true
	rc, _ := inProcess(t, ro, protocols[0])
	roList, _ := json.Marshal(listTools(t, rc))
	t.Logf("tools/list under --read-only: %d bytes ≈ %d tokens", len(roList), len(roList)/4)
}
