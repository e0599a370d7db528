package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tests -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s changed; if intended, rerun with -update.\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func pretty(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestToolSchemasGolden snapshots every tool's input and output schema as seen
// through tools/list (one testdata/schemas/<tool>.json and one
// <tool>.output.json per tool), and asserts tools/list carries exactly those
// files.
func TestToolSchemasGolden(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	total := 0
	for _, tool := range res.Tools {
		raw, _ := json.Marshal(tool)
		total += len(raw)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		golden(t, filepath.Join("schemas", tool.Name+".json"), pretty(t, m["inputSchema"]))
		golden(t, filepath.Join("schemas", tool.Name+".output.json"), pretty(t, m["outputSchema"]))
		listed = append(listed, tool.Name+".json", tool.Name+".output.json")
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	sort.Strings(listed)
	sort.Strings(files)
	if !jsonEqual(listed, files) {
		t.Fatalf("testdata/schemas holds %v but tools/list has %v: remove stale files", files, listed)
	}
	t.Logf("tools/list: %d tools, %d bytes ≈ %d tokens", len(res.Tools), total, total/4)
}

// TestEnvelopesGolden snapshots representative envelopes with a fixed clock
// and deterministic ids.
func TestEnvelopesGolden(t *testing.T) {
	t.Parallel()
	c, _ := inProcess(t, newDeps(t, true), protocols[0])
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"success_server_schema", "server", map[string]any{"action": "schema", "tool_name": "health"}},
		{"success_server_tools_paged", "server", map[string]any{"action": "tools", "limit": 1}},
		{"error_unknown_action", "health", map[string]any{"action": "livenes"}},
		{"error_unknown_parameter", "server", map[string]any{"action": "schema", "tool_name": "health", "tool": "x"}},
		{"error_missing_required", "server", map[string]any{"action": "schema"}},
		{"error_invalid_format", "server", map[string]any{"action": "tools", "limit": "ten"}},
		{"error_not_found", "server", map[string]any{"action": "schema", "tool_name": "helth"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := call(t, c, tc.tool, tc.args)
			golden(t, filepath.Join("envelopes", tc.name+".json"), pretty(t, env))
		})
	}
}
