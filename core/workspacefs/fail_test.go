package workspacefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// TestFailMapsEachError pins what fail answers for each error an operation
// can meet: code, message and remediation, and that the cause is kept for
// the server's log only where the refusal is the disk's.
func TestFailMapsEachError(t *testing.T) {
	ws, _ := tree(t)
	d := open(t, ws)
	pe := func(errno syscall.Errno) error { return &fs.PathError{Op: "open", Path: "x", Err: errno} }
	cases := []struct {
		name, path string
		err        error
		want       string // code: message | remediation
	}{
		{"escape", "link-out/x", fmt.Errorf("openat link-out: %w", errors.New("path escapes from parent")),
			`INVALID_FORMAT: path "link-out/x" leads out of the workspace (through '..', an absolute symbolic link or a symbolic link pointing outside). | Give a path inside the workspace; symbolic links are followed only when they are relative and stay inside it.`},
		{"missing", "nope.txt", pe(syscall.ENOENT),
			`NOT_FOUND: Nothing at "nope.txt" in the workspace. | Check the path: it is relative to the workspace root.`},
		{"missing through a dangling link", "dangling", pe(syscall.ENOENT),
			`INVALID_FORMAT: path "dangling" is a symbolic link whose target does not exist. | Fix or remove the dangling symbolic link, or name another path.`},
		{"not a folder", "doc.txt/x", pe(syscall.ENOTDIR),
			`INVALID_FORMAT: path "doc.txt/x" is (or goes through) a file where a folder is needed. | Name a folder (existing or new) inside the workspace, not a file.`},
		{"exists", "doc.txt", pe(syscall.EEXIST),
			`INVALID_FORMAT: path "doc.txt" is (or goes through) a file where a folder is needed. | Name a folder (existing or new) inside the workspace, not a file.`},
		{"exists as a dangling link", "dangling", pe(syscall.EEXIST),
			`INVALID_FORMAT: path "dangling" is a symbolic link whose target does not exist. | Fix or remove the dangling symbolic link, or name another path.`},
		{"a FIFO", "pipe.txt", pe(syscall.ENXIO),
			`INVALID_FORMAT: path "pipe.txt" is not a regular file (a FIFO). | Name a regular file inside the workspace; FIFOs, devices and sockets are never read.`},
		{"a device gone", "gone", pe(syscall.ENODEV),
			`INVALID_FORMAT: path "gone" is not a regular file. | Name a regular file inside the workspace; FIFOs, devices and sockets are never read.`},
		{"a folder", "sub", pe(syscall.EISDIR),
			`INVALID_FORMAT: path "sub" is a folder, not a file. | Name a file, or move the folder out of the way.`},
		{"a loop", "loop", pe(syscall.ELOOP),
			`INVALID_FORMAT: path "loop" goes through too many symbolic links. | Fix the symbolic link loop or name another path.`},
		{"too long", "long", pe(syscall.ENAMETOOLONG),
			`INVALID_FORMAT: path "long" is too long. | Use a shorter path.`},
		{"permission", "doc.txt", pe(syscall.EACCES),
			`INVALID_FORMAT: path "doc.txt" may not be accessed by the server (permission denied). | Change the file's permissions or name another path.`},
		{"full", "doc.txt", pe(syscall.ENOSPC),
			`UNAVAILABLE: The disk holding the workspace is full. | Free disk space, then retry.`},
		{"read-only", "doc.txt", pe(syscall.EROFS),
			`UNAVAILABLE: The workspace is on a read-only file system. | Name a folder on a writable file system inside the workspace.`},
		{"anything else", "doc.txt", pe(syscall.EIO), errcode.Internal + `: ` + core.Internal(pe(syscall.EIO)).Message + ` | `},
	}
	for _, c := range cases {
		err := d.fail(c.path, c.err)
		var e *core.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: fail = %v, not a *core.Error", c.name, err)
			continue
		}
		if got := e.Code + ": " + e.Message + " | " + e.Remediation; got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if kept := errors.Unwrap(e) != nil; kept != (e.Code != "INVALID_FORMAT" && e.Code != "NOT_FOUND") {
			t.Errorf("%s: cause kept = %v for %s", c.name, kept, e.Code)
		}
	}
	for _, ctxErr := range []error{context.Canceled, context.DeadlineExceeded} {
		if err := d.fail("doc.txt", ctxErr); err != ctxErr {
			t.Errorf("fail(%v) = %v, want it unchanged", ctxErr, err)
		}
	}
}
