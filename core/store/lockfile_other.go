//go:build !unix

package store

import (
	"errors"
	"io/fs"
)

func isNoSpace(err error) bool { return false }

func isReadOnly(err error) bool { return errors.Is(err, fs.ErrPermission) }
