//go:build unix

package procrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestRunRecordsTheShellsStatusAndLeavesNoChild: a command that
// leaves a background child holding its output is recorded with the shell's
// own exit status (not a timeout), and the child is killed with its group.
func TestRunRecordsTheShellsStatusAndLeavesNoChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to look for leftover processes")
	}
	marker := fmt.Sprintf("77.7%d", os.Getpid()) // a sleep argument no other process has
	tests := []struct {
		name    string
		command string
		exit    int
		output  string
	}{
		{"background child", "sleep " + marker + " & echo started-bg", 0, "started-bg\n"},
		{"background child, failing shell", "sleep " + marker + " & echo started-bg; exit 3", 3, "started-bg\n"},
		{"grandchild in a subshell", "(sleep " + marker + " &) ; echo sub", 0, "sub\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.command, t.TempDir(), 20*time.Second)
			if res.TimedOut || res.ExitCode != tt.exit || res.Output != tt.output {
				t.Fatalf("got exit %d timed_out %v output %q; want exit %d output %q", res.ExitCode, res.TimedOut, res.Output, tt.exit, tt.output)
			}
			for i := 0; ; i++ {
				left := processesWith("sleep\x00" + marker)
				if len(left) == 0 {
					break
				}
				if i == 100 {
					t.Fatalf("processes left running: %s", strings.Join(left, ", "))
				}
				time.Sleep(20 * time.Millisecond) // SIGKILL is delivered asynchronously
			}
		})
	}
}

// TestRunTimeoutKillsTheGroup: past the timeout the shell and its
// children are killed and the result says so.
func TestRunTimeoutKillsTheGroup(t *testing.T) {
	res := Run(context.Background(), "echo before; sleep 30", t.TempDir(), 300*time.Millisecond)
	if !res.TimedOut || res.ExitCode != -1 || res.Output != "before\n" {
		t.Fatalf("%+v", res)
	}
}
