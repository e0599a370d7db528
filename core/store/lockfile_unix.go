//go:build unix

package store

import (
	"errors"
	"strings"
	"syscall"
)

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
