package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd/specd/core/store/storetest"
)

// processesWith returns the pids whose command line contains marker.
func processesWith(marker string) []string {
	var pids []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, filepath.Base(d))
		}
	}
	return pids
}

// TestVerificationExecuteLeavesNoEscapedChild: through the built server,
// a verification command whose children leave its process group (setsid,
// a double fork) leaves none of them running once the call has answered,
// whether the shell exited or the timeout killed it; test run likewise.
func TestVerificationExecuteLeavesNoEscapedChild(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to look for leftover processes")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid(1)")
	}
	db := storetest.Open(t).Path()
	flagOn := writeFlagFile(t, map[string]string{"verification_execute": "on"})
	on := stdioOnStore(t, db, protocols[1], "--enable-verification-execute", "--flags", flagOn)
	specID, _ := seedWorkSpec(t, on)
	for i, c := range []struct {
		name    string
		command string // %s is the marker sleep argument
		timeout bool
	}{
		{"setsid, shell exits", "setsid sleep %s & sleep 0.3; echo started", false},
		{"setsid, timeout", "setsid sleep %s & echo started; sleep 30", true},
		{"double fork, shell exits", "(sh -c 'sleep %s &' &) ; sleep 0.3; echo started", false},
		{"double fork, timeout", "(sh -c 'sleep %s &' &) ; echo started; sleep 30", true},
		{"setsid double fork, shell exits", "(setsid sh -c 'sleep %s &' &) ; sleep 0.3; echo started", false},
	} {
		marker := fmt.Sprintf("300.%d%d", os.Getpid(), 80+i) // a sleep argument no other process has
		taskOK(t, on, "task", map[string]any{"action": "update-metadata", "spec_id": specID, "task_id": "verify-1-1", "command": fmt.Sprintf(c.command, marker)})
		d := taskOK(t, on, "verification", map[string]any{"action": "execute", "spec_id": specID, "verify_id": "verify-1-1", "timeout_seconds": 2})
		if d["timed_out"] != c.timeout || !strings.Contains(d["output"].(string), "started") {
			t.Fatalf("%s: %v", c.name, d)
		}
		if left := processesWith("sleep\x00" + marker); len(left) > 0 {
			t.Errorf("%s: processes left running after the call answered: %s", c.name, strings.Join(left, ", "))
		}
	}
	// test run goes the same way: a make test rule that escapes.
	marker := fmt.Sprintf("300.%d89", os.Getpid())
	ws := filepath.Dir(filepath.Dir(db))
	must(t, os.WriteFile(filepath.Join(ws, "Makefile"), []byte("test:\n\t@setsid sleep "+marker+" & sleep 0.3; echo started\n"), 0o644))
	d := taskOK(t, on, "test", map[string]any{"action": "run"})
	if d["result"] != "PASSED" || !strings.Contains(d["output"].(string), "started") {
		t.Fatalf("test run: %v", d)
	}
	if left := processesWith("sleep\x00" + marker); len(left) > 0 {
		t.Errorf("test run: processes left running after the call answered: %s", strings.Join(left, ", "))
	}
}
