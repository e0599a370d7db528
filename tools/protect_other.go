//go:build !linux

package tools

// protectProcess does nothing where prctl is not available.
func protectProcess() error { return nil }
