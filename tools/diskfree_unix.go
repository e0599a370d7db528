//go:build unix

package tools

import (
	"path/filepath"
	"syscall"
)

// freeDisk reports the bytes available to an unprivileged user on the file
// system holding path (or its nearest existing parent).
func freeDisk(path string) (uint64, bool) {
	for p := path; ; p = filepath.Dir(p) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err == nil {
			return uint64(st.Bavail) * uint64(st.Bsize), true
		}
		if filepath.Dir(p) == p {
			return 0, false
		}
	}
}
