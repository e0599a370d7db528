//go:build unix

// Package diskspace measures the free space of the file system holding a
// path, for health's disk check and the STORE_FULL refusal before a write.
package diskspace

import (
	"path/filepath"
	"syscall"
)

// Free reports the bytes available to an unprivileged user on the file
// system holding path (or its nearest existing parent); ok is false when
// no parent can be measured.
func Free(path string) (free uint64, ok bool) {
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
