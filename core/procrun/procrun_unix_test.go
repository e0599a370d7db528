//go:build unix

package procrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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

// TestRunLeavesNoEscapedChild: children that leave the process group —
// setsid, or a double fork whose middle process exits — are killed when
// the call ends, whether the shell exits or the timeout kills it, and none
// is left running (or as a zombie of this process).
func TestRunLeavesNoEscapedChild(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to look for leftover processes")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid(1)")
	}
	tests := []struct {
		name    string
		command string // %s is the marker sleep argument
		timeout bool
	}{
		{"setsid, shell exits", "setsid sleep %s & echo started", false},
		{"setsid, timeout", "setsid sleep %s & echo started; sleep 30", true},
		{"double fork, shell exits", "(sh -c 'sleep %s &' &) ; echo started", false},
		{"double fork, timeout", "(sh -c 'sleep %s &' &) ; echo started; sleep 30", true},
		{"setsid double fork, shell exits", "(setsid sh -c 'sleep %s & sleep %[1]s' &) ; echo started", false},
		{"setsid double fork, timeout", "(setsid sh -c 'sleep %s & sleep %[1]s' &) ; echo started; sleep 30", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := fmt.Sprintf("300.%d%d", os.Getpid(), i) // a sleep argument no other process has
			command := fmt.Sprintf(tt.command, marker)
			timeout := 20 * time.Second
			if tt.timeout {
				timeout = time.Second
			}
			if !tt.timeout {
				// the escapee must be running before the shell exits
				command = strings.Replace(command, "echo started", "sleep 0.3; echo started", 1)
			}
			res := Run(context.Background(), command, t.TempDir(), timeout)
			if res.TimedOut != tt.timeout || res.Output != "started\n" {
				t.Fatalf("got %+v", res)
			}
			if left := processesWith("sleep\x00" + marker); len(left) > 0 {
				t.Fatalf("processes left running after the call returned: %s", strings.Join(left, ", "))
			}
			if z := zombieChildren(); len(z) > 0 {
				t.Fatalf("zombie children left unreaped: %s", strings.Join(z, ", "))
			}
		})
	}
}

// zombieChildren returns the pids of this process's children that have
// exited and not been reaped (Linux; empty elsewhere).
func zombieChildren() []string {
	var zombies []string
	files, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(b)) {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && bytes.HasPrefix(stat[i:], []byte(") Z")) {
				zombies = append(zombies, pid)
			}
		}
	}
	return zombies
}

// TestConcurrentRunsKeepEachOthersProcesses: the end of one call kills its
// own escaped children only, never those of a call still running.
func TestConcurrentRunsKeepEachOthersProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc to look for leftover processes")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid(1)")
	}
	long := fmt.Sprintf("300.%d71", os.Getpid())
	short := fmt.Sprintf("300.%d72", os.Getpid())
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	done := make(chan Result)
	go func() {
		// escapes, then waits until the test lets it finish
		done <- Run(context.Background(), "setsid sleep "+long+" & while [ ! -e release ]; do sleep 0.05; done; echo long", dir, 60*time.Second)
	}()
	for i := 0; len(processesWith("sleep\x00"+long)) == 0; i++ {
		if i == 1000 {
			t.Fatal("the long call's child never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := Run(context.Background(), "setsid sleep "+short+" & sleep 0.3; echo short", t.TempDir(), 20*time.Second)
	if res.Output != "short\n" {
		t.Fatalf("short call: %+v", res)
	}
	if left := processesWith("sleep\x00" + short); len(left) > 0 {
		t.Fatalf("the short call's child outlived it: %v", left)
	}
	if len(processesWith("sleep\x00"+long)) == 0 {
		t.Fatal("the short call's end killed the long call's child")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.Output != "long\n" {
		t.Fatalf("long call: %+v", res)
	}
	if left := processesWith("sleep\x00" + long); len(left) > 0 {
		t.Fatalf("the long call's child outlived it: %v", left)
	}
}

// BenchmarkRunTrue is the cost of one call of a command that does nothing:
// the fork and exec of sh plus, on Linux, the sweep for escaped children.
func BenchmarkRunTrue(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		if res := Run(context.Background(), "true", dir, 10*time.Second); res.ExitCode != 0 {
			b.Fatalf("%+v", res)
		}
	}
}
