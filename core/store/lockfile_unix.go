//go:build unix

package store

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

const (
	lockExclusive = syscall.LOCK_EX
	lockShared    = syscall.LOCK_SH
)

// flockTry takes an flock of kind how on f without waiting; false means
// another open file holds a conflicting one.
func flockTry(f *os.File, how int) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}

// flockWait takes an flock of kind how on f, blocking until the kernel grants
// it (a waiter is woken as soon as the holder lets go: no polling).
func flockWait(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// flockRelease drops f's flock. Closing the descriptor is not enough when a
// memory mapping of the file is still alive (bbolt's, after a panic in Open):
// the lock belongs to the open file description, which the mapping keeps.
func flockRelease(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}

// Storage errors of the operating system, classified. bbolt wraps some
// (its file resize error) with %s, so the errno's text counts too.
func isNoSpace(err error) bool { return isErrno(err, syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG) }

func isReadOnly(err error) bool { return isErrno(err, syscall.EROFS, syscall.EACCES, syscall.EPERM) }

func isErrno(err error, errnos ...syscall.Errno) bool {
	for _, e := range errnos {
		if errors.Is(err, e) || strings.Contains(err.Error(), e.Error()) {
			return true
		}
	}
	return false
}
