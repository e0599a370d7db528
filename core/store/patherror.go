package store

import (
	"fmt"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// PathError is STORE_PATH_INVALID: the folder of the configured store file
// cannot be created (a missing parent on a read-only mount, a path through
// a regular file, no permission). Only the configuration can fix it, so
// the next call is server context, which shows the store path and where it
// was configured; retrying the same call cannot help.
func (s *Store) PathError(cause error) *core.Error {
	return core.NewError(errcode.StorePathInvalid,
		fmt.Sprintf("The folder of the store file %s cannot be created; no call that needs the store can run.", s.storeName()),
		map[string]any{"store": s.storeName()}).
		WithCause(cause).
		WithRecovery("server", map[string]any{"action": "context"}, nil)
}
