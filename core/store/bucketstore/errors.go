package bucketstore

import "github.com/specd/specd/core"

// AsStoreError passes coded errors (*core.Error, wrapped or not) through
// and hides the engine's own behind INTERNAL_ERROR.
func AsStoreError(err error) error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if asCore(err, &ce) {
		return ce
	}
	return core.Internal(err)
}

func asCore(err error, target **core.Error) bool {
	for e := err; e != nil; {
		if c, ok := e.(*core.Error); ok {
			*target = c
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}
