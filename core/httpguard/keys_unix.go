//go:build unix

package httpguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the symbolic links followed on a keys file's path, as
// the kernel's ELOOP does.
const maxLinks = 40

// ownerOf returns the uid that owns fi.
func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// trustedOwner reports whether uid may own the keys file or a folder on its
// path: the server's (effective) user or root.
func trustedOwner(uid uint32) bool { return uid == 0 || int64(uid) == int64(os.Geteuid()) }

// serverUID is the server's effective uid, as a chown argument.
func serverUID() int { return os.Geteuid() }

// whoIs names uid for a message: "uid 1000 (alice)", or "uid 1000" when
// it has no name.
func whoIs(uid uint32) string {
	if u, err := user.LookupId(fmt.Sprint(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

// modeBits is fi's permission bits with the sticky bit, as chmod writes
// them (1777).
func modeBits(fi fs.FileInfo) fs.FileMode {
	m := fi.Mode().Perm()
	if fi.Mode()&fs.ModeSticky != 0 {
		m |= 0o1000
	}
	return m
}

// CheckKeysFolders applies ssh's StrictModes rule to every folder the keys
// file's path goes through, from the root down, following symbolic links
// as the kernel does (a link's own folder is checked, then the folders of
// where it leads): each must be owned by the server's user or root and not
// writable by group or others, since whoever can write a folder can rename
// a keys file of their own over the entry. A sticky folder others can
// write (/tmp) passes: there only an entry's owner can replace it, and the
// entry below it must be the server user's or root's (a folder or the file
// by the rules here, a link by its own owner). The check ends without an
// error at the first name that does not exist (keys add creates the rest
// as the server's user); opening the file fails there anyway. The error
// names the folder or link, what is wrong and the fix.
func CheckKeysFolders(path string) error {
	_, err := walkKeysPath(path)
	return err
}

// checkKeysPath applies CheckKeysFolders to path and then requires its
// last entry, as the walk found it, to be opened, the file already open:
// the walk and the open resolve the path apart, and a file opened through
// a link that was gone (or pointed elsewhere) by the walk is not the one
// checked.
func checkKeysPath(path string, opened fs.FileInfo) error {
	found, err := walkKeysPath(path)
	if err != nil {
		return err
	}
	if found == nil || !os.SameFile(found, opened) {
		return fmt.Errorf("%s: the keys file opened is not the one its path leads to now (it changed while it was checked); refused. Fix: keep the keys file where nobody else can replace it or a link on its path, and start again", path)
	}
	return nil
}

// walkKeysPath is CheckKeysFolders; it also returns the Lstat of the
// path's last entry (nil when a name on the path does not exist).
func walkKeysPath(path string) (fs.FileInfo, error) {
	// Not filepath.Abs: its lexical Clean would take "link/.." as "",
	// where the kernel goes to the parent of the link's target.
	abs := path
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		abs = wd + "/" + path
	}
	w := &keysWalk{file: path}
	if err := w.enter("/"); err != nil {
		return nil, err
	}
	w.rest = components(abs)
	for len(w.rest) > 0 {
		done, err := w.step()
		if done || err != nil {
			return w.last, err
		}
	}
	return nil, nil
}

// components splits a path into its names, without empty ones and ".".
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// keysWalk resolves a keys file's path one name at a time.
type keysWalk struct {
	file  string      // the keys file's path as given, for messages
	dir   string      // the folder names are looked up in (no links in it)
	dirFI fs.FileInfo // its Lstat
	rest  []string    // the names still to resolve
	links int         // links followed so far
	last  fs.FileInfo // the Lstat of the path's last entry, once reached
}

// enter checks the folder dir and makes it the one names are looked up in.
func (w *keysWalk) enter(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if err := w.checkFolder(dir, fi); err != nil {
		return err
	}
	w.dir, w.dirFI = dir, fi
	return nil
}

// step resolves the next name; done is true once the keys file's own entry
// (or its absence) is reached.
func (w *keysWalk) step() (done bool, err error) {
	name := w.rest[0]
	w.rest = w.rest[1:]
	if name == ".." {
		return false, w.enter(filepath.Dir(w.dir))
	}
	entry := filepath.Join(w.dir, name)
	fi, err := os.Lstat(entry)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil // what keys add creates is the server user's, 0700
	case err != nil:
		return true, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return false, w.follow(entry, fi)
	case len(w.rest) == 0:
		w.last = fi
		return true, nil // the file itself: CheckKeysFile checks the opened file
	case !fi.IsDir():
		return true, fmt.Errorf("%s: %s is not a folder", w.file, entry)
	}
	return false, w.enter(entry)
}

// follow puts the target of the link entry in front of the names still to
// resolve. A link in a sticky folder others can write must be the server
// user's or root's: its owner could replace it.
func (w *keysWalk) follow(entry string, fi fs.FileInfo) error {
	if w.links++; w.links > maxLinks {
		return fmt.Errorf("%s: more than %d symbolic links on the keys file's path", w.file, maxLinks)
	}
	if uid, ok := ownerOf(fi); ok && !trustedOwner(uid) && w.dirFI.Mode().Perm()&0o022 != 0 {
		target, err := filepath.EvalSymlinks(entry)
		if err != nil {
			target = "the file it leads to"
		}
		return fmt.Errorf("%s: the link %s is owned by %s, not by root or the server's user (%s), and sits in the shared folder %s (mode %04o), so its owner can point it at a keys file of their own; refused. Fix: give the keys file's own path, %s",
			w.file, entry, whoIs(uid), whoIs(uint32(serverUID())), w.dir, modeBits(w.dirFI), target)
	}
	target, err := os.Readlink(entry)
	if err != nil {
		return err
	}
	if filepath.IsAbs(target) {
		if err := w.enter("/"); err != nil {
			return err
		}
	}
	w.rest = append(components(target), w.rest...)
	return nil
}

// checkFolder applies the rule of CheckKeysFolders to the folder dir.
func (w *keysWalk) checkFolder(dir string, fi fs.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && !trustedOwner(uid) {
		return fmt.Errorf("%s: the folder %s on the keys file's path is owned by %s, not by root or the server's user (%s), so its owner can replace the keys file; refused. Fix: chown %d %s, or keep the keys file in a folder of the server's user",
			w.file, dir, whoIs(uid), whoIs(uint32(serverUID())), serverUID(), dir)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("%s: the folder %s on the keys file's path has mode %04o, so others can write it and rename a keys file of their own over this one; refused. Fix: chmod go-w %s",
			w.file, dir, modeBits(fi), dir)
	}
	return nil
}
