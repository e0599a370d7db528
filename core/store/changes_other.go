//go:build !unix

package store

import "os"

// fileIno is 0 where the platform has no inode numbers.
func fileIno(os.FileInfo) uint64 { return 0 }
