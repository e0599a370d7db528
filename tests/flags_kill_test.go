package tests

import (
	"os"
	"syscall"
	"testing"
)

// TestFlagsFileLeavesNoTempDirAfterKill9: a server with a flag file killed
// with SIGKILL (no shutdown runs) leaves nothing in its temp directory, and
// neither does the server started after it while it runs; that one still
// follows an edit of the file. The servers share a private TMPDIR, so what
// other tests and other programs put in /tmp does not count.
func TestFlagsFileLeavesNoTempDirAfterKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	file := writeFlagFile(t, map[string]string{"task_batch_operations": "off"})
	batchGate := func(p *stdioProcess) string {
		return errorCode(call(t, p.c, "task", map[string]any{"action": "reset-batch", "spec_id": "nope"}))
	}
	inTmp := func() []string {
		t.Helper()
		es, err := os.ReadDir(tmp)
		must(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	dead := startStdioEnv(t, t.TempDir(), env, "--flags", file)
	if got := batchGate(dead); got != "FEATURE_DISABLED" {
		t.Fatalf("the first server does not follow the flag file: reset-batch answered %q", got)
	}
	must(t, dead.cmd.Process.Signal(syscall.SIGKILL))
	<-dead.exited
	dead.exited <- nil // for its cleanup
	if got := inTmp(); len(got) != 0 {
		t.Fatalf("the server killed with SIGKILL left %v in its temp directory", got)
	}

	live := startStdioEnv(t, t.TempDir(), env, "--flags", file)
	if got := batchGate(live); got != "FEATURE_DISABLED" {
		t.Fatalf("the second server does not follow the flag file: reset-batch answered %q", got)
	}
	if got := inTmp(); len(got) != 0 {
		t.Fatalf("the running server keeps %v in its temp directory", got)
	}
	replaceFile(t, file, flagFile(nil, nil))
	waitUntil(t, "the edit to reach the running server", func() bool { return batchGate(live) != "FEATURE_DISABLED" })
	if got := inTmp(); len(got) != 0 {
		t.Fatalf("after an edit the running server keeps %v in its temp directory", got)
	}
}
