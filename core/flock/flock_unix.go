//go:build unix

package flock

import (
	"errors"
	"os"
	"syscall"
)

func (k Kind) how() int {
	if k == Shared {
		return syscall.LOCK_SH
	}
	return syscall.LOCK_EX
}

// Try takes a lock of kind k on f without waiting. It reports false (and no
// error) when another open file description holds a conflicting lock.
func Try(f *os.File, k Kind) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), k.how()|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// Wait takes a lock of kind k on f, blocking until the kernel grants it (a
// waiter is woken as soon as the holder lets go: no polling).
func Wait(f *os.File, k Kind) error {
	for {
		if err := syscall.Flock(int(f.Fd()), k.how()); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Release drops f's lock. Closing the descriptor is not enough while a
// memory mapping of the file is alive (it keeps the open file description).
func Release(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
