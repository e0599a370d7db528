package workspacefs

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/specd/specd/core/flock"
)

// lockRetry is how long Lock sleeps between attempts on a held lock.
const lockRetry = 5 * time.Millisecond

// Lock takes an exclusive lock on the file name inside the workspace
// (made, with its folders, when missing), waiting while another process —
// or another Lock of this one — holds it, until ctx ends (ctx's error).
// The lock is the kernel's advisory flock on unix: it ends when unlock is
// called or the process exits, however it exits. Elsewhere Lock serialises
// nothing across processes (it opens the file and returns). Errors as
// MkdirAll and the file's own, relative names only.
func (d *Dir) Lock(ctx context.Context, name string) (unlock func(), err error) {
	if err := d.MkdirAll(filepath.Dir(name)); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, d.fail(name, err)
	}
	for {
		ok, err := flock.Try(f, flock.Exclusive)
		if err != nil {
			f.Close()
			return nil, d.fail(name, err)
		}
		if ok {
			return func() { _ = flock.Release(f); _ = f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockRetry):
		}
	}
}
