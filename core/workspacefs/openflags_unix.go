//go:build unix

package workspacefs

import (
	"os"
	"syscall"
)

// openReadFlags opens for reading without blocking: opening a FIFO returns
// at once instead of waiting for a writer, and the handle's type is checked
// before anything is read.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK
