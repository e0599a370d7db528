//go:build !unix

package workspacefs

import "os"

// openReadFlags opens for reading; FIFOs do not block an open here.
const openReadFlags = os.O_RDONLY
