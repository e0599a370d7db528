//go:build !unix

package store

import (
	"errors"
	"io/fs"
	"os"
)

// Without flock, the lock and waiting files are inert and bbolt's own file
// lock alone serialises processes.
const (
	lockExclusive = 2
	lockShared    = 1
)

func flockTry(*os.File, int) (bool, error) { return true, nil }
func flockWait(*os.File, int) error        { return nil }
func flockRelease(*os.File) error          { return nil }

func isNoSpace(err error) bool { return false }

func isReadOnly(err error) bool { return errors.Is(err, fs.ErrPermission) }
