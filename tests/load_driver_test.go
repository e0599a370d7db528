package tests

import (
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/mark3labs/mcp-go/client"
)

// specdLoadBinary returns the load driver: $SPECD_LOAD_BIN or one built
// once from cmd/specd-load (see builtBinary).
func specdLoadBinary(t testing.TB) string { return loadBuild.get(t) }

// writesLine is the figures line of specd-load writes.
var writesLine = regexp.MustCompile(`writes: driver=(\S+) clients=4 specs=2 duration=1s acked=(\d+) .* errors=(\d+) missing=(\d+)\n`)

// TestLoadDriverWrites runs specd-load writes with each driver against
// the built server over HTTP: the run succeeds (every acknowledged id read
// back, no call failed), names its driver, and the tasks an mcp-go client
// then counts in the store are exactly the writes the drivers acknowledged.
func TestLoadDriverWrites(t *testing.T) {
	s := startShared(t, nil, "--rate", "100000", "--rate-burst", "1000000")
	load := specdLoadBinary(t)
	acked := 0
	for _, driver := range []string{"raw", "mcp-go"} {
		out, err := exec.Command(load, "-url", s.URL, "-clients", "4", "-specs", "2", "-duration", "1s", "-driver", driver, "writes").CombinedOutput()
		if err != nil {
			t.Fatalf("specd-load -driver %s: %v\n%s\n%s", driver, err, out, s.Log())
		}
		m := writesLine.FindSubmatch(out)
		if m == nil || string(m[1]) != driver || string(m[3]) != "0" || string(m[4]) != "0" {
			t.Fatalf("specd-load -driver %s printed:\n%s", driver, out)
		}
		n, _ := strconv.Atoi(string(m[2]))
		if n == 0 {
			t.Fatalf("specd-load -driver %s acknowledged no write:\n%s", driver, out)
		}
		acked += n
		c := s.client(t, "")
		list := call(t, c, "spec", map[string]any{"action": "list"})
		rows, _ := data(list)["specs"].([]any)
		tasks := 0
		for _, r := range rows {
			tasks += countTasks(t, c, r.(map[string]any)["spec_id"].(string))
		}
		if len(rows) != 2*map[string]int{"raw": 1, "mcp-go": 2}[driver] || tasks != acked {
			t.Fatalf("after -driver %s: %d specs holding %d tasks, want %d acknowledged", driver, len(rows), tasks, acked)
		}
	}
}

// countTasks is the number of task nodes (not verify steps) of a spec
// (task query, every page).
func countTasks(t testing.TB, c *client.Client, specID string) int {
	t.Helper()
	args := map[string]any{"action": "query", "spec_id": specID, "node_type": "task", "limit": 100}
	n := 0
	for {
		env := call(t, c, "task", args)
		if env["success"] != true {
			t.Fatalf("task query %s: %v", specID, env["error"])
		}
		tasks, _ := data(env)["tasks"].([]any)
		n += len(tasks)
		cur, _ := env["meta"].(map[string]any)["pagination"].(map[string]any)["cursor"].(string)
		if cur == "" || len(tasks) == 0 {
			return n
		}
		args["cursor"] = cur
	}
}
