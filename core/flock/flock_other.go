//go:build !unix

package flock

import "os"

// Try grants every lock at once: there is no flock here.
func Try(*os.File, Kind) (bool, error) { return true, nil }

// Wait grants every lock at once: there is no flock here.
func Wait(*os.File, Kind) error { return nil }

// Release does nothing: there is no flock here.
func Release(*os.File) error { return nil }
