//go:build !unix

package httpguard

import "io/fs"

// ownerOf has no owner to report off unix; ownership is not checked.
func ownerOf(fs.FileInfo) (uint32, bool) { return 0, false }

// trustedOwner is unused off unix.
func trustedOwner(uint32) bool { return true }

// serverUID is unused off unix.
func serverUID() int { return -1 }

// whoIs is unused off unix.
func whoIs(uint32) string { return "" }

// CheckKeysFolders checks nothing off unix: there is no owner or mode to
// compare with ssh's rule.
func CheckKeysFolders(string) error { return nil }

// checkKeysPath checks nothing off unix (see CheckKeysFolders).
func checkKeysPath(string, fs.FileInfo) error { return nil }
