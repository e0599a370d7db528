//go:build unix

package store

import (
	"os"
	"syscall"
)

// fileIno is the file's inode number (0 when the platform says nothing), so
// a file replaced by another (a restored backup) changes its stamp.
func fileIno(st os.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
