//go:build !unix

// Package diskspace measures the free space of the file system holding a
// path, for health's disk check and the STORE_FULL refusal before a write.
package diskspace

// Free is not measured on this platform: ok is always false.
func Free(string) (free uint64, ok bool) { return 0, false }
