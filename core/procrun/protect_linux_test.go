//go:build linux

package procrun

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	environChildEnv = "SPECD_TEST_ENVIRON_CHILD"
	environSecret   = "SPECD_TEST_SECRET=hunter2-c0ffee"
)

// TestVerifyCommandCannotReadServerEnviron runs a verification command that
// tries `cat /proc/$PPID/environ` (the server's environment, secrets
// included) and expects it to fail. Root reads any process's environ
// (CAP_SYS_PTRACE), so as root the test binary is copied and re-run as
// nobody (uid 65534) to play the server; unprivileged, it plays it itself.
func TestVerifyCommandCannotReadServerEnviron(t *testing.T) {
	if os.Getenv(environChildEnv) == "1" {
		res := Run(context.Background(), "cat /proc/$PPID/environ", "/", 10*time.Second)
		if res.ExitCode == 0 || strings.Contains(res.Output, "hunter2") {
			t.Fatalf("the command read the server's environment: exit %d, output %q", res.ExitCode, res.Output)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Setenv(environChildEnv, "1")
		t.Setenv("SPECD_TEST_SECRET", "hunter2-c0ffee")
		TestVerifyCommandCannotReadServerEnviron(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "specd-environ-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	copyExe := filepath.Join(dir, "specd.test")
	if err := copyFile(exe, copyExe); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyExe, "-test.run=^TestVerifyCommandCannotReadServerEnviron$", "-test.count=1", "-test.v")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), environChildEnv + "=1", environSecret}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Skipf("cannot run a process as uid 65534 here (%v); the check needs an unprivileged user", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestVerifyCommandCannotReadServerEnviron") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
