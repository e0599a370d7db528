//go:build unix

package tests

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used, for
// benchmarks that report CPU per operation (wall time there is mostly
// fsync waits).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
