//go:build linux

package procrun

import "golang.org/x/sys/unix"

// protectProcess marks this process non-dumpable (prctl PR_SET_DUMPABLE 0):
// no core dumps, and /proc/<pid>/environ, mem and maps are no longer
// readable by other processes of the same user — such as the commands
// verification execute runs, which could otherwise read the server's
// environment through /proc/$PPID/environ. Root (CAP_SYS_PTRACE) still can.
func protectProcess() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
