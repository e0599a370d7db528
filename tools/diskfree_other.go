//go:build !unix

package tools

// freeDisk is not measured on this platform.
func freeDisk(string) (uint64, bool) { return 0, false }
