//go:build !unix

package workspacefs

import "os"

// tryLock has no cross-process lock to take here (see Lock).
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }
