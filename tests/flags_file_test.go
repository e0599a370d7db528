package tests

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// stdioProcess is the built binary serving stdio, started by the test so
// that it can read the process's memory and close its stdin.
type stdioProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	c      *client.Client
	exited chan error
}

// startStdio runs specd serve in workspace ws (its store under .specd).
func startStdio(t testing.TB, ws string, args ...string) *stdioProcess {
	t.Helper()
	return startStdioEnv(t, ws, nil, args...)
}

// startStdioEnv is startStdio with extra environment.
func startStdioEnv(t testing.TB, ws string, env []string, args ...string) *stdioProcess {
	t.Helper()
	p := &stdioProcess{stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	p.cmd = exec.Command(specdBinary(t), append([]string{"serve", "--db", filepath.Join(ws, ".specd", "specd.db"), "--log-level", "info"}, args...)...)
	p.cmd.Env = append(append(os.Environ(), "SPECD_WORKSPACE="+ws), env...)
	p.cmd.Stderr = p.stderr
	var err error
	p.stdin, err = p.cmd.StdinPipe()
	must(t, err)
	stdout, err := p.cmd.StdoutPipe()
	must(t, err)
	must(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		p.exited <- nil
	})
	p.c = client.NewClient(transport.NewIO(bufio.NewReader(stdout), p.stdin, io.NopCloser(bytes.NewReader(nil))), client.WithProtocolVersion(protocols[0]))
	initialize(t, p.c, protocols[0])
	return p
}

// rssMB is the process's resident memory (VmRSS) in MiB.
func (p *stdioProcess) rssMB(t testing.TB) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	must(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
	return 0
}

// TestFlagsFileReadLikeCallerFiles: while a server runs, .specd/flags.json
// replaced by a symbolic link to /dev/zero, by a FIFO and by a valid flag
// file over 1 MiB is refused each time: one warning each (the size one
// names the cap and the size, in the log and in health check), the last
// good flags stay in force, the server keeps answering with a bounded
// resident size; a later valid edit still applies; the server still exits
// when its stdin closes.
func TestFlagsFileReadLikeCallerFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the built binary")
	}
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".specd"), 0o755))
	file := filepath.Join(ws, ".specd", "flags.json")
	must(t, os.WriteFile(file, []byte(flagFile(nil, nil)), 0o644))
	p := startStdio(t, ws)
	batchGate := func() string {
		return errorCode(call(t, p.c, "task", map[string]any{"action": "reset-batch", "spec_id": "nope"}))
	}
	if got := batchGate(); got == "FEATURE_DISABLED" {
		t.Fatal("task_batch_operations is on in the file")
	}
	batchOff := flagFile(map[string]string{"task_batch_operations": "off"}, nil)
	big := strings.Replace(batchOff, "{", "{"+strings.Repeat(" ", 2<<20), 1) // valid JSON, 2 MiB
	tmp := filepath.Join(ws, ".specd", "next")
	cases := []struct {
		name  string
		place func()
		want  string // in the warning
	}{
		{"symlink to /dev/zero", func() { must(t, os.Symlink("/dev/zero", tmp)) }, "leads out of"},
		{"FIFO", func() { must(t, syscall.Mkfifo(tmp, 0o644)) }, "FIFO"},
		{"2 MiB file", func() { must(t, os.WriteFile(tmp, []byte(big), 0o644)) }, "over the 1048576-byte (1 MiB) cap"},
	}
	for _, tc := range cases {
		before := strings.Count(p.stderr.String(), "edit rejected")
		tc.place()
		must(t, os.Rename(tmp, file))
		waitUntil(t, tc.name+" refused", func() bool { return strings.Count(p.stderr.String(), "edit rejected") > before })
		time.Sleep(600 * time.Millisecond) // more polls see it: still one warning
		if n := strings.Count(p.stderr.String(), "edit rejected") - before; n != 1 || !strings.Contains(p.stderr.String(), tc.want) {
			t.Fatalf("%s: %d warnings, want one containing %q:\n%s", tc.name, n, tc.want, p.stderr)
		}
		hc := call(t, p.c, "health", map[string]any{"action": "check"})
		fl, _ := data(hc)["flags"].(map[string]any)
		if fl["provider"] != "file" || fl["state"] != "ready" {
			t.Fatalf("%s: health check flags %v", tc.name, fl)
		}
		if !strings.Contains(strings.Join(stringsOf(hc["meta"].(map[string]any)["warnings"]), " "), tc.want) ||
			!strings.Contains(strings.Join(warningCodes(hc), ","), "FLAG_FILE_REFUSED") {
			t.Fatalf("%s: health check warnings %v", tc.name, hc["meta"])
		}
		if got := batchGate(); got == "FEATURE_DISABLED" {
			t.Fatalf("%s: the last good flags were not kept", tc.name)
		}
		if rss := p.rssMB(t); rss > 200 {
			t.Fatalf("%s: server RSS %.0f MiB", tc.name, rss)
		}
	}
	if !strings.Contains(p.stderr.String(), "size_bytes="+strconv.Itoa(len(big))) || !strings.Contains(p.stderr.String(), "limit_bytes=1048576") {
		t.Fatalf("the size warning does not name the size and the cap:\n%s", p.stderr)
	}
	replaceFile(t, file, batchOff)
	waitUntil(t, "a valid edit to apply", func() bool { return batchGate() == "FEATURE_DISABLED" })
	if hc := call(t, p.c, "health", map[string]any{"action": "check"}); len(warningCodes(hc)) != 0 {
		t.Fatalf("health check still warns after a good edit: %v", hc["meta"])
	}
	must(t, p.stdin.Close())
	select {
	case <-p.exited:
		p.exited <- nil
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not exit on stdin EOF:\n%s", p.stderr)
	}
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// timeAfter is time.After in milliseconds.
func timeAfter(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }
