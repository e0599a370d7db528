// Package workspacefs is the one way specd reads and writes files on a
// caller's behalf. A Dir wraps an os.Root opened on the workspace: every name
// is resolved by the kernel, one component at a time, beneath the workspace
// directory, so "..", absolute names and symbolic links that lead out of it
// fail however the tree changes during the call — there is no
// check-then-open window for a rename or a new symlink to slip through.
// Relative symbolic links that stay inside the workspace are followed;
// absolute symbolic links are refused (os.Root's rule).
//
// Every read opens the file without blocking (a FIFO cannot hold the call),
// checks the opened handle (never the name) is a regular file, honours the
// call's context between chunks and stops at the caller's byte cap.
//
// Errors are *core.Error values that name only workspace-relative paths (or
// the name the caller gave), never a server path:
//
//   - INVALID_FORMAT: the name is empty, holds a NUL, leads out of the
//     workspace (.., an absolute path elsewhere, a symlink out), names a FIFO,
//     device, socket or folder where a file is expected, a file where a
//     folder is expected, or a dangling symlink;
//   - NOT_FOUND: nothing exists at the name;
//   - PAYLOAD_TOO_LARGE: a file over the caller's cap (details.limit, bytes);
//   - UNAVAILABLE: the server has no workspace, or the disk is full or
//     read-only;
//   - INTERNAL_ERROR: anything else (the cause is logged, never sent).
//
// A context error (deadline, cancellation) is returned as is, so the
// dispatcher answers it as the call's deadline.
package workspacefs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/specd/specd/core"
	"github.com/specd/specd/core/errcode"
)

// Field is the argument name errors carry in details.field.
const Field = "path"

// readChunk is how much one read takes before the context is checked again.
const readChunk = 64 << 10

// Dir is an open workspace. It is safe for concurrent use; Close it when
// the call is done.
type Dir struct {
	root *os.Root
	// prefixes are the workspace as configured and with its symlinks
	// resolved: an absolute name under either is turned into a relative one
	// (lexically only — the kernel walk under root does the confining).
	prefixes []string
}

// Open opens the workspace directory. UNAVAILABLE when workspace is empty
// or cannot be opened as a directory.
func Open(workspace string) (*Dir, error) {
	if workspace == "" {
		return nil, core.NewError(errcode.Unavailable, "The server has no workspace configured.", nil).
			WithRemediation("Restart specd with --workspace set to the project root.")
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, core.NewError(errcode.Unavailable, "The workspace folder cannot be opened.", nil).
			WithRemediation("Restart specd with --workspace set to an existing project folder.").WithCause(err)
	}
	d := &Dir{root: root}
	if abs, err := filepath.Abs(workspace); err == nil {
		d.prefixes = append(d.prefixes, filepath.Clean(abs))
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			d.prefixes = append(d.prefixes, real)
		}
	}
	return d, nil
}

// Close releases the workspace handle.
func (d *Dir) Close() error { return d.root.Close() }

// Rel turns a caller's name into a clean name relative to the workspace:
// "." for the workspace itself. An absolute name is accepted when it lies
// lexically inside the workspace. INVALID_FORMAT for an empty name, a NUL,
// or a name that leaves the workspace lexically; the error shows only the
// name as given.
func (d *Dir) Rel(name string) (string, error) {
	given := name
	switch {
	case name == "":
		return "", invalid(given, "is empty", "Name a file or folder inside the workspace, relative to it (e.g. specs).")
	case strings.IndexByte(name, 0) >= 0:
		return "", invalid(given, "holds a NUL character", "Remove the NUL character from the path.")
	}
	if filepath.IsAbs(name) {
		clean := filepath.Clean(name)
		rel := ""
		for _, p := range d.prefixes {
			if r, err := filepath.Rel(p, clean); err == nil && !escapes(r) {
				rel = r
				break
			}
		}
		if rel == "" {
			return "", invalid(given, "is an absolute path outside the workspace", "Give the path relative to the workspace root (e.g. specs).")
		}
		return rel, nil
	}
	rel := filepath.Clean(name)
	if escapes(rel) {
		return "", invalid(given, "leads out of the workspace", "Give a path inside the workspace, relative to its root, without '..' leading out.")
	}
	return rel, nil
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

// Show renders a relative name for answers: slash-separated.
func Show(rel string) string { return filepath.ToSlash(rel) }

// Stat describes name, following symlinks that stay inside the workspace.
func (d *Dir) Stat(name string) (fs.FileInfo, error) {
	st, err := d.root.Stat(name)
	if err != nil {
		return nil, d.fail(name, err)
	}
	return st, nil
}

// ReadFile reads the regular file name, at most max bytes, checking ctx
// between chunks of 64 KB. The file is opened without blocking and its
// opened handle must be a regular file (INVALID_FORMAT otherwise, so a FIFO
// never holds the call); over max bytes is PAYLOAD_TOO_LARGE.
func (d *Dir) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, openReadFlags, 0)
	if err != nil {
		return nil, d.fail(name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, d.fail(name, err)
	}
	if err := wantRegular(name, st); err != nil {
		return nil, err
	}
	if st.Size() > max {
		return nil, tooLarge(name, max)
	}
	return d.readAll(ctx, f, name, max, st.Size())
}

// readAll reads f (the file name, of size bytes when opened) to its end in
// chunks of readChunk, checking ctx before each; PAYLOAD_TOO_LARGE as soon
// as it has read more than max bytes (the file grew).
func (d *Dir) readAll(ctx context.Context, f *os.File, name string, max, size int64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(size) + 1)
	chunk := make([]byte, readChunk)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(chunk)
		buf.Write(chunk[:n])
		if int64(buf.Len()) > max {
			return nil, tooLarge(name, max)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, d.fail(name, err)
		}
	}
	return buf.Bytes(), nil
}

// Entry is one directory entry found by Walk: Name is relative to the
// workspace; Type is the entry's own type (a symlink is reported as one,
// not followed).
type Entry struct {
	Name string
	Type fs.FileMode
}

// Walk lists dir and its subfolders depth-first in name order, calling fn
// for every entry except dir itself. fn returning fs.SkipDir for a folder
// skips it; another error stops the walk and is returned. Symbolic links
// are not descended. Every folder is opened without blocking and must be a
// folder once open; ctx is checked before each folder and each entry.
func (d *Dir) Walk(ctx context.Context, dir string, fn func(Entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := d.readDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := d.visit(ctx, filepath.Join(dir, e.Name()), e, fn); err != nil {
			return err
		}
	}
	return nil
}

// readDir lists the folder dir in name order. It is opened without
// blocking and must be a folder once open (INVALID_FORMAT otherwise).
func (d *Dir) readDir(dir string) ([]fs.DirEntry, error) {
	f, err := d.root.OpenFile(dir, openReadFlags, 0)
	if err != nil {
		return nil, d.fail(dir, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, d.fail(dir, err)
	}
	if !st.IsDir() {
		return nil, invalid(Show(dir), "is not a folder", "Name a folder inside the workspace.")
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, d.fail(dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

// visit calls fn for e, the entry name of a folder being walked, and walks
// into e when it is a folder fn neither skipped (fs.SkipDir) nor failed.
func (d *Dir) visit(ctx context.Context, name string, e fs.DirEntry, fn func(Entry) error) error {
	err := fn(Entry{Name: name, Type: e.Type()})
	if !e.IsDir() {
		return err
	}
	if errors.Is(err, fs.SkipDir) {
		return nil
	}
	if err != nil {
		return err
	}
	return d.Walk(ctx, name, fn)
}

// MkdirAll makes the folder name and any missing parents, inside the
// workspace. INVALID_FORMAT when name or a part of it is a file, a dangling
// symlink or a symlink out.
func (d *Dir) MkdirAll(name string) error {
	if err := d.root.MkdirAll(name, 0o755); err != nil {
		return d.fail(name, err)
	}
	st, err := d.root.Stat(name)
	if err != nil {
		return d.fail(name, err)
	}
	if !st.IsDir() {
		return invalid(Show(name), "is a file, not a folder", "Name a folder (existing or new) inside the workspace, not a file.")
	}
	return nil
}

// WriteFileAtomic writes data to name inside the workspace through a
// temporary file in the same folder and a rename, both under the
// workspace root, so a reader sees the old or the new file, never half of
// one. Missing parent folders are made. If name is a symlink, the link is
// replaced, never followed. INVALID_FORMAT when the folder leads out of the
// workspace or name is a folder.
func (d *Dir) WriteFileAtomic(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	parent := filepath.Dir(name)
	if err := d.MkdirAll(parent); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(parent, ".specd-tmp-"+hex.EncodeToString(rnd[:]))
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return d.fail(parent, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = d.root.Remove(tmp)
		}
	}()
	for off := 0; off < len(data); off += readChunk {
		if err := ctx.Err(); err != nil {
			f.Close()
			return err
		}
		if _, err := f.Write(data[off:min(off+readChunk, len(data))]); err != nil {
			f.Close()
			return d.fail(name, err)
		}
	}
	if err := f.Close(); err != nil {
		return d.fail(name, err)
	}
	if err := d.root.Rename(tmp, name); err != nil {
		return d.fail(name, err)
	}
	ok = true
	return nil
}

// RemoveFile removes the file (or symlink: the link itself) name; nothing
// there is not an error. A folder at name is INVALID_FORMAT and is left.
func (d *Dir) RemoveFile(name string) error {
	st, err := d.root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return d.fail(name, err)
	}
	if st.IsDir() {
		return invalid(Show(name), "is a folder, not a file", "Move the folder out of the way.")
	}
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.fail(name, err)
	}
	return nil
}

// CheckFolder reports an error when name exists and is not a folder inside
// the workspace (a file, a dangling symlink, a symlink out); nothing at name
// is fine. It is a courtesy check for clear answers before writing: the
// writes themselves stay confined whatever happens after it.
func (d *Dir) CheckFolder(name string) error {
	if _, err := d.root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return d.fail(name, err)
	}
	st, err := d.root.Stat(name)
	if err != nil {
		return d.fail(name, err)
	}
	if !st.IsDir() {
		return invalid(Show(name), "is a file, not a folder", "Move the file out of the way or name another folder.")
	}
	return nil
}

// maxDepth bounds the walk up from a folder in Within.
const maxDepth = 256

// Within reports the first of folders (names at the workspace's top, such
// as ".specd") that the clean relative name is or lies below, "" when
// none. It holds lexically, case-insensitively (".SPECD/x" on a
// case-insensitive disk is ".specd/x"), and as the kernel resolves name
// beneath the workspace: every existing prefix of name, symlinks followed
// as a write would follow them, and each folder above it up to the
// workspace is compared (os.SameFile) with each of folders that exists, so
// "out" where out is a symlink to .git/hooks is found too. A prefix that
// cannot be resolved is skipped: a write through it fails anyway.
func (d *Dir) Within(name string, folders ...string) string {
	parts := strings.Split(filepath.Clean(name), string(filepath.Separator))
	if i := slices.IndexFunc(folders, func(f string) bool { return strings.EqualFold(parts[0], f) }); i >= 0 {
		return folders[i]
	}
	top, err := d.root.Stat(".")
	if err != nil {
		return ""
	}
	infos, names := d.statExisting(folders)
	if len(infos) == 0 {
		return ""
	}
	for i := range parts {
		if j := d.climbTo(filepath.Join(parts[:i+1]...), top, infos); j >= 0 {
			return names[j]
		}
	}
	return ""
}

// statExisting returns the file infos of those of folders that exist, with
// their names.
func (d *Dir) statExisting(folders []string) (infos []fs.FileInfo, names []string) {
	for _, f := range folders {
		if st, err := d.root.Stat(f); err == nil {
			infos, names = append(infos, st), append(names, f)
		}
	}
	return infos, names
}

// climbTo walks up from cur, a prefix of a name, with ".." components
// (which os.Root resolves after the symlinks before them, not lexically),
// until it reaches the workspace's top (top), a path that does not
// resolve, or maxDepth steps; it returns the index of the first of infos
// the walk meets, -1 when none.
func (d *Dir) climbTo(cur string, top fs.FileInfo, infos []fs.FileInfo) int {
	for up := 0; up < maxDepth; up++ {
		st, err := d.root.Stat(cur)
		if err != nil || os.SameFile(st, top) {
			return -1
		}
		if j := slices.IndexFunc(infos, func(in fs.FileInfo) bool { return os.SameFile(st, in) }); j >= 0 {
			return j
		}
		cur += string(filepath.Separator) + ".."
	}
	return -1
}

func wantRegular(name string, st fs.FileInfo) error {
	m := st.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return invalid(Show(name), "is a folder, not a file", "Name a file inside the workspace.")
	default:
		return invalid(Show(name), "is not a regular file ("+kind(m)+")", "Name a regular file inside the workspace; FIFOs, devices and sockets are never read.")
	}
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a file"
}

func invalid(shown, why, remediation string) *core.Error {
	return core.NewError(errcode.InvalidFormat, fmt.Sprintf("path %s %s.", quote(shown), why),
		map[string]any{"field": Field, "constraint": "a regular file or folder inside the workspace", "received": shown}).
		WithRemediation(remediation)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func tooLarge(name string, max int64) *core.Error {
	return core.NewError(errcode.PayloadTooLarge, fmt.Sprintf("%s is larger than %d bytes.", quote(Show(name)), max),
		map[string]any{"field": Field, "constraint": "max bytes", "limit": max, "received": Show(name)}).
		WithRemediation("Split the file or pass a smaller one.")
}

// fail turns an error of an operation on name into the package's errors,
// keeping only name (relative) in what the caller sees. A cancelled or
// expired context is returned as it is; an error it does not know is
// INTERNAL.
func (d *Dir) fail(name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	shown := Show(name)
	var errno syscall.Errno
	errors.As(err, &errno)
	switch {
	case isEscape(err):
		return invalid(shown, "leads out of the workspace (through '..', an absolute symbolic link or a symbolic link pointing outside)",
			"Give a path inside the workspace; symbolic links are followed only when they are relative and stay inside it.")
	case errors.Is(err, fs.ErrNotExist):
		return d.notFound(name)
	case errno == syscall.ENOTDIR || errno == syscall.EEXIST:
		return d.notAFolder(name)
	case errno == syscall.ENXIO || errno == syscall.ENODEV:
		return d.notRegular(name)
	case errnoInvalid[errno].why != "":
		return invalid(shown, errnoInvalid[errno].why, errnoInvalid[errno].remediation)
	case errors.Is(err, fs.ErrPermission):
		return invalid(shown, "may not be accessed by the server (permission denied)", "Change the file's permissions or name another path.")
	case errnoUnavailable[errno].message != "":
		u := errnoUnavailable[errno]
		return core.NewError(errcode.Unavailable, u.message, map[string]any{"field": Field, "received": shown}).
			WithRemediation(u.remediation).WithCause(err)
	}
	return core.Internal(err)
}

// errnoInvalid are the INVALID_FORMAT refusals of the error numbers that
// say all there is to say about the path.
var errnoInvalid = map[syscall.Errno]struct{ why, remediation string }{
	syscall.EISDIR:       {"is a folder, not a file", "Name a file, or move the folder out of the way."},
	syscall.ELOOP:        {"goes through too many symbolic links", "Fix the symbolic link loop or name another path."},
	syscall.ENAMETOOLONG: {"is too long", "Use a shorter path."},
}

// errnoUnavailable are the UNAVAILABLE answers of a disk that cannot take
// a write.
var errnoUnavailable = map[syscall.Errno]struct{ message, remediation string }{
	syscall.ENOSPC: {"The disk holding the workspace is full.", "Free disk space, then retry."},
	syscall.EROFS:  {"The workspace is on a read-only file system.", "Name a folder on a writable file system inside the workspace."},
}

// dangling is the refusal of name when it is a symbolic link (whose target
// then does not exist, or the operation would have followed it); nil when
// it is not one.
func (d *Dir) dangling(name string) error {
	if st, err := d.root.Lstat(name); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return invalid(Show(name), "is a symbolic link whose target does not exist", "Fix or remove the dangling symbolic link, or name another path.")
	}
	return nil
}

// notFound is NOT_FOUND for name, or the dangling-link refusal when name is
// a symbolic link.
func (d *Dir) notFound(name string) error {
	if err := d.dangling(name); err != nil {
		return err
	}
	return core.NewError(errcode.NotFound, fmt.Sprintf("Nothing at %s in the workspace.", quote(Show(name))),
		map[string]any{"field": Field, "received": Show(name)}).
		WithRemediation("Check the path: it is relative to the workspace root.")
}

// notAFolder refuses name, met where a folder was needed (ENOTDIR,
// EEXIST): a dangling symbolic link, or a file.
func (d *Dir) notAFolder(name string) error {
	if err := d.dangling(name); err != nil {
		return err
	}
	return invalid(Show(name), "is (or goes through) a file where a folder is needed", "Name a folder (existing or new) inside the workspace, not a file.")
}

// notRegular refuses name, a socket or a device without a driver (ENXIO,
// ENODEV), saying what it is when it can still be seen.
func (d *Dir) notRegular(name string) error {
	if st, err := d.root.Stat(name); err == nil {
		if werr := wantRegular(name, st); werr != nil {
			return werr
		}
	}
	return invalid(Show(name), "is not a regular file", "Name a regular file inside the workspace; FIFOs, devices and sockets are never read.")
}

// isEscape reports os.Root's "path escapes from parent" refusal, which the
// os package does not export as a value.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}
