//go:build unix

package procrun

import (
	"os/exec"
	"syscall"
)

// killGroup starts the command in its own process group and makes
// cancellation kill the whole group, so children of sh die with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killGroupNow kills what is left of the command's process group once the
// shell has exited: background children it left behind.
func killGroupNow(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
