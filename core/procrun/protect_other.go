//go:build !linux

package procrun

// protectProcess does nothing where prctl is not available.
func protectProcess() error { return nil }
