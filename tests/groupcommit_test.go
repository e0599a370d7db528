package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestGroupCommitSurvivesKill9: 16 HTTP clients write at once to one
// server (so its commits are shared), 12 adding single tasks and 4 adding
// whole phases of 3 tasks (phase-add-bulk, one atomic change), a bounded
// number each; once 120 writes are acknowledged the server is killed with
// SIGKILL in mid-load. Opened again, the file passes `specd check`, every
// acknowledged task is there, and no change is there by half: every bulk
// phase that exists has all 3 of its tasks.
func TestGroupCommitSurvivesKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "specd.db")
	srv := startShared(t, nil, "--db", db, "--rate", "100000", "--rate-burst", "1000000")
	setup := srv.client(t, "")
	specID := taskOK(t, setup, "authoring", map[string]any{"action": "spec-create", "name": "kill nine"})["spec_id"].(string)
	phase := taskOK(t, setup, "authoring", map[string]any{"action": "phase-add", "spec_id": specID, "title": "load", "link_previous": false})["phase_id"].(string)

	const writers, bulkWriters, perWriter, killAfter, bulkSize = 16, 4, 25, 120, 3
	clients := make([]*client.Client, writers)
	for i := range clients {
		clients[i] = srv.client(t, "")
	}
	var (
		mu       sync.Mutex
		ackTasks = map[string]string{} // acknowledged task id → title
		ackBulks = map[string]int{}    // acknowledged bulk phase id → its task count
		acked    atomic.Int64
		killed   = make(chan struct{})
		killOnce sync.Once
		wg       sync.WaitGroup
	)
	kill := func() {
		killOnce.Do(func() {
			_ = srv.cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		})
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < perWriter; n++ {
				select {
				case <-killed:
					return
				default:
				}
				args := map[string]any{"action": "add", "spec_id": specID, "parent": phase, "title": fmt.Sprintf("w%d-%d", w, n)}
				tool := "task"
				if w < bulkWriters {
					tool = "authoring"
					var tasks []any
					for k := range bulkSize {
						tasks = append(tasks, map[string]any{"title": fmt.Sprintf("b%d-%d-%d", w, n, k)})
					}
					args = map[string]any{"action": "phase-add-bulk", "spec_id": specID, "phase": map[string]any{"title": fmt.Sprintf("bulk-%d-%d", w, n)}, "tasks": tasks}
				}
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = tool, args
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := clients[w].CallTool(ctx, req)
				cancel()
				if err != nil || res.IsError {
					continue // not acknowledged (the server died under it)
				}
				var env struct {
					Data struct {
						TaskID  string   `json:"task_id"`
						PhaseID string   `json:"phase_id"`
						TaskIDs []string `json:"task_ids"`
					} `json:"data"`
				}
				b, _ := json.Marshal(res.StructuredContent)
				if json.Unmarshal(b, &env) != nil {
					continue
				}
				mu.Lock()
				if w < bulkWriters {
					ackBulks[env.Data.PhaseID] = len(env.Data.TaskIDs)
					for k, id := range env.Data.TaskIDs {
						ackTasks[id] = fmt.Sprintf("b%d-%d-%d", w, n, k)
					}
				} else {
					ackTasks[env.Data.TaskID] = fmt.Sprintf("w%d-%d", w, n)
				}
				mu.Unlock()
				if acked.Add(1) >= killAfter {
					kill()
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-killed:
	default:
		t.Fatalf("all %d writes ended before the kill: only %d acknowledged", writers*perWriter, acked.Load())
	}
	select {
	case <-srv.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the killed server did not exit")
	}
	if len(ackBulks) == 0 || len(ackTasks) <= 3*len(ackBulks) {
		t.Fatalf("the load acknowledged %d bulk phases and %d tasks: it did not mix both kinds", len(ackBulks), len(ackTasks))
	}

	if out, err := exec.Command(specdBinary(t), "check", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("specd check after the kill: %v\n%s", err, out)
	}
	c := stdioOnStore(t, db, protocols[0])
	type task struct{ title, parent string }
	found := map[string]task{}
	cursor := ""
	for page := 0; ; page++ {
		args := map[string]any{"action": "list", "spec_id": specID, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := call(t, c, "task", args)
		if env["success"] != true {
			t.Fatalf("task list: %v", env["data"])
		}
		for _, it := range data(env)["tasks"].([]any) {
			m := it.(map[string]any)
			found[m["task_id"].(string)] = task{m["title"].(string), m["parent"].(string)}
		}
		p, _ := env["meta"].(map[string]any)["pagination"].(map[string]any)
		cursor, _ = p["cursor"].(string)
		if cursor == "" {
			break
		}
		if page > 100 {
			t.Fatal("task list pages never ended")
		}
	}
	for id, title := range ackTasks {
		if got, ok := found[id]; !ok || got.title != title {
			t.Errorf("acknowledged task %s (%s) after the kill: found %+v, %v", id, title, got, ok)
		}
	}
	perBulk := map[string]int{}
	for _, tk := range found {
		if strings.HasPrefix(tk.title, "b") {
			perBulk[tk.parent]++
		}
	}
	for ph, n := range perBulk {
		if n != bulkSize {
			t.Errorf("bulk phase %s holds %d of its %d tasks: half a change survived", ph, n, bulkSize)
		}
	}
	for ph := range ackBulks {
		if perBulk[ph] != bulkSize {
			t.Errorf("acknowledged bulk phase %s holds %d tasks, want %d", ph, perBulk[ph], bulkSize)
		}
	}
	t.Logf("acknowledged %d tasks (%d bulk phases); the file holds %d tasks after the kill", len(ackTasks), len(ackBulks), len(found))
}
